package inventory

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/counters"
)

// Options injects what sysfs cannot tell from a file tree. Nil functions fall
// back to files under the scanned root, so a captured tree (or a fixture) is
// self-contained: see FixtureOptions and SystemOptions.
type Options struct {
	// Addrs returns a netdev's addresses. Nil: addresses unknown, and GID
	// selection cannot check that a GID's IP is really on its netdev.
	Addrs func(netdev string) ([]netip.Prefix, error)
	// MemlockLimit returns RLIMIT_MEMLOCK. Nil: proc/self/limits.
	MemlockLimit func() (Memlock, error)
	// NetnsMode returns the rdma subsystem netns mode (shared|exclusive).
	// Nil: sys/module/ib_core/parameters/netns_mode.
	NetnsMode func() (string, error)
	// Access tests that this process may open a device node (path relative
	// to the root, e.g. dev/infiniband/uverbs0) for read/write. Nil: only
	// existence is checked, as file modes in a copied tree mean nothing.
	Access func(path string) error
	// Counters reads each port's error and congestion counters (the
	// doctor shows them). Off for the worker's inventory: it is rescanned
	// on every health refresh and gossiped, and counters are read where a
	// test needs them.
	Counters bool
}

const (
	sysIB     = "sys/class/infiniband"
	sysNet    = "sys/class/net"
	sysVerbs  = "sys/class/infiniband_verbs"
	sysModule = "sys/module"
	devIB     = "dev/infiniband"
	configRDM = "sys/kernel/config/rdma_cm"
)

// Scan reads the RDMA inventory under fsys, whose root stands for "/". A
// host without RDMA devices is not an error: it yields a Host with no
// Devices. Values that cannot be read or parsed become Host.Warnings; only
// an unreadable device directory is an error.
func Scan(fsys fs.FS, opts Options) (*Host, error) {
	s := &scanner{fsys: fsys, h: &Host{}, counters: opts.Counters}
	if err := s.devices(); err != nil {
		return nil, err
	}
	s.netdevs(opts.Addrs)
	s.environment(opts)
	return s.h, nil
}

type scanner struct {
	fsys     fs.FS
	h        *Host
	counters bool
}

func (s *scanner) warnf(format string, args ...any) {
	s.h.Warnings = append(s.h.Warnings, fmt.Sprintf(format, args...))
}

func (s *scanner) devices() error {
	ents, err := fs.ReadDir(s.fsys, sysIB)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list RDMA devices: %w", err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.SortFunc(names, naturalCompare)
	verbs := s.uverbsByDevice()
	for _, name := range names {
		d := s.device(name)
		d.Uverbs = verbs[name]
		s.h.Devices = append(s.h.Devices, d)
	}
	return nil
}

func (s *scanner) device(name string) Device {
	dir := path.Join(sysIB, name)
	d := Device{
		Name:     name,
		HCAType:  s.optional(dir, "hca_type"),
		BoardID:  s.optional(dir, "board_id"),
		FWVer:    s.optional(dir, "fw_ver"),
		NodeGUID: s.optional(dir, "node_guid"),
		NUMANode: -1,
		PCI:      s.pciAddress(dir),
	}
	if v, err := readValue(s.fsys, path.Join(dir, "device/numa_node")); err == nil {
		if n, err := parseSmallInt(v); err == nil {
			d.NUMANode = n
		}
	}
	ents, err := fs.ReadDir(s.fsys, path.Join(dir, "ports"))
	if err != nil {
		s.warnf("%s: no ports directory: %v", name, err)
		return d
	}
	for _, n := range numericNames(ents) {
		d.Ports = append(d.Ports, s.port(name, n))
	}
	return d
}

// pciAddress prefers device/uevent's PCI_SLOT_NAME (a plain file, so
// fixtures need no symlinks), then the device symlink's target.
func (s *scanner) pciAddress(dir string) string {
	if ev, err := readValue(s.fsys, path.Join(dir, "device/uevent")); err == nil {
		for line := range strings.Lines(ev) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "PCI_SLOT_NAME="); ok {
				return v
			}
		}
		return ""
	}
	if target, err := fs.ReadLink(s.fsys, path.Join(dir, "device")); err == nil {
		base := path.Base(target)
		if strings.Count(base, ":") == 2 && strings.Contains(base, ".") {
			return base
		}
	}
	return ""
}

