package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// The always-on mesh's link flows on a simulated RoCE fat tree: a cable
// between a leaf and a spine that starts dropping 5 % of its packets is
// named by the live view within a few windows, no sweep run, and no other
// cable is; healed, its episode turns recovered.
func TestLiveLinkFlowsNameALossyCable(t *testing.T) {
	liveLinkLoss(t, "nodes=8,rails=1,leaf=2,spines=2", 0)
}

// The same where the switches hash otherwise than the topology's model
// and answer traces: the leader steers the flows by tracing their
// candidate labels both ways, so the loss is still put on the right cable.
func TestLiveLinkFlowsSteerByTraces(t *testing.T) {
	liveLinkLoss(t, "nodes=8,rails=1,leaf=2,spines=2,addrs=10.255.0.0/24", 0x5a17c3)
}

func liveLinkLoss(t *testing.T, tree string, seed uint32) {
	t.Helper()
	if testing.Short() {
		t.Skip("waits for several probe windows")
	}
	cl := startOn(t, tree, Options{HashSeed: seed, Live: coordinator.LiveOptions{Enabled: true,
		Params: liveplan.Params{Window: time.Second, RatePerHCA: 100, GroupRate: 10, ProbesPerWindow: 20, LinkRate: 40}}})
	wait.Within(t, 60*time.Second, "a healthy live window with link flows", func() bool {
		info := cl.Coord.LiveInfo()
		return info.Enabled && info.Healthy && info.LinkFlows > 0 && info.Probing == 8 && info.Window >= 2
	})
	before := cl.Coord.LiveInfo()
	if err := cl.Inject([]string{"cable=leaf-r0-01~spine-r0-00:loss=5%"}); err != nil {
		t.Fatal(err)
	}
	var named api.LiveLink
	var wrong []api.LiveLink
	wait.Within(t, 60*time.Second, "the lossy cable named by the live view", func() bool {
		info := cl.Coord.LiveInfo()
		for _, l := range info.Links {
			if !strings.HasPrefix(l.Cable, "leaf-r0-01:") || !strings.Contains(l.Cable, "spine-r0-00:") {
				wrong = append(wrong, l) // reported below: a condition must not stop the test
				return true
			}
			named = l
		}
		return len(info.Links) == 1
	})
	if len(wrong) > 0 {
		t.Fatalf("named a clean cable: %+v", wrong)
	}
	if named.State != "lossy" || named.Loss < 0.03 || named.Since < before.Window || info(cl).Healthy {
		t.Errorf("named %+v (before: window %d)", named, before.Window)
	}
	t.Logf("%d link flows; named %s %s loss %.1f%% (%d of %d probes, %d flows, %d partners) in window %d, injected after window %d",
		before.LinkFlows, named.Cable, named.State, 100*named.Loss, named.Lost, named.Probes, named.Flows, named.Partners, named.Since, before.Window)
	if err := cl.Inject(nil); err != nil {
		t.Fatal(err)
	}
	wait.Within(t, 60*time.Second, "the episode recovered after healing", func() bool {
		ls := cl.Coord.LiveInfo().Links
		return len(ls) == 1 && ls[0].State == "recovered" && ls[0].Flaps == 0
	})
}

func info(cl *Cluster) api.LiveInfo { return cl.Coord.LiveInfo() }
