package chaos

import (
	"bufio"
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// answer serves a transport's RPCs until it is closed.
func answer(tr *raft.NetworkTransport) {
	for rpc := range tr.Consumer() {
		switch rpc.Command.(type) {
		case *raft.AppendEntriesRequest:
			rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil)
		case *raft.RequestVoteRequest:
			rpc.Respond(&raft.RequestVoteResponse{Granted: true}, nil)
		default:
			rpc.Respond(nil, io.ErrUnexpectedEOF)
		}
	}
}

// pair is two raft transports, a and b, that reach each other only
// through Net's proxies, exactly as the coordinators do.
func pair(t *testing.T) (n *Net, a, b *raft.NetworkTransport, adv map[string]string) {
	t.Helper()
	n = newNet()
	t.Cleanup(n.Close)
	p := newPorts()
	adv = map[string]string{}
	trs := map[string]*raft.NetworkTransport{}
	for _, name := range []string{"a", "b"} {
		addr, err := p.addr(false)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Listen(name, addr); err != nil {
			t.Fatal(err)
		}
		tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 2*time.Second, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		go answer(tr)
		n.Route(name, string(tr.LocalAddr()))
		adv[name], trs[name] = addr, tr
	}
	return n, trs["a"], trs["b"], adv
}

func appendFrom(tr *raft.NetworkTransport, from, fromAddr, to, toAddr string) error {
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax,
		ID: []byte(from), Addr: []byte(fromAddr)}, Term: 1,
		Entries: []*raft.Log{{Index: 1, Term: 1, Type: raft.LogCommand, Data: bytes.Repeat([]byte("x"), 4096)}}}
	return tr.AppendEntries(raft.ServerID(to), raft.ServerAddress(toAddr), req, &raft.AppendEntriesResponse{})
}

func TestNetCutAndHeal(t *testing.T) {
	n, a, b, adv := pair(t)
	if err := appendFrom(a, "a", adv["a"], "b", adv["b"]); err != nil {
		t.Fatalf("a -> b before the cut: %v", err)
	}
	if err := b.RequestVote("a", raft.ServerAddress(adv["a"]), &raft.RequestVoteRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("b"), Addr: []byte(adv["b"])}, Term: 2},
		&raft.RequestVoteResponse{}); err != nil {
		t.Fatalf("b -> a before the cut: %v", err)
	}
	if severed := n.Cut("b"); severed != 2 {
		t.Fatalf("cut severed %d links, want 2 (a->b and b->a)", severed)
	}
	for range 3 { // a pooled connection and fresh ones must all fail
		if err := appendFrom(a, "a", adv["a"], "b", adv["b"]); err == nil {
			t.Fatal("a -> b crossed the cut")
		}
	}
	if err := appendFrom(b, "b", adv["b"], "a", adv["a"]); err == nil {
		t.Fatal("b -> a crossed the cut")
	}
	refused, _, sniffErr := n.Stats()
	if refused == 0 || sniffErr != nil {
		t.Fatalf("refused %d, header error %v", refused, sniffErr)
	}
	n.Heal()
	var err error
	for range 3 { // the first call may still draw a connection cut earlier
		if err = appendFrom(a, "a", adv["a"], "b", adv["b"]); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("a -> b after the heal: %v", err)
	}
}

func TestRaftSender(t *testing.T) {
	known := func(addr string) (string, bool) {
		return map[string]string{"10.0.0.1:1": "c1"}[addr], addr == "10.0.0.1:1"
	}
	str := func(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	cases := []struct {
		name string
		msg  []byte
		want string // "" = an error
	}{
		{"sorted keys, known Addr first", cat([]byte{0, 0x83}, str("Addr"), str("10.0.0.1:1"), str("ID"), str("c9"), str("Term"), []byte{7}), "c1"},
		{"unknown Addr, then ID", cat([]byte{0, 0x82}, str("Addr"), str("1.2.3.4:5"), str("ID"), str("c2")), "c2"},
		{"entries before ID", cat([]byte{0, 0x82}, str("Entries"), []byte{0x91, 0x81}, str("Data"), []byte{0xc4, 2, 'h', 'i'}, str("ID"), []byte{0xd9, 2}, []byte("c3")), "c3"},
		{"no sender", cat([]byte{0, 0x81}, str("Term"), []byte{0xcf, 0, 0, 0, 0, 0, 0, 0, 1}), ""},
		{"empty ID", cat([]byte{0, 0x81}, str("ID"), []byte{0xc0}), ""},
		{"not a map", []byte{0, 0x93, 1, 2, 3}, ""},
		{"truncated", cat([]byte{0, 0x82}, str("Addr"))[:6], ""},
		{"huge length", cat([]byte{0, 0x81}, str("ID"), []byte{0xdb, 0x7f, 0xff, 0xff, 0xff}), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := raftSender(bufio.NewReader(bytes.NewReader(tc.msg)), known)
			if tc.want == "" && err == nil {
				t.Fatalf("want an error, got %q", got)
			}
			if tc.want != "" && (err != nil || got != tc.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func FuzzRaftSender(f *testing.F) {
	f.Add([]byte{0, 0x81, 0xa2, 'I', 'D', 0xa1, 'x'})
	f.Add([]byte{0, 0xde, 0, 1, 0xa4, 'A', 'd', 'd', 'r', 0xc0})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = raftSender(bufio.NewReader(bytes.NewReader(b)), func(string) (string, bool) { return "", false })
	})
}