func (s *scanner) port(dev string, num int) Port {
	dir := path.Join(sysIB, dev, "ports", strconv.Itoa(num))
	where := fmt.Sprintf("%s/%d", dev, num)
	p := Port{Num: num}
	var err error
	if p.State, err = ParseState(s.optional(dir, "state")); err != nil {
		s.warnf("%s: %v", where, err)
	}
	if p.PhysState, err = ParsePhysState(s.optional(dir, "phys_state")); err != nil {
		s.warnf("%s: %v", where, err)
	}
	if p.LinkLayer, err = ParseLinkLayer(s.optional(dir, "link_layer")); err != nil {
		// Old kernels have no link_layer file and only did InfiniBand.
		p.LinkLayer = LayerIB
		s.warnf("%s: %v; assuming InfiniBand", where, err)
	}
	p.RateRaw = s.optional(dir, "rate")
	if p.Rate, err = ParseRate(p.RateRaw); err != nil {
		s.warnf("%s: %v", where, err)
	}
	for _, f := range []struct {
		file string
		dst  *uint16
	}{{"lid", &p.LID}, {"sm_lid", &p.SMLID}} {
		v := s.optional(dir, f.file)
		if v == "" {
			continue
		}
		if *f.dst, err = ParseLID(v); err != nil {
			s.warnf("%s: %v", where, err)
		}
	}
	p.GIDs = s.gids(dir, where)
	// Missing counters are normal (old kernels, containers without the
	// files); a counter that cannot be read is worth a warning.
	if s.counters {
		c, err := counters.Read(s.fsys, dev, num)
		if err == nil {
			p.Counters = c.NonZero()
		} else if !errors.Is(err, counters.ErrNoCounters) {
			s.warnf("%v", err)
		}
	}
	if v, err := readValue(s.fsys, path.Join(configRDM, dev, "ports", strconv.Itoa(num), "default_roce_mode")); err == nil {
		if t, err := ParseGIDType(v); err == nil {
			p.RoCEDefaultMode = t
		} else {
			s.warnf("%s: default_roce_mode: %v", where, err)
		}
	}
	return p
}

// gids reads the used GID entries. The kernel returns EINVAL for types and
// ndevs of empty slots, so those files are only read for used entries; an
// unreadable ndevs file means the entry has no netdev (IB, or a netdev that
// is gone), which is a finding, not an error.
func (s *scanner) gids(dir, where string) []GID {
	ents, err := fs.ReadDir(s.fsys, path.Join(dir, "gids"))
	if err != nil {
		return nil
	}
	var out []GID
	for _, i := range numericNames(ents) {
		idx := strconv.Itoa(i)
		raw, err := readValue(s.fsys, path.Join(dir, "gids", idx))
		if err != nil {
			continue
		}
		a, err := ParseGID(raw)
		if err != nil {
			s.warnf("%s: gid %d: %v", where, i, err)
			continue
		}
		if IsUnusedGID(a) {
			continue
		}
		g := GID{Index: i, Addr: a}
		if t, err := readValue(s.fsys, path.Join(dir, "gid_attrs/types", idx)); err == nil {
			if g.Type, err = ParseGIDType(t); err != nil {
				s.warnf("%s: gid %d: %v", where, i, err)
			}
		}
		if nd, err := readValue(s.fsys, path.Join(dir, "gid_attrs/ndevs", idx)); err == nil {
			g.Netdev = strings.TrimSpace(nd)
		}
		out = append(out, g)
	}
	return out
}

func (s *scanner) uverbsByDevice() map[string]string {
	out := map[string]string{}
	ents, err := fs.ReadDir(s.fsys, sysVerbs)
	if err != nil {
		return out
	}
	s.h.env.verbsClass = true
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "uverbs") {
			continue
		}
		if dev, err := readValue(s.fsys, path.Join(sysVerbs, e.Name(), "ibdev")); err == nil {
			out[strings.TrimSpace(dev)] = e.Name()
		}
	}
	return out
}

