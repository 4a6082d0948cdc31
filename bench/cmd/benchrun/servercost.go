package main

import (
	"context"
	"slices"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// cmdStat is one line of INFO commandstats.
type cmdStat struct {
	calls, usec float64
}

// commandStats reads INFO commandstats and cpu: the calls of each command
// (commands run by scripts included) and, as the pseudo command "_cpu",
// the server process's CPU time, I/O included. On a server of its own
// they tell each contender's cost to the server.
func commandStats(c *goredis.Client) func(ctx context.Context) (map[string]cmdStat, error) {
	return func(ctx context.Context) (map[string]cmdStat, error) {
		info, err := c.Info(ctx, "commandstats", "cpu").Result()
		if err != nil {
			return nil, err
		}
		m := map[string]cmdStat{}
		for _, l := range strings.Split(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(l), ":")
			if name == "used_cpu_sys" || name == "used_cpu_user" {
				f, _ := strconv.ParseFloat(rest, 64)
				cpu := m["_cpu"]
				cpu.usec += f * 1e6
				m["_cpu"] = cpu
				continue
			}
			name, found := strings.CutPrefix(name, "cmdstat_")
			if !ok || !found {
				continue
			}
			var st cmdStat
			for _, kv := range strings.Split(rest, ",") {
				k, v, _ := strings.Cut(kv, "=")
				f, _ := strconv.ParseFloat(v, 64)
				switch k {
				case "calls":
					st.calls = f
				case "usec":
					st.usec = f
				}
			}
			m[name] = st
		}
		return m, nil
	}
}

// serverCost is the server's CPU time per operation between two
// readings, and the calls per operation of each command.
func serverCost(before, after map[string]cmdStat, ops int) (float64, map[string]float64) {
	calls := map[string]float64{}
	for name, a := range after {
		if name == "info" || name == "_cpu" {
			continue
		}
		if n := a.calls - before[name].calls; n > 0 {
			calls[name] = n / float64(ops)
		}
	}
	return (after["_cpu"].usec - before["_cpu"].usec) / float64(ops), calls
}

// callsString lists the commands per operation, e.g. "evalsha 2, set 1".
func callsString(calls map[string]float64) string {
	names := make([]string, 0, len(calls))
	for n, v := range calls {
		if v >= 0.05 {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + " " + strconv.FormatFloat(calls[n], 'f', -1, 64)
		if v := calls[n]; v != float64(int(v)) {
			parts[i] = n + " " + strconv.FormatFloat(v, 'f', 1, 64)
		}
	}
	return strings.Join(parts, ", ")
}
