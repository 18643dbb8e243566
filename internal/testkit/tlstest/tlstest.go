// Package tlstest makes throwaway certificate authorities for tests, so no
// private key is ever checked in. Test code only.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority whose certificate is in File.
type CA struct {
	File string
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// Pair is an issued certificate and its key, as PEM files.
type Pair struct {
	CertFile, KeyFile string
}

// NewCA writes a fresh CA certificate into a temporary directory.
func NewCA(tb testing.TB, name string) *CA {
	tb.Helper()
	key := newKey(tb)
	tmpl := &x509.Certificate{SerialNumber: serial(tb), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	ca := &CA{File: filepath.Join(dir, name+"-ca.pem"), dir: dir, cert: cert, key: key}
	writePEM(tb, ca.File, "CERTIFICATE", der)
	return ca
}

// Issue signs a certificate for name that is good as a server on loopback
// (127.0.0.1, ::1, localhost) and as a client, like every rdmamesh process.
func (ca *CA) Issue(tb testing.TB, name string) Pair {
	tb.Helper()
	return ca.issue(tb, name, time.Now().Add(24*time.Hour))
}

// IssueExpired signs a certificate that expired an hour ago.
func (ca *CA) IssueExpired(tb testing.TB, name string) Pair {
	tb.Helper()
	return ca.issue(tb, name, time.Now().Add(-time.Hour))
}

func (ca *CA) issue(tb testing.TB, name string, notAfter time.Time) Pair {
	tb.Helper()
	key := newKey(tb)
	tmpl := &x509.Certificate{SerialNumber: serial(tb), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	p := Pair{CertFile: filepath.Join(ca.dir, name+".pem"), KeyFile: filepath.Join(ca.dir, name+"-key.pem")}
	writePEM(tb, p.CertFile, "CERTIFICATE", der)
	writePEM(tb, p.KeyFile, "PRIVATE KEY", keyDER)
	return p
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

func serial(tb testing.TB) *big.Int {
	tb.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func writePEM(tb testing.TB, path, typ string, der []byte) {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		tb.Fatal(err)
	}
}
