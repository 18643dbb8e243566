package verbs

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// mtuBytes converts enum ibv_mtu to bytes; 0 for unknown values.
func mtuBytes(e int) int {
	if e < 1 || e > 5 {
		return 0
	}
	return 128 << e
}

// mtuEnum converts bytes to enum ibv_mtu, rounding down to a valid size.
func mtuEnum(b int) int {
	e := 0
	for i := 1; i <= 5; i++ {
		if 128<<i <= b {
			e = i
		}
	}
	return e
}

// pathMTU is what both ends can carry: the smaller active MTU.
func pathMTU(local, remote int) int {
	if remote <= 0 || (local > 0 && local < remote) {
		return local
	}
	return remote
}

func linkLayerName(l int) string {
	switch l {
	case 1:
		return "InfiniBand"
	case 2:
		return "Ethernet"
	}
	// IBV_LINK_LAYER_UNSPECIFIED is what old IB-only drivers report.
	return "InfiniBand"
}

// rateFromAttr is the fallback when sysfs has no rate file: lanes times the
// per-lane signalling rate, using the nominal figures ibstat prints.
func rateFromAttr(width, speed int) float64 {
	lanes := map[int]float64{1: 1, 2: 4, 4: 8, 8: 12, 16: 2}[width]
	lane := map[int]float64{1: 2.5, 2: 5, 4: 10, 8: 10, 16: 14, 32: 25, 64: 50, 128: 100, 256: 200}[speed]
	return lanes * lane
}

// sysfs reads the parts of /sys/class/infiniband that ibv_query_port does
// not give: the rate as the kernel words it and the GID type when the
// library is too old to report it. Root is an fs.FS so tests use fixtures.
type sysfs struct{ root fs.FS }

func (s sysfs) read(p string) (string, bool) {
	if s.root == nil {
		return "", false
	}
	b, err := fs.ReadFile(s.root, p)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// rate parses e.g. "100 Gb/sec (4X EDR)".
func (s sysfs) rate(dev string, port int) (float64, bool) {
	v, ok := s.read(path.Join(dev, "ports", strconv.Itoa(port), "rate"))
	if !ok {
		return 0, false
	}
	f := strings.Fields(v)
	if len(f) == 0 {
		return 0, false
	}
	r, err := strconv.ParseFloat(f[0], 64)
	return r, err == nil
}

func (s sysfs) gidType(dev string, port, index int) string {
	v, _ := s.read(path.Join(dev, "ports", strconv.Itoa(port), "gid_attrs", "types", strconv.Itoa(index)))
	return v
}

func (s sysfs) gidNetdev(dev string, port, index int) string {
	v, _ := s.read(path.Join(dev, "ports", strconv.Itoa(port), "gid_attrs", "ndevs", strconv.Itoa(index)))
	return v
}

// naturalLess orders mlx5_2 before mlx5_10, so rails follow device numbers.
func naturalLess(a, b string) bool {
	pa, na := splitNum(a)
	pb, nb := splitNum(b)
	if pa != pb {
		return pa < pb
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

func splitNum(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return s, -1
	}
	return s[:i], n
}

func sortDevices(names []string) {
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
}

// noProvider explains an empty device list when the kernel does have RDMA
// devices: libibverbs found no user-space driver for them. Devices being
// removed (gone) are skipped: their sysfs directory outlives their uverbs
// node for a moment, and that is not a missing provider.
func noProvider(s sysfs, gone map[string]removedDev) *probe.Error {
	if s.root == nil {
		return nil
	}
	ents, err := fs.ReadDir(s.root, ".")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if _, ok := gone[e.Name()]; !ok {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_get_device_list",
		Cause: fmt.Sprintf("the kernel has RDMA devices (%s) but libibverbs lists none: no user-space provider for them", strings.Join(names, ", ")),
		Fix:   "install the provider libraries (Debian/Ubuntu: ibverbs-providers; RHEL: rdma-core) and check /etc/libibverbs.d"}
}

// netdevInfo is the Ethernet side of a RoCE port, read from
// /sys/class/net: what a port-down or MTU cause should name.
type netdevInfo struct {
	name string
	oper string // operstate: up, down, lowerlayerdown, ...
	mtu  int
}

func (n netdevInfo) String() string {
	if n.name == "" {
		return ""
	}
	s := "its netdev " + n.name
	if n.oper != "" {
		s += " is " + n.oper
	}
	if n.mtu > 0 {
		s += fmt.Sprintf(" (MTU %d)", n.mtu)
	}
	return s
}

// roceNetdev finds the netdev under a RoCE port (any GID's ndev, or the
// rxe "parent" attribute) and reads its state from s, a /sys/class/net
// view. The zero value means unknown (InfiniBand, or not visible here).
func (s sysfs) roceNetdev(ib sysfs, dev string, port int) netdevInfo {
	var n netdevInfo
	// A downed netdev loses its IPv6 link-local address and with it GID 0,
	// so look further than the first slot.
	for i := 0; i < 16 && n.name == ""; i++ {
		n.name = ib.gidNetdev(dev, port, i)
	}
	if n.name == "" {
		n.name, _ = ib.read(path.Join(dev, "parent"))
	}
	if n.name == "" || strings.ContainsAny(n.name, "/ ") {
		return netdevInfo{}
	}
	n.oper, _ = s.read(path.Join(n.name, "operstate"))
	if v, ok := s.read(path.Join(n.name, "mtu")); ok {
		n.mtu, _ = strconv.Atoi(v)
	}
	return n
}
