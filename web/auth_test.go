package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAuth(t *testing.T) {
	cases := []struct {
		name      string
		openReads bool
		method    string
		path      string
		header    string
		want      int
	}{
		{"write without token", false, "POST", "/api/v1/sweeps", "", http.StatusUnauthorized},
		{"write with wrong token", false, "POST", "/api/v1/sweeps", "Bearer nope", http.StatusUnauthorized},
		{"write with token", false, "POST", "/api/v1/sweeps", "Bearer t0k", http.StatusAccepted},
		{"write without token, reads open", true, "POST", "/api/v1/sweeps", "", http.StatusUnauthorized},
		{"read without token", false, "GET", "/api/v1/sweeps", "", http.StatusUnauthorized},
		{"read without token, reads open", true, "GET", "/api/v1/sweeps", "", http.StatusOK},
		{"read with token", false, "GET", "/api/v1/nodes", "Bearer t0k", http.StatusOK},
		{"health is always open", false, "GET", "/healthz", "", http.StatusOK},
		{"UI shell is always open", false, "GET", "/", "", http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := New(newFake(), Options{Token: "t0k", OpenReads: tc.openReads}).Handler()
			var body *strings.Reader
			if tc.method == "POST" {
				body = strings.NewReader(`{"mode":"quick"}`)
			} else {
				body = strings.NewReader("")
			}
			req := httptest.NewRequest(tc.method, tc.path, body)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body.String())
			}
			if strings.Contains(rec.Body.String(), "t0k") {
				t.Fatal("the token leaked into a response")
			}
		})
	}
}

// Every read the UI makes is behind the same auth as the matrix.
func TestAuthCoversCompactAPI(t *testing.T) {
	closed := New(newFake(), Options{Token: "t0k"}).Handler()
	open := New(newFake(), Options{Token: "t0k", OpenReads: true}).Handler()
	for _, p := range []string{"/api/v1/sweeps/s1/grid", "/api/v1/sweeps/s1/layer", "/api/v1/sweeps/s1/pair?src=n1&dst=n2",
		"/api/v1/sweeps/s1/events", "/api/v1/diff?old=s1&new=s2", "/api/v1/sweeps/s1/matrix?format=csv", "/api/v1/status"} {
		if rec := do(t, closed, "GET", p, ""); rec.Code != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d", p, rec.Code)
		}
		for _, h := range []http.Handler{closed, open} {
			if rec := do(t, h, "GET", p, "", "Authorization", "Bearer t0k"); rec.Code != http.StatusOK {
				t.Errorf("%s with the token: %d %s", p, rec.Code, rec.Body)
			}
		}
		if rec := do(t, open, "GET", p, ""); rec.Code != http.StatusOK {
			t.Errorf("%s with open reads: %d", p, rec.Code)
		}
	}
}
