package verbs

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestClassify(t *testing.T) {
	w := where{device: "mlx5_0", port: 1, gidIndex: 3, netdev: "eth2", size: 65536, mtu: 1024, phase: "bandwidth"}
	small := w
	small.size = 8
	afterLat := w
	afterLat.latencyOK = true
	cases := []struct {
		name  string
		f     failure
		w     where
		class probe.Class
		verb  string
		want  string // substring of cause or fix
	}{
		{"rtr einval", failure{op: opModifyRTR, err: syscall.EINVAL}, w, probe.ClassInvalidGID, "ibv_modify_qp(RTR)", "GID index 3"},
		{"rtr enodev", failure{op: opModifyRTR, err: syscall.ENODEV}, w, probe.ClassNoNetdev, "ibv_modify_qp(RTR)", "network namespace"},
		{"rtr etimedout", failure{op: opModifyRTR, err: syscall.ETIMEDOUT}, w, probe.ClassTimeout, "ibv_modify_qp(RTR)", "did not answer ARP/neighbour discovery on eth2"},
		{"reg_mr enomem", failure{op: opRegMR, err: syscall.ENOMEM}, w, probe.ClassResource, "ibv_reg_mr", "ulimit -l unlimited"},
		{"reg_mr eperm", failure{op: opRegMR, err: syscall.EPERM}, w, probe.ClassResource, "ibv_reg_mr", "IPC_LOCK"},
		{"create_qp enomem", failure{op: opCreateQP, err: syscall.ENOMEM}, w, probe.ClassResource, "ibv_create_qp", "memlock"},
		{"open eacces", failure{op: opOpenDevice, err: syscall.EACCES}, w, probe.ClassResource, "ibv_open_device", "/dev/infiniband"},
		{"open enodev", failure{op: opOpenDevice, err: syscall.ENODEV}, w, probe.ClassPortDown, "ibv_open_device", "gone"},
		{"no uverbs", failure{op: opGetDeviceList, err: syscall.ENOSYS}, w, probe.ClassPortDown, "ibv_get_device_list", "ib_uverbs"},
		{"wc 12 first write", failure{op: opCompletion, wc: 12}, small, probe.ClassRetryExceeded, "ibv_poll_cq", "RoCE v1/v2"},
		{"wc 12 midway", failure{op: opCompletion, wc: 12, iter: 40, done: 40}, small, probe.ClassRetryExceeded, "ibv_poll_cq", "after 80"},
		{"wc 12 large after small ok", failure{op: opCompletion, wc: 12}, afterLat, probe.ClassMTUMismatch, "ibv_poll_cq", "MTU"},
		{"wc 12 large, some done", failure{op: opCompletion, wc: 12, done: 10}, afterLat, probe.ClassRetryExceeded, "ibv_poll_cq", "lost"},
		{"wc 13", failure{op: opCompletion, wc: 13}, w, probe.ClassRetryExceeded, "ibv_poll_cq", "RNR"},
		{"wc 5 flush", failure{op: opCompletion, wc: 5}, w, probe.ClassPeerLost, "ibv_poll_cq", "WR_FLUSH_ERR"},
		{"wc 9 rem inv req", failure{op: opCompletion, wc: 9}, w, probe.ClassInternal, "ibv_poll_cq", "retransmission"},
		{"wc 10 rem access", failure{op: opCompletion, wc: 10}, w, probe.ClassInternal, "ibv_poll_cq", "rkey"},
		{"first ping never came", failure{op: opWaitPing, err: syscall.ETIMEDOUT, idle: time.Minute}, w, probe.ClassTimeout, "wait for peer write", "never arrived"},
		{"initiator went away", failure{op: opWaitPing, err: syscall.ETIMEDOUT, iter: 500, idle: 10 * time.Second}, w, probe.ClassPeerLost, "wait for peer write", "500"},
		{"responder went away", failure{op: opWaitPong, err: syscall.ETIMEDOUT, iter: 7, idle: 10 * time.Second}, w, probe.ClassPeerLost, "wait for peer write", "after 7"},
		{"slow but alive", failure{op: opWaitPong, err: syscall.ETIMEDOUT, iter: 644, idle: 40 * time.Millisecond}, w, probe.ClassTimeout, "wait for peer write", "still running"},
		{"cancelled", failure{op: opWaitCQ, err: syscall.ECANCELED, iter: 3}, w, probe.ClassTimeout, "wait for completion", "cancelled"},
		{"post_send", failure{op: opPostSend, err: syscall.EINVAL}, w, probe.ClassInternal, "ibv_post_send", "error state"},
		{"large never completed", failure{op: opWaitCQ, err: syscall.ETIMEDOUT, idle: time.Minute}, afterLat, probe.ClassMTUMismatch, "wait for completion", "full-size frames"},
		{"large stalled after some", failure{op: opWaitCQ, err: syscall.ETIMEDOUT, done: 30, idle: time.Minute}, afterLat, probe.ClassTimeout, "wait for completion", "30 of the requests"},
		{"stall before latency ok", failure{op: opWaitCQ, err: syscall.ETIMEDOUT, idle: time.Minute}, w, probe.ClassTimeout, "wait for completion", "no completion"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := classify(c.f, c.w)
			if e.Class != c.class || e.Verb != c.verb {
				t.Fatalf("got class %s verb %q, want %s %q (%v)", e.Class, e.Verb, c.class, c.verb, e)
			}
			if !strings.Contains(e.Cause+" "+e.Fix, c.want) {
				t.Fatalf("cause/fix %q + %q lacks %q", e.Cause, e.Fix, c.want)
			}
			if e.Cause == "" || e.Fix == "" {
				t.Fatalf("every class needs a cause and a fix: %+v", e)
			}
			if c.f.op == opCompletion && (e.WCStatus != c.f.wc || e.Errno != 0) {
				t.Fatalf("completion failure must carry the WC status, not an errno: %+v", e)
			}
		})
	}
}

func TestPortDown(t *testing.T) {
	cases := []struct {
		state, phys int
		ll          string
		want        string
	}{
		{1, 3, "Ethernet", "link layers"},
		{2, 5, "InfiniBand", "subnet manager"},
		{3, 5, "InfiniBand", "ARMED"},
	}
	for _, c := range cases {
		e := portDown("mlx5_0", 1, c.state, c.phys, c.ll)
		if e.Class != probe.ClassPortDown || !strings.Contains(e.Cause+e.Fix, c.want) {
			t.Errorf("state %d: %+v, want %q", c.state, e, c.want)
		}
	}
}

// Every op the C side can report must have a verb name, or errors would
// say "at " with nothing after it.
func TestEveryOpNamed(t *testing.T) {
	for o := opLoad; o <= opAlloc; o++ {
		if opVerb[o] == "" {
			t.Errorf("op %d has no verb name", o)
		}
	}
}
