package cluster

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/gate"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/testkit/tlstest"
)

// TestMutualTLS runs sweeps with mutual TLS on every API: the gate starts
// one through a follower (forwarded to the leader over TLS), the leader
// dispatches to workers and workers open sessions with each other. Then
// it checks who is refused: a client without a certificate, one with a
// certificate from another CA, one that does not trust the cluster's CA,
// and plain HTTP.
func TestMutualTLS(t *testing.T) {
	ca, rogue := tlstest.NewCA(t, "cluster"), tlstest.NewCA(t, "rogue")
	node := ca.Issue(t, "node")
	srvTLS, cliTLS, err := config.TLS{CertFile: node.CertFile, KeyFile: node.KeyFile, CAFile: ca.File, ClientAuth: true}.Configs()
	if err != nil {
		t.Fatal(err)
	}
	cl, ctx := startSecure(t, Options{Coordinators: 3, TLS: srvTLS, ClientTLS: cliTLS})
	if !strings.HasPrefix(cl.URL, "https://") {
		t.Fatalf("coordinator URL %s with TLS on", cl.URL)
	}
	var follower *Replica
	for _, r := range cl.Coords {
		if r != cl.Leader() {
			follower = r
		}
	}
	gateTLS := func(t *testing.T, c config.TLS) *tls.Config {
		t.Helper()
		tc, err := c.Client()
		if err != nil {
			t.Fatal(err)
		}
		return tc
	}
	var out, errOut strings.Builder
	o := gate.Options{Coordinator: follower.URL, Token: "t0ken", Request: api.SweepRequest{Mode: "quick"},
		TLS: gateTLS(t, config.TLS{CAFile: ca.File, CertFile: node.CertFile, KeyFile: node.KeyFile})}
	if code := gate.Run(ctx, o, &out, &errOut); code != gate.ExitHealthy {
		t.Fatalf("gate through a follower over mTLS: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	// The leader's tasks went over task streams, which TLS carries too.
	streams := 0
	for _, name := range cl.Names() {
		streams += cl.Worker(name).TaskStreams()
	}
	if streams == 0 {
		t.Error("no worker serves a task stream after a sweep over mTLS")
	}

	stranger, forged := ca.Issue(t, "stranger"), rogue.Issue(t, "forged")
	worker := "https://" + cl.Worker("node-01").APIAddr() + "/v1/inventory"
	// Under TLS 1.3 the server's refusal of a client certificate may reach
	// the client as the alert or as a broken connection, so only the
	// client's own verification failure is sure to be a usage error.
	clients := map[string]struct {
		tls  config.TLS
		gate int
	}{
		"no client certificate":               {config.TLS{CAFile: ca.File}, -1},
		"a certificate from another CA":       {config.TLS{CAFile: ca.File, CertFile: forged.CertFile, KeyFile: forged.KeyFile}, -1},
		"a client that does not trust the CA": {config.TLS{CAFile: rogue.File, CertFile: stranger.CertFile, KeyFile: stranger.KeyFile}, gate.ExitUsage},
	}
	for name, c := range clients {
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: gateTLS(t, c.tls)}}
		for _, url := range []string{worker, follower.URL + "/api/v1/status"} {
			if code, err := get(hc, url); err == nil {
				t.Errorf("%s: GET %s answered %d, want a refused handshake", name, url, code)
			}
		}
		o.TLS = hc.Transport.(*http.Transport).TLSClientConfig
		errOut.Reset()
		code := gate.Run(ctx, o, &out, &errOut)
		if code == gate.ExitHealthy || (c.gate >= 0 && code != c.gate) {
			t.Errorf("gate with %s: exit %d: %s", name, code, errOut.String())
		}
	}
	good := &http.Client{Transport: &http.Transport{TLSClientConfig: gateTLS(t, config.TLS{CAFile: ca.File, CertFile: stranger.CertFile, KeyFile: stranger.KeyFile})}}
	if code, err := get(good, worker); err != nil || code != http.StatusOK {
		t.Errorf("a client with the cluster's certificate and token: %d %v", code, err)
	}
	plain := strings.Replace(worker, "https://", "http://", 1)
	if code, err := get(http.DefaultClient, plain); err == nil && code == http.StatusOK {
		t.Errorf("plain HTTP to the worker API answered %d", code)
	}
}

func get(hc *http.Client, url string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer t0ken")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	hc.CloseIdleConnections()
	return resp.StatusCode, nil
}