func (s *scanner) netdevs(addrs func(string) ([]netip.Prefix, error)) {
	s.h.AddrsKnown = addrs != nil
	ents, err := fs.ReadDir(s.fsys, sysNet)
	if err != nil {
		return
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.SortFunc(names, naturalCompare)
	for _, name := range names {
		dir := path.Join(sysNet, name)
		n := Netdev{Name: name, OperState: s.optional(dir, "operstate"), Address: s.optional(dir, "address")}
		if v := s.optional(dir, "mtu"); v != "" {
			if m, err := parseSmallInt(v); err == nil {
				n.MTU = m
			} else {
				s.warnf("netdev %s: mtu: %v", name, err)
			}
		}
		if addrs != nil {
			ps, err := addrs(name)
			if err != nil {
				s.warnf("netdev %s: addresses: %v", name, err)
			}
			n.Addrs = ps
		}
		s.h.Netdevs = append(s.h.Netdevs, n)
	}
}

func (s *scanner) environment(opts Options) {
	e := &s.h.env
	if ents, err := fs.ReadDir(s.fsys, sysModule); err == nil {
		e.modulesSeen = true
		e.modules = map[string]bool{}
		for _, m := range ents {
			e.modules[m.Name()] = true
		}
	}
	if ents, err := fs.ReadDir(s.fsys, devIB); err == nil {
		e.devIBSeen = true
		e.devIB = map[string]bool{}
		for _, d := range ents {
			e.devIB[d.Name()] = true
		}
	}
	e.access = opts.Access
	if opts.MemlockLimit != nil {
		e.memlock, e.memlockErr = opts.MemlockLimit()
	} else if v, err := readValue(s.fsys, "proc/self/limits"); err != nil {
		e.memlockErr = err
	} else {
		e.memlock, e.memlockErr = ParseProcLimits(v)
	}
	if v, err := readValue(s.fsys, "proc/net/route"); err == nil {
		e.defaultRoute = DefaultRoute(v)
	}
	if v, err := readValue(s.fsys, "proc/self/status"); err != nil {
		e.capErr = err
	} else {
		e.capEff, e.capErr = ParseCapEff(v)
	}
	if opts.NetnsMode != nil {
		if e.netnsMode, e.netnsErr = opts.NetnsMode(); e.netnsErr == nil {
			return
		}
	}
	// ib_core's parameter tracks `rdma system set netns` too, so it is a
	// faithful fallback on kernels whose RDMA netlink lacks the query.
	v, err := readValue(s.fsys, sysModule+"/ib_core/parameters/netns_mode")
	if err != nil {
		if e.netnsErr == nil {
			e.netnsErr = err
		}
		return
	}
	e.netnsMode, e.netnsErr = ParseNetnsMode(v)
}

// optional reads a value whose absence is normal (board_id, hca_type on
// some drivers); it returns "" then.
func (s *scanner) optional(dir, file string) string {
	v, err := readValue(s.fsys, path.Join(dir, file))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(v)
}

// maxValue bounds a read: sysfs values are one line, proc status is ~1.5 KiB;
// anything larger is not what we think it is.
const maxValue = 64 << 10

func readValue(fsys fs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxValue))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func numericNames(ents []fs.DirEntry) []int {
	var out []int
	for _, e := range ents {
		if !isDigits(e.Name()) || len(e.Name()) > 6 {
			continue
		}
		n, _ := strconv.Atoi(e.Name())
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// naturalCompare orders mlx5_2 before mlx5_10, so rails follow the numbering
// people read in ibstat rather than byte order.
func naturalCompare(a, b string) int {
	if c := naturalCompareRuns(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b) // mlx5_01 vs mlx5_1: any fixed order
}

func naturalCompareRuns(a, b string) int {
	for a != "" && b != "" {
		ra, restA := leadingRun(a)
		rb, restB := leadingRun(b)
		if isDigits(ra) && isDigits(rb) {
			ta, tb := strings.TrimLeft(ra, "0"), strings.TrimLeft(rb, "0")
			if c := len(ta) - len(tb); c != 0 {
				return c
			}
			if c := strings.Compare(ta, tb); c != 0 {
				return c
			}
		} else if c := strings.Compare(ra, rb); c != 0 {
			return c
		}
		a, b = restA, restB
	}
	return len(a) - len(b)
}

func leadingRun(s string) (run, rest string) {
	digit := s[0] >= '0' && s[0] <= '9'
	i := 1
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') == digit {
		i++
	}
	return s[:i], s[i:]
}
