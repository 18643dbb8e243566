package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"
)

// TLS is the control plane's transport security. One certificate per
// process serves its APIs and is presented when it dials a peer, so with
// client_auth every certificate needs both the serverAuth and clientAuth
// extended key usages.
type TLS struct {
	CertFile   string `mapstructure:"cert_file"`
	KeyFile    string `mapstructure:"key_file"`
	CAFile     string `mapstructure:"ca_file"`     // verifies peers; empty = the system roots
	ClientAuth bool   `mapstructure:"client_auth"` // servers require a client certificate from ca_file
	ServerName string `mapstructure:"server_name"` // name clients verify instead of the dialled host
}

// Enabled reports whether the APIs and raft are served over TLS.
func (t TLS) Enabled() bool { return t.CertFile != "" }

// validate checks that the keys make sense together and, when they do,
// that the files load, so a bad certificate stops the process at start
// rather than at its first connection.
func (t TLS) validate(bad func(key, format string, a ...any)) {
	ok := true
	fail := func(key, msg string) { ok = false; bad(key, "%s", msg) }
	switch {
	case t.CertFile != "" && t.KeyFile == "":
		fail("tls.key_file", "must be set with tls.cert_file: the certificate's PEM private key")
	case t.CertFile == "" && t.KeyFile != "":
		fail("tls.cert_file", "must be set with tls.key_file: the PEM certificate of that key")
	case t.CertFile == "" && (t.CAFile != "" || t.ClientAuth || t.ServerName != ""):
		fail("tls.cert_file", "TLS is off without it, so tls.ca_file, tls.client_auth and tls.server_name do nothing: set tls.cert_file and tls.key_file, or unset the others")
	}
	if t.ClientAuth && t.CAFile == "" {
		fail("tls.ca_file", "tls.client_auth needs the CA bundle that signed the clients' certificates")
	}
	if !ok || !t.Enabled() {
		return
	}
	var fe *FieldError
	if _, _, err := t.Configs(); errors.As(err, &fe) {
		bad(fe.Key, "%s", fe.Msg)
	} else if err != nil {
		bad("tls", "%v", err)
	}
}

// Configs loads the files and returns the server and client sides; both are
// nil when TLS is off. Errors are *FieldError naming the key.
func (t TLS) Configs() (server, client *tls.Config, err error) {
	if !t.Enabled() {
		return nil, nil, nil
	}
	cert, err := loadPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, nil, err
	}
	pool, err := loadPool(t.CAFile)
	if err != nil {
		return nil, nil, err
	}
	server = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*cert}}
	if t.ClientAuth {
		server.ClientAuth, server.ClientCAs = tls.RequireAndVerifyClientCert, pool
	}
	return server, clientConfig(cert, pool, t.ServerName), nil
}

// Client is the client side alone, for a caller with no API of its own (the
// gate): the certificate is optional and needed only against client_auth.
func (t TLS) Client() (*tls.Config, error) {
	var cert *tls.Certificate
	if t.CertFile != "" || t.KeyFile != "" {
		var err error
		if cert, err = loadPair(t.CertFile, t.KeyFile); err != nil {
			return nil, err
		}
	}
	pool, err := loadPool(t.CAFile)
	if err != nil {
		return nil, err
	}
	return clientConfig(cert, pool, t.ServerName), nil
}

func clientConfig(cert *tls.Certificate, pool *x509.CertPool, serverName string) *tls.Config {
	// Resumption spares a leader the full handshake each time it reopens a
	// pooled connection to one of a thousand workers.
	c := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: serverName,
		ClientSessionCache: tls.NewLRUClientSessionCache(0)}
	if cert != nil {
		c.Certificates = []tls.Certificate{*cert}
	}
	return c
}

func loadPair(certFile, keyFile string) (*tls.Certificate, error) {
	switch {
	case certFile == "":
		return nil, &FieldError{Key: "tls.cert_file", Msg: "must be set with tls.key_file"}
	case keyFile == "":
		return nil, &FieldError{Key: "tls.key_file", Msg: "must be set with tls.cert_file"}
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, &FieldError{Key: "tls.cert_file", Msg: err.Error()}
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, &FieldError{Key: "tls.key_file", Msg: err.Error()}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, &FieldError{Key: "tls.cert_file", Msg: fmt.Sprintf("%s with tls.key_file %s: %v (want a PEM certificate and its own PEM private key)", certFile, keyFile, err)}
	}
	now := time.Now()
	if leaf := cert.Leaf; leaf != nil && (now.After(leaf.NotAfter) || now.Before(leaf.NotBefore)) {
		return nil, &FieldError{Key: "tls.cert_file", Msg: fmt.Sprintf("%s is valid from %s to %s, not now: issue a new certificate",
			certFile, leaf.NotBefore.Format(time.RFC3339), leaf.NotAfter.Format(time.RFC3339))}
	}
	return &cert, nil
}

// loadPool returns nil for no file, which crypto/tls reads as the system
// roots.
func loadPool(caFile string) (*x509.CertPool, error) {
	if caFile == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(caFile)
	if err != nil {
		return nil, &FieldError{Key: "tls.ca_file", Msg: err.Error()}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(raw) {
		return nil, &FieldError{Key: "tls.ca_file", Msg: fmt.Sprintf("%s holds no PEM certificate", caFile)}
	}
	return pool, nil
}
