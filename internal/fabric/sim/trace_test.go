package sim

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/pathtrace"
)

// A trace from a node hears each switch on the flow's route, in order,
// and nothing from the destination; a source that is not the node's own
// address or a destination no node has is refused, not guessed.
func TestTraceFollowsTheRoute(t *testing.T) {
	fab := mustFabric(t, Config{Preset: "roce-2x100", Topology: twoLeaves{}})
	for _, n := range twoLeafNodes {
		fab.Node(n)
	}
	from := fab.Node("node-01")
	flow := pathtrace.Flow{Src: ipv4("node-01", 0), Dst: ipv4("node-03", 0), SrcPort: 49441}
	p, err := from.Trace(context.Background(), flow)
	if err != nil {
		t.Fatal(err)
	}
	var hops []string
	for _, h := range p.Hops {
		hops = append(hops, h.Addr.String())
	}
	if strings.Join(hops, " ") != "10.255.0.1 10.255.0.2" || !p.Complete || p.Reached {
		t.Fatalf("hops %v (complete %v, reached %v), want leaf-a then leaf-b, the destination silent", hops, p.Complete, p.Reached)
	}
	for _, bad := range []pathtrace.Flow{
		{Src: ipv4("node-02", 0), Dst: ipv4("node-03", 0), SrcPort: 1},
		{Src: ipv4("node-01", 0), Dst: netip.MustParseAddr("10.9.9.9"), SrcPort: 1},
	} {
		if _, err := from.Trace(context.Background(), bad); err == nil {
			t.Fatalf("trace of %s from node-01: no error", bad)
		}
	}
}
