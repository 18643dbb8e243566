package pathtrace

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// clos is a routed two-tier fabric of network namespaces on this host:
// host1 under leaf1, host2 under leaf2, each leaf up to both spines,
// equal-cost routes over the spines, dual stack.
type clos struct {
	ns   map[string]string     // role → namespace
	role map[netip.Addr]string // every interface address → its node's role
}

var (
	routers = []string{"leaf1", "leaf2", "spine1", "spine2"}
	hosts   = []string{"host1", "host2"}
)

// closLink is a veth between nodes a and b on subnet n: a holds .1 (and
// fd00:n::1), b .2.
type closLink struct {
	a, b string
	n    int
}

var closLinks = []closLink{
	{"leaf1", "host1", 1}, {"leaf2", "host2", 2},
	{"leaf1", "spine1", 11}, {"leaf1", "spine2", 12}, {"leaf2", "spine1", 21}, {"leaf2", "spine2", 22},
}

func linkAddr(n, side int, v6 bool) string {
	if v6 {
		return fmt.Sprintf("fd00:%d::%d", n, side)
	}
	return fmt.Sprintf("10.0.%d.%d", n, side)
}

// newClos builds the fabric, or skips the test on a machine that cannot.
// The namespaces carry the test process's pid, so parallel runs do not
// meet, and go when the test ends.
func newClos(t *testing.T) *clos {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: builds a fabric of network namespaces")
	}
	for _, tool := range []string{"ip", "nft", "sysctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (iproute2, nftables, procps) to build the fabric: %v", tool, err)
		}
	}
	c := &clos{ns: map[string]string{}, role: map[netip.Addr]string{}}
	for _, r := range slices.Concat(routers, hosts) {
		c.ns[r] = fmt.Sprintf("pt%d-%s", os.Getpid(), r)
		sh(t, "ip", "netns", "add", c.ns[r])
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", c.ns[r]).Run() })
		c.ip(t, r, "link", "set", "lo", "up")
		// Hosts answer too (host2's port unreachable): no ICMP rate limit
		// anywhere, or answers go missing.
		c.sysctl(t, r, "net.ipv4.icmp_ratelimit=0", "net.ipv6.icmp.ratelimit=0")
		// Without duplicate address detection every address, link-local
		// ones included, works at once: a router whose link-local address
		// is still tentative cannot resolve its IPv6 neighbours, and the
		// first traces would lose their ICMP.
		c.sysctl(t, r, "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
	}
	for _, r := range routers {
		// Policy 1 hashes the L4 ports, so source ports spread over the
		// spines; rp_filter would drop what multipath sends back asymmetrically.
		c.sysctl(t, r, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
			"net.ipv4.fib_multipath_hash_policy=1", "net.ipv6.fib_multipath_hash_policy=1",
			"net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")
	}
	for _, l := range closLinks {
		c.ip(t, l.a, "link", "add", l.b, "type", "veth", "peer", "name", l.a, "netns", c.ns[l.b])
		for side, node := range map[int]string{1: l.a, 2: l.b} {
			dev := map[string]string{l.a: l.b, l.b: l.a}[node]
			for _, v6 := range []bool{false, true} {
				addr, plen := linkAddr(l.n, side, v6), "/24"
				if v6 {
					plen = "/64"
				}
				c.ip(t, node, "addr", "add", addr+plen, "dev", dev)
				c.role[netip.MustParseAddr(addr)] = node
			}
			c.ip(t, node, "link", "set", dev, "up")
		}
	}
	for _, v6 := range []bool{false, true} {
		fam, subnet := "-4", func(n int) string { return fmt.Sprintf("10.0.%d.0/24", n) }
		if v6 {
			fam, subnet = "-6", func(n int) string { return fmt.Sprintf("fd00:%d::/64", n) }
		}
		c.ip(t, "host1", fam, "route", "add", "default", "via", linkAddr(1, 1, v6))
		c.ip(t, "host2", fam, "route", "add", "default", "via", linkAddr(2, 1, v6))
		c.ip(t, "leaf1", fam, "route", "add", subnet(2),
			"nexthop", "via", linkAddr(11, 2, v6), "dev", "spine1", "nexthop", "via", linkAddr(12, 2, v6), "dev", "spine2")
		c.ip(t, "leaf2", fam, "route", "add", subnet(1),
			"nexthop", "via", linkAddr(21, 2, v6), "dev", "spine1", "nexthop", "via", linkAddr(22, 2, v6), "dev", "spine2")
		for s, up := range map[string][2]int{"spine1": {11, 21}, "spine2": {12, 22}} {
			c.ip(t, s, fam, "route", "add", subnet(1), "via", linkAddr(up[0], 1, v6))
			c.ip(t, s, fam, "route", "add", subnet(2), "via", linkAddr(up[1], 1, v6))
		}
	}
	c.ready(t)
	return c
}

