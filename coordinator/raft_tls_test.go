package coordinator

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/testkit/tlstest"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestRaftOverMutualTLS bootstraps three coordinators on real raft TCP
// ports with mutual TLS: they elect a leader and replicate the voter set,
// and a client without a certificate is refused by raft's listener.
func TestRaftOverMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "raft")
	cert := ca.Issue(t, "coordinator")
	srv, cli, err := config.TLS{CertFile: cert.CertFile, KeyFile: cert.KeyFile, CAFile: ca.File, ClientAuth: true}.Configs()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var cs []*Coordinator
	var seeds []string
	for i := range 3 {
		c, err := Start(Options{Name: fmt.Sprintf("c%d", i), GossipBind: "127.0.0.1:0", Join: seeds,
			RaftBind: "127.0.0.1:0", BootstrapExpect: 3, FastRaft: true, Reconcile: 100 * time.Millisecond,
			TLS: srv, ClientTLS: cli, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		cs = append(cs, c)
		seeds = append(seeds, c.GossipAddr())
	}
	wait.Within(t, 30*time.Second, "a leader every replica agrees on, with 3 voters", func() bool {
		leader := cs[0].Status().Leader
		for _, c := range cs {
			if st := c.Status(); st.Leader == "" || st.Leader != leader || len(st.Voters) != 3 {
				return false
			}
		}
		return true
	})

	noCert, err := config.TLS{CAFile: ca.File}.Client()
	if err != nil {
		t.Fatal(err)
	}
	stream := &tlsStream{client: noCert}
	conn, err := stream.Dial(raft.ServerAddress(cs[0].raftAddr), 5*time.Second)
	if err == nil {
		// TLS 1.3 finishes the client's side first; the server's refusal
		// arrives on the first read.
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("raft accepted a client without a certificate: %v", err)
	}
}
