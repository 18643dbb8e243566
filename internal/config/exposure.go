package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strings"
)

// Listener is one address a daemon accepts connections on, named by the
// key that sets it.
type Listener struct {
	Key  string
	Addr string
}

func (l Listener) String() string {
	host, _, _ := net.SplitHostPort(l.Addr)
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Sprintf("%s %s (all interfaces)", l.Key, l.Addr)
	}
	return l.Key + " " + l.Addr
}

// Listeners are the addresses role listens on.
func (c *Config) Listeners(role string) []Listener {
	ls := []Listener{{"gossip.bind", c.Gossip.Bind}}
	switch role {
	case "worker":
		ls = append(ls, Listener{"worker.api_listen", c.Worker.APIListen})
	case "coordinator":
		ls = append(ls, Listener{"coordinator.api_listen", c.Coordinator.APIListen})
		if c.Coordinator.RaftBind != "" {
			ls = append(ls, Listener{"coordinator.raft_bind", c.Coordinator.RaftBind})
		}
	}
	return ls
}

// Loopback reports whether a listener on addr (host:port) is reachable
// from this host only. A name other than localhost counts as reachable:
// what it resolves to is not ours to guess, and a wrong guess opens the
// fabric to the network.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Guard is what a worker or coordinator starts with: its secrets and, when
// the operator chose auth.insecure, what it leaves open.
type Guard struct {
	Token   string
	Key     []byte
	Open    []Listener // beyond loopback
	Missing []string   // secrets those listeners lack, with why
}

// Exposed reports whether the daemon runs reachable without its secrets,
// which Guard allows only under auth.insecure.
func (g *Guard) Exposed() bool { return len(g.Open) > 0 && len(g.Missing) > 0 }

// Guard reads the secrets and holds them against role's listeners: one
// beyond loopback needs both the token and the gossip key, or
// auth.insecure. A secret file that does not exist counts as missing there,
// so a copied example config gets the refusal that says how to make it.
func (c *Config) Guard(role string) (*Guard, error) {
	g := &Guard{}
	for _, l := range c.Listeners(role) {
		if !Loopback(l.Addr) {
			g.Open = append(g.Open, l)
		}
	}
	var tokErr, keyErr error
	g.Token, tokErr = c.token()
	g.Key, keyErr = c.gossipKey()
	for _, s := range []struct {
		key, fileKey, file string
		set                bool
		err                error
	}{
		{"auth.token", "auth.token_file", c.Auth.TokenFile, g.Token != "", tokErr},
		{"gossip.key", "gossip.key_file", c.Gossip.KeyFile, len(g.Key) > 0, keyErr},
	} {
		switch {
		case s.err != nil && (len(g.Open) == 0 || !errors.Is(s.err, fs.ErrNotExist)):
			return nil, s.err
		case s.err != nil:
			g.Missing = append(g.Missing, fmt.Sprintf("%s (%s %s does not exist)", s.key, s.fileKey, s.file))
		case !s.set:
			g.Missing = append(g.Missing, s.key+" (not set)")
		}
	}
	if g.Exposed() && !c.Auth.Insecure {
		dir := c.secretsDir()
		return nil, &ExposedError{Role: role, Open: g.Open, Missing: g.Missing, Dir: dir,
			Configured: c.Auth.TokenFile == filepath.Join(dir, TokenFileName) && c.Gossip.KeyFile == filepath.Join(dir, KeyFileName)}
	}
	return g, nil
}

// secretsDir is where the fix should put the files: where the config
// already looks for them, when it names keygen's files, else the default.
func (c *Config) secretsDir() string {
	if f := c.Auth.TokenFile; filepath.Base(f) == TokenFileName {
		return filepath.Dir(f)
	}
	if f := c.Gossip.KeyFile; filepath.Base(f) == KeyFileName {
		return filepath.Dir(f)
	}
	return SecretsDir
}

// ExposedError is the refusal to listen beyond loopback without the
// secrets: what is exposed, what is missing, and how to fix it.
type ExposedError struct {
	Role    string
	Open    []Listener
	Missing []string
	Dir     string // where keygen should write
	// Configured: the *_file keys already name keygen's files in Dir.
	Configured bool
}

func (e *ExposedError) Error() string {
	var open, missing []string
	for _, l := range e.Open {
		open = append(open, l.String())
	}
	for _, m := range e.Missing {
		k, _, _ := strings.Cut(m, " ")
		missing = append(missing, k)
	}
	risk := "start sweeps that load every HCA"
	if e.Role == "worker" {
		risk = "run RDMA tests on this node's HCAs"
	}
	tok, key := filepath.Join(e.Dir, TokenFileName), filepath.Join(e.Dir, KeyFileName)
	var b strings.Builder
	fmt.Fprintf(&b, "refusing to start: this %s listens beyond loopback without %s\n", e.Role, strings.Join(missing, " and "))
	fmt.Fprintf(&b, "  exposed: %s\n", strings.Join(open, ", "))
	fmt.Fprintf(&b, "  missing: %s\n", strings.Join(e.Missing, ", "))
	fmt.Fprintf(&b, "  anyone who reaches it could %s, or join the gossip as a fake worker\n", risk)
	fmt.Fprintf(&b, "  fix: rdmamesh keygen --dir %s   (writes %s and %s, mode 0600)\n", e.Dir, tok, key)
	if e.Configured {
		fmt.Fprintf(&b, "       then copy both files to every coordinator and worker; this configuration reads them from there\n")
	} else {
		fmt.Fprintf(&b, "       copy both files to every coordinator and worker, and start each with\n")
		fmt.Fprintf(&b, "       --token-file %s --gossip-key-file %s\n", tok, key)
		fmt.Fprintf(&b, "       (config keys auth.token_file and gossip.key_file; RDMAMESH_AUTH_TOKEN_FILE, RDMAMESH_GOSSIP_KEY_FILE)\n")
	}
	fmt.Fprintf(&b, "  or listen on 127.0.0.1 only, or run open on a network you trust with --insecure (auth.insecure, RDMAMESH_AUTH_INSECURE=true)")
	return b.String()
}
