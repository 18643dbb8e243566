package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The live phase's judgement: latency-only suspects (class ok) never make
// a matrix unclean or stand for a fault; a failing suspect does.
func TestLiveState(t *testing.T) {
	var suspects string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/live":
			fmt.Fprint(w, `{"enabled":true,"plan_id":1,"members":4,"probing":4,"window":3,"cells":12}`)
		case "/api/v1/sweeps/live/matrix":
			fmt.Fprintf(w, `{"healthy":false,"suspects":[%s]}`, suspects)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	slow := `{"kind":"hca","node":"vm1","device":"rxe0","class":"ok","bad":3,"total":3}`
	lossy := `{"kind":"hca","node":"vm3","device":"rxe0","class":"retry-exceeded","bad":6,"total":6}`
	for _, c := range []struct {
		suspects, want string
		ok             bool
	}{
		{slow, "clean:4", true},
		{slow, "clean:5", false},
		{slow, "vm1", false},
		{slow + "," + lossy, "clean:4", false},
		{slow + "," + lossy, "vm3", true},
		{lossy, "vm2", false},
	} {
		suspects = c.suspects
		if status, ok := liveState(srv.URL, c.want); ok != c.ok {
			t.Errorf("%s with [%s]: %v, want %v (%s)", c.want, c.suspects, ok, c.ok, status)
		}
	}
}
