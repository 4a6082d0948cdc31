package shedlock

import "testing"

func TestHasReturning(t *testing.T) {
	for v, want := range map[string]bool{
		"10.11.19-MariaDB-0+deb12u1": true,
		"10.5.0-MariaDB":             true,
		"11.4.2-MariaDB-log":         true,
		"5.5.5-10.6.18-MariaDB":      true,
		"10.4.34-MariaDB":            false, // INSERT … RETURNING came in 10.5
		"8.0.40":                     false,
		"8.4.3-commercial":           false,
		"MariaDB":                    false,
		"":                           false,
	} {
		if got := hasReturning(v); got != want {
			t.Errorf("hasReturning(%q) = %v; want %v", v, got, want)
		}
	}
}
