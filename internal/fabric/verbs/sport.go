package verbs

import (
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// A RoCE v2 packet's UDP source port is the one field of its 5-tuple
// that differs per QP, so it decides the path ECMP gives a test. The
// driver picks it; this file knows the rule of the drivers whose rule is
// the kernel's rdma_get_udp_sport: the GRH flow label folded to 14 bits,
// and when the label is 0, a label derived from both QP numbers (so an RC
// connection's two directions share one port). Debian 12's rdma_rxe (6.1)
// does this; the lab checks it against a capture of the wire on every
// Clos run (lab/clos.sh, "path truth"). Any other driver's port is left
// unknown rather than assumed.

// sportRule is how a device's driver picks an RC QP's source port.
type sportRule uint8

const (
	sportUnknown   sportRule = iota
	sportFlowLabel           // rdma_get_udp_sport
)

// sportRuleOf reads dev's driver from ib (a /sys/class/infiniband view)
// for a kernel release like "6.1.0-56-amd64". rxe has no PCI device, a
// netdev "parent" and node type 1 (CA); siw has a parent too but is an
// iWARP RNIC (type 4) without RoCE. rxe took the kernel's rule in 5.18;
// mlx5's RC QPs derive the label from both QP numbers since 5.10. Older
// kernels hashed other inputs, and their ports are left unknown.
func (s sysfs) sportRuleOf(dev, kernel string) sportRule {
	switch {
	case s.driver(dev) == "mlx5_core" && kernelAtLeast(kernel, 5, 10):
		return sportFlowLabel
	case s.driver(dev) == "" && s.has(path.Join(dev, "parent")) && s.nodeType(dev) == 1 && kernelAtLeast(kernel, 5, 18):
		return sportFlowLabel
	}
	return sportUnknown
}

func (s sysfs) driver(dev string) string {
	if s.root == nil {
		return ""
	}
	target, err := fs.ReadLink(s.root, path.Join(dev, "device", "driver"))
	if err != nil {
		return ""
	}
	return path.Base(target)
}

func (s sysfs) has(p string) bool {
	_, ok := s.read(p)
	return ok
}

// nodeType is the number node_type starts with ("1: CA").
func (s sysfs) nodeType(dev string) int {
	v, _ := s.read(path.Join(dev, "node_type"))
	n, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(v, ":", 2)[0]))
	return n
}

// kernelAtLeast compares a release string's major.minor with want.
func kernelAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimLeftFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
