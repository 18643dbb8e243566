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
