package member

import (
	"io"
	"log"
	"testing"

	"github.com/hashicorp/memberlist"
)

func localMember(t *testing.T, name string) *memberlist.Memberlist {
	t.Helper()
	c := memberlist.DefaultLocalConfig()
	c.Name, c.BindAddr, c.BindPort, c.AdvertisePort = name, "127.0.0.1", 0, 0
	c.Logger = log.New(io.Discard, "", 0)
	ml, err := memberlist.Create(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ml.Shutdown() })
	return ml
}

// A member that answers a ping is alive; one gossip still lists but that
// no longer answers (its process died a moment ago) is not; a name gossip
// does not know is not.
func TestLiveness(t *testing.T) {
	a, b := localMember(t, "a"), localMember(t, "b")
	if _, err := a.Join([]string{b.LocalNode().Address()}); err != nil {
		t.Fatal(err)
	}
	if !NewLiveness(a).Answers("b") {
		t.Fatal("a running member does not answer")
	}
	if err := b.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if NewLiveness(a).Answers("b") {
		t.Fatal("a member whose process stopped still answers")
	}
	if NewLiveness(a).Answers("nobody") || NewLiveness(nil).Answers("b") {
		t.Fatal("an unknown member, or no gossip, answers")
	}
}
