package main

import (
	"log/slog"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rdmamesh/rdmamesh/internal/config"
)

// guard reads the daemon's secrets and refuses to go on when it would
// listen beyond loopback without them; under --insecure it says, at every
// start, what is open to whom, so the choice stays visible in the logs.
func guard(c *config.Config, role string, log *slog.Logger) (*config.Guard, error) {
	g, err := c.Guard(role)
	if err != nil {
		return nil, err
	}
	switch {
	case g.Exposed():
		log.Warn("insecure (--insecure / auth.insecure): listening beyond loopback without the shared secrets; anyone who reaches these addresses can start tests and join the gossip",
			"open", listeners(g.Open), "missing", strings.Join(g.Missing, ", "),
			"fix", "rdmamesh keygen, then --token-file and --gossip-key-file on every node")
	case g.Token == "":
		log.Info("no auth.token: the API listens on loopback only, open to the users of this host")
	}
	if role == "coordinator" && c.Coordinator.RaftBind != "" && !config.Loopback(c.Coordinator.RaftBind) && !c.TLS.ClientAuth {
		// raft has no token of its own: only mutual TLS or the network
		// keeps a stranger from talking to it.
		log.Warn("coordinator.raft_bind is reachable beyond loopback and raft takes no token: firewall it to the coordinators or set tls.client_auth",
			"raft_bind", c.Coordinator.RaftBind)
	}
	return g, nil
}

func listeners(ls []config.Listener) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.String()
	}
	return strings.Join(s, ", ")
}

func addInsecureFlag(f *pflag.FlagSet) {
	f.Bool("insecure", false, "listen beyond loopback without auth.token and gossip.key (auth.insecure); warns at every start")
}
