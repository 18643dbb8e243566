package config

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/testkit/tlstest"
)

func TestTLSFromEnv(t *testing.T) {
	ca := tlstest.NewCA(t, "rdmamesh")
	node := ca.Issue(t, "node")
	t.Setenv("RDMAMESH_TLS_CERT_FILE", node.CertFile)
	t.Setenv("RDMAMESH_TLS_KEY_FILE", node.KeyFile)
	t.Setenv("RDMAMESH_TLS_CA_FILE", ca.File)
	t.Setenv("RDMAMESH_TLS_CLIENT_AUTH", "true")
	c, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, cli, err := c.TLS.Configs()
	if err != nil {
		t.Fatal(err)
	}
	if srv.ClientAuth != tls.RequireAndVerifyClientCert || srv.ClientCAs == nil || srv.MinVersion < tls.VersionTLS12 {
		t.Errorf("server side: client auth %v, CAs %v, min version %x", srv.ClientAuth, srv.ClientCAs != nil, srv.MinVersion)
	}
	if len(cli.Certificates) != 1 || cli.RootCAs == nil || cli.MinVersion < tls.VersionTLS12 {
		t.Errorf("client side: %d certificates, roots %v, min version %x", len(cli.Certificates), cli.RootCAs != nil, cli.MinVersion)
	}
	if off, _, err := (TLS{}).Configs(); off != nil || err != nil {
		t.Errorf("TLS off: %v %v", off, err)
	}
}

// TestTLSBadFiles checks that a file that loads wrong is refused at Load,
// naming the key and what to do.
func TestTLSBadFiles(t *testing.T) {
	ca := tlstest.NewCA(t, "rdmamesh")
	node, other, expired := ca.Issue(t, "node"), ca.Issue(t, "other"), ca.IssueExpired(t, "old")
	cases := map[string]struct {
		env  map[string]string
		want string
	}{
		"key of another certificate": {map[string]string{"CERT_FILE": node.CertFile, "KEY_FILE": other.KeyFile}, "tls.cert_file"},
		"expired certificate":        {map[string]string{"CERT_FILE": expired.CertFile, "KEY_FILE": expired.KeyFile}, "issue a new certificate"},
		"CA file without a PEM":      {map[string]string{"CERT_FILE": node.CertFile, "KEY_FILE": node.KeyFile, "CA_FILE": node.KeyFile}, "tls.ca_file"},
		"unreadable key":             {map[string]string{"CERT_FILE": node.CertFile, "KEY_FILE": node.KeyFile + ".gone"}, "tls.key_file"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv("RDMAMESH_TLS_"+k, v)
			}
			_, err := Load("", nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}

func TestTLSClientOnly(t *testing.T) {
	ca := tlstest.NewCA(t, "rdmamesh")
	cli, err := TLS{CAFile: ca.File, ServerName: "coordinator"}.Client()
	if err != nil || len(cli.Certificates) != 0 || cli.ServerName != "coordinator" {
		t.Fatalf("CA only: %v %+v", err, cli)
	}
	if _, err := (TLS{CertFile: ca.File}).Client(); err == nil || !strings.Contains(err.Error(), "tls.key_file") {
		t.Fatalf("a certificate without its key: %v", err)
	}
}
