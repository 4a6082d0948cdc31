package status_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/status"
)

// The status page mounted under /ops/baton/ of an application's mux,
// behind the application's own authentication (here a fixed bearer token,
// for brevity; use your session or SSO middleware).
func Example() {
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	page, err := status.New(&status.Config{
		Backends: []status.Backend{{Name: "memory", Provider: provider}},
		Actions:  true, // force-release and reset buttons; off by default
	})
	if err != nil {
		log.Fatal(err)
	}
	requireOperator := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer operator-secret" {
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/ops/baton/", requireOperator(page))

	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, auth := range []string{"", "Bearer operator-secret"} {
		req, _ := http.NewRequest("GET", srv.URL+"/ops/baton/api/locks", nil)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	// Output:
	// 403 Forbidden
	// 200 OK
}
