package selffault

import (
	"bufio"
	"fmt"
	"io/fs"
	"math"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// A coordinator's heap is mostly one long-lived store (18 bytes a directed
// cell) plus the garbage each round leaves. Go's collector lets the heap
// grow to twice what was live at its last cycle, so at 4,096 nodes a 3 GB
// store peaks past 7 GB and a container sized for the store is OOM-killed
// mid-sweep: the tester's fault, reported by the kernel as a dead replica.
// A soft memory limit makes the collector run before that instead.

// MemoryLimit is the soft limit chosen for the Go runtime, and why.
type MemoryLimit struct {
	Bytes  uint64 // 0: none (the collector's default pacing)
	Off    bool   // turned off on purpose: an inherited GOMEMLIMIT is lifted too
	Source string // what set it, for the log: the key, GOMEMLIMIT or the cgroup
	// Cgroup is the tightest cgroup memory limit over this process, 0 when
	// there is none or it could not be read.
	Cgroup     uint64
	CgroupPath string
}

// AutoShare is the part of a container's hard limit "auto" gives the heap;
// the rest covers what the runtime does not count (bolt's mapped pages,
// cgo, thread stacks) and the kernel's own charges.
const AutoShare = 0.9

// memSetting is a parsed memory_limit value; all zero is "auto".
type memSetting struct {
	off     bool
	bytes   uint64
	percent float64 // of the cgroup limit; 0 = not a percentage
}

var units = []struct {
	suffix string
	mult   uint64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}

// ParseMemoryLimit checks a memory_limit setting: "auto", "off", a size
// ("5GiB", "5000MiB", "6GB", or bytes) or a share of the container's limit
// ("80%").
func ParseMemoryLimit(s string) error {
	_, err := parseMemSetting(s)
	return err
}

func parseMemSetting(s string) (memSetting, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "auto":
		return memSetting{}, nil
	case "off", "none", "0":
		return memSetting{off: true}, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v <= 0 || v > 100 {
			return memSetting{}, fmt.Errorf("%q: a share of the container's limit is a number from 1 to 100 followed by %% (like 80%%)", s)
		}
		return memSetting{percent: v}, nil
	}
	num, mult := s, uint64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || v*float64(mult) >= math.MaxInt64 {
		return memSetting{}, fmt.Errorf("%q is not a size: write auto, off, a size like 5GiB or 6000MiB, or a share of the container's limit like 80%%", s)
	}
	b := uint64(v * float64(mult))
	if b < 64<<20 {
		return memSetting{}, fmt.Errorf("%q is below 64 MiB, less than a coordinator holds before its first sweep: give it at least 256MiB", s)
	}
	return memSetting{bytes: b}, nil
}

// ChooseMemoryLimit decides the limit for setting (the config key named
// key), with goMemLimit the GOMEMLIMIT environment variable and root the
// file system holding /proc and /sys (os.DirFS("/") in production).
// "auto" keeps an operator's GOMEMLIMIT, else takes 90% of the container's
// memory limit, else none.
func ChooseMemoryLimit(key, setting, goMemLimit string, root fs.FS) (MemoryLimit, error) {
	m, err := parseMemSetting(setting)
	if err != nil {
		return MemoryLimit{}, err
	}
	var out MemoryLimit
	out.Cgroup, out.CgroupPath = CgroupMemoryMax(root)
	switch {
	case m.off:
		out.Off, out.Source = true, key+"=off"
	case m.bytes > 0:
		out.Bytes, out.Source = m.bytes, key
	case m.percent > 0:
		if out.Cgroup == 0 {
			return out, fmt.Errorf("%q is a share of the container's memory limit, but this process runs under none: give a size like 5GiB, or auto", setting)
		}
		out.Bytes, out.Source = uint64(float64(out.Cgroup)*m.percent/100), fmt.Sprintf("%s (%g%% of cgroup %s memory limit)", key, m.percent, out.CgroupPath)
	case strings.TrimSpace(goMemLimit) != "" && goMemLimit != "off":
		// The runtime applied it at start; report, do not override.
		out.Source = "GOMEMLIMIT=" + goMemLimit
	case out.Cgroup > 0:
		out.Bytes, out.Source = uint64(float64(out.Cgroup)*AutoShare), fmt.Sprintf("auto: %g%% of cgroup %s memory limit", AutoShare*100, out.CgroupPath)
	}
	return out, nil
}

// Apply sets the runtime's soft limit as chosen (an inherited GOMEMLIMIT
// stays unless the choice was a size or off) and returns the limit now in
// force; math.MaxInt64 is none.
func (m MemoryLimit) Apply() int64 {
	switch {
	case m.Bytes > 0:
		debug.SetMemoryLimit(int64(m.Bytes))
	case m.Off:
		debug.SetMemoryLimit(math.MaxInt64)
	}
	return debug.SetMemoryLimit(-1)
}

// CgroupMemoryMax is the tightest memory limit of the cgroups this process
// is in (cgroup v2 memory.max up the hierarchy, or v1 memory.limit_in_bytes)
// and where it was set; 0 when there is none. A limit set on a parent
// binds the children too, so every level up to the mount is read.
func CgroupMemoryMax(root fs.FS) (uint64, string) {
	b, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return 0, ""
	}
	var v2, v1 string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		id, rest, _ := strings.Cut(sc.Text(), ":")
		ctrls, p, ok := strings.Cut(rest, ":")
		switch {
		case !ok:
		case id == "0" && ctrls == "":
			v2 = p
		case hasController(ctrls, "memory"):
			v1 = p
		}
	}
	best, where := uint64(0), ""
	walk := func(mount, p, file string) {
		for p = path.Clean("/" + p); ; p = path.Dir(p) {
			if v, ok := readLimit(root, path.Join(mount, p, file)); ok && (best == 0 || v < best) {
				best, where = v, p
			}
			if p == "/" {
				return
			}
		}
	}
	switch {
	case v1 != "":
		walk("sys/fs/cgroup/memory", v1, "memory.limit_in_bytes")
	case v2 != "":
		walk("sys/fs/cgroup", v2, "memory.max")
	}
	return best, where
}

func hasController(list, want string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == want {
			return true
		}
	}
	return false
}

// readLimit reads one limit file; "max" and v1's page-rounded "no limit"
// (close to 2^63) read as none.
func readLimit(root fs.FS, name string) (uint64, bool) {
	b, err := fs.ReadFile(root, strings.TrimPrefix(name, "/"))
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v == 0 || v >= 1<<62 {
		return 0, false
	}
	return v, true
}
