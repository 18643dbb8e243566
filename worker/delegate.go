package worker

import (
	"github.com/hashicorp/memberlist"

	"github.com/rdmamesh/rdmamesh/internal/member"
)

// delegate adapts memberlist's callbacks to the agent; it only encodes the
// meta header, everything bigger travels over the worker API.
type delegate struct{ a *Agent }

var _ memberlist.Delegate = (*delegate)(nil)

func (d *delegate) NodeMeta(limit int) []byte {
	inv := d.a.Inventory()
	usable := 0
	for _, p := range inv.Ports {
		if p.Usable {
			usable++
		}
	}
	b, err := member.Meta{Role: member.RoleWorker, APIAddr: d.a.apiAddr, Generation: inv.Generation,
		Ports: usable, Provider: inv.Provider}.Encode()
	if err != nil || len(b) > limit {
		d.a.log.Error("gossip meta too large; publishing none", "err", err)
		return nil
	}
	return b
}

func (d *delegate) NotifyMsg([]byte)                           {}
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d *delegate) LocalState(join bool) []byte                { return nil }
func (d *delegate) MergeRemoteState(buf []byte, join bool)     {}