// ready waits until flows of both families reach host2 through each spine:
// a link's IPv6 neighbours answer only once the kernel has taken its
// carrier up, which it may put off for a second, and until then the
// probes it should carry are lost.
func (c *clos) ready(t *testing.T) {
	t.Helper()
	o := Options{MaxTTL: 6, ProbesPerTTL: 1, MaxSilent: 1, Timeout: 100 * time.Millisecond, Pacing: time.Millisecond}
	reached := map[string]bool{} // family/spine
	port := uint16(40000)        // not one closPorts counts
	wait.For(t, "flows of both families to reach host2 through both spines", func() bool {
		for _, fam := range closFamilies {
			port++
			var p Path
			err := c.in("host1", func() { p, _ = Trace(context.Background(), Flow{Src: fam.src, Dst: fam.dst, SrcPort: port}, o) })
			if roles := c.roles(p); err == nil && p.Reached && len(roles) == 4 {
				reached[fam.name+"/"+roles[1]] = true
			}
		}
		return len(reached) == 2*2
	})
}

func sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	return runIn(t, nil, name, args...)
}

func runIn(t *testing.T, stdin *strings.Reader, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (c *clos) ip(t *testing.T, node string, args ...string) {
	t.Helper()
	sh(t, "ip", append([]string{"-n", c.ns[node]}, args...)...)
}

func (c *clos) sysctl(t *testing.T, node string, kv ...string) {
	t.Helper()
	sh(t, "ip", append([]string{"netns", "exec", c.ns[node], "sysctl", "-qw"}, kv...)...)
}

// nft loads an nftables script in node's namespace.
func (c *clos) nft(t *testing.T, node, script string) {
	t.Helper()
	runIn(t, strings.NewReader(script), "ip", "netns", "exec", c.ns[node], "nft", "-f", "-")
}

// counters reads the named counters of table inet pt in node's namespace.
func (c *clos) counters(t *testing.T, node string) map[string]uint64 {
	t.Helper()
	out := sh(t, "ip", "netns", "exec", c.ns[node], "nft", "-j", "list", "table", "inet", "pt")
	var doc struct {
		Nftables []struct {
			Counter *struct {
				Name    string `json:"name"`
				Packets uint64 `json:"packets"`
			} `json:"counter"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("nft -j list table inet pt in %s: %v: %s", node, err, out)
	}
	got := map[string]uint64{}
	for _, e := range doc.Nftables {
		if e.Counter != nil {
			got[e.Counter.Name] = e.Counter.Packets
		}
	}
	return got
}

// in runs fn on a goroutine whose OS thread has entered node's namespace,
// so the sockets fn opens live there.
func (c *clos) in(node string, fn func()) error {
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with the goroutine instead of
		// going back to the runtime inside another namespace.
		runtime.LockOSThread()
		fd, err := unix.Open("/run/netns/"+c.ns[node], unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("open %s's namespace: %w", node, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter %s's namespace: %w", node, err)
			return
		}
		fn()
		errc <- nil
	}()
	return <-errc
}

// roles names the path's hops by node, "?" for an unknown one.
func (c *clos) roles(p Path) []string {
	var out []string
	for _, h := range p.Hops {
		r, ok := c.role[h.Addr]
		if !ok {
			r = "?"
			if h.Known() {
				r = "stranger " + h.Addr.String()
			}
		}
		out = append(out, r)
	}
	return out
}
