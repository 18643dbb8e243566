package main

import (
	"maps"
	"os"

	"github.com/spf13/pflag"

	"github.com/rdmamesh/rdmamesh/gate"
	"github.com/rdmamesh/rdmamesh/internal/config"
)

// tlsBinds maps the worker's and coordinator's TLS flags onto their keys;
// tls.server_name is left to the file and the environment.
var tlsBinds = map[string]string{"tls-cert-file": "tls.cert_file", "tls-key-file": "tls.key_file",
	"tls-ca-file": "tls.ca_file", "tls-client-auth": "tls.client_auth"}

func addTLSFlags(f *pflag.FlagSet) {
	f.String("tls-cert-file", "", "PEM certificate for the APIs and raft, also presented to peers (tls.cert_file; empty: no TLS)")
	f.String("tls-key-file", "", "PEM private key of --tls-cert-file (tls.key_file)")
	f.String("tls-ca-file", "", "PEM CA bundle verifying peers (tls.ca_file; empty: the system roots)")
	f.Bool("tls-client-auth", false, "mutual TLS: refuse API and raft clients without a certificate from --tls-ca-file (tls.client_auth)")
}

func withTLS(binds map[string]string) map[string]string {
	maps.Copy(binds, tlsBinds)
	return binds
}

// gateTLS is the gate's client side: its flags, else the RDMAMESH_TLS_*
// variables a worker or coordinator host already has; nil when neither.
type gateTLS struct{ caFile, certFile, keyFile, serverName string }

func (g *gateTLS) addFlags(f *pflag.FlagSet) {
	f.StringVar(&g.caFile, "ca-file", "", "PEM CA bundle verifying an https coordinator (default: $RDMAMESH_TLS_CA_FILE, else the system roots)")
	f.StringVar(&g.certFile, "cert-file", "", "PEM client certificate for a coordinator with tls.client_auth (default: $RDMAMESH_TLS_CERT_FILE)")
	f.StringVar(&g.keyFile, "key-file", "", "PEM private key of --cert-file (default: $RDMAMESH_TLS_KEY_FILE)")
	f.StringVar(&g.serverName, "server-name", "", "name to verify the coordinator's certificate against instead of the URL's host (default: $RDMAMESH_TLS_SERVER_NAME)")
}

func (g gateTLS) apply(o *gate.Options) error {
	t := config.TLS{CAFile: orEnv(g.caFile, "tls.ca_file"), CertFile: orEnv(g.certFile, "tls.cert_file"),
		KeyFile: orEnv(g.keyFile, "tls.key_file"), ServerName: orEnv(g.serverName, "tls.server_name")}
	if t == (config.TLS{}) {
		return nil
	}
	var err error
	o.TLS, err = t.Client()
	return err
}

func orEnv(flag, key string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(config.EnvName(key))
}
