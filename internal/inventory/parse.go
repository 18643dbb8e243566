package inventory

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
)

// The parsers below take sysfs/procfs text exactly as read (trailing newline
// included) and never panic: the kernel's formats drift between versions and
// vendors' out-of-tree drivers, and a fuzz target holds them to that.

// Enum is a sysfs "code: Name" value such as "4: ACTIVE" or "5: LinkUp".
type Enum struct {
	Code int    `json:"code"`
	Name string `json:"name"`
}

func (e Enum) String() string {
	if e.Name == "" {
		return strconv.Itoa(e.Code)
	}
	return fmt.Sprintf("%d: %s", e.Code, e.Name)
}

// Port states as the kernel prints them (enum ib_port_state).
const (
	StateDown   = 1
	StateInit   = 2
	StateArmed  = 3
	StateActive = 4
)

// Physical states (IB spec PortPhysicalState), also used for Ethernet ports.
const (
	PhysSleep    = 1
	PhysPolling  = 2
	PhysDisabled = 3
	PhysTraining = 4
	PhysLinkUp   = 5
	PhysErrRecov = 6
)

var portStateNames = []string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}

var physStateNames = []string{"<unknown>", "Sleep", "Polling", "Disabled",
	"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "Phy Test"}

// ParseState parses ports/<p>/state ("4: ACTIVE"). A bare code or a bare
// name is accepted too, because some vendor drivers print only one of them.
func ParseState(s string) (Enum, error) { return parseEnum(s, portStateNames, "state") }

// ParsePhysState parses ports/<p>/phys_state ("5: LinkUp").
func ParsePhysState(s string) (Enum, error) { return parseEnum(s, physStateNames, "phys_state") }

func parseEnum(raw string, names []string, what string) (Enum, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Enum{}, fmt.Errorf("%s: empty value", what)
	}
	codePart, namePart, hasColon := strings.Cut(s, ":")
	if !hasColon {
		if isDigits(s) {
			codePart, namePart = s, ""
		} else {
			codePart, namePart = "", s
		}
	}
	codePart, namePart = strings.TrimSpace(codePart), strings.TrimSpace(namePart)
	e := Enum{Code: -1, Name: namePart}
	if codePart != "" {
		if !isDigits(codePart) || len(codePart) > 3 {
			return Enum{}, fmt.Errorf("%s: bad code in %q", what, s)
		}
		e.Code, _ = strconv.Atoi(codePart)
	}
	if e.Code < 0 {
		for i, n := range names {
			if strings.EqualFold(n, namePart) {
				e.Code, e.Name = i, n
			}
		}
		if e.Code < 0 {
			return Enum{}, fmt.Errorf("%s: unknown name %q", what, namePart)
		}
	}
	if e.Name == "" && e.Code < len(names) {
		e.Name = names[e.Code]
	}
	if !printable(e.Name) {
		return Enum{}, fmt.Errorf("%s: unprintable name in %q", what, s)
	}
	return e, nil
}

// Rate is a port's signalling rate as sysfs reports it.
type Rate struct {
	Gbps  float64 `json:"gbps"`
	Width int     `json:"width,omitempty"` // lanes: 1X, 2X, 4X, 8X, 12X
	Speed string  `json:"speed,omitempty"` // per-lane generation: SDR ... NDR, XDR
}

func (r Rate) String() string {
	if r.Gbps == 0 && r.Width == 0 {
		return "-"
	}
	s := strconv.FormatFloat(r.Gbps, 'f', -1, 64) + " Gb/s"
	if r.Width > 0 {
		s += fmt.Sprintf(" (%dX %s)", r.Width, r.Speed)
	}
	return strings.Replace(s, " )", ")", 1)
}

// ParseRate parses ports/<p>/rate: "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)".
// The parenthesised width/speed is optional.
func ParseRate(raw string) (Rate, error) {
	s := strings.TrimSpace(raw)
	num, rest, _ := strings.Cut(s, " ")
	g, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(g) || math.IsInf(g, 0) || g < 0 || g > 1e6 {
		return Rate{}, fmt.Errorf("rate: bad number in %q", s)
	}
	rest = strings.TrimSpace(rest)
	unit, paren, _ := strings.Cut(rest, "(")
	switch strings.ToLower(strings.TrimSpace(unit)) {
	case "gb/sec", "gb/s", "gbps":
	default:
		return Rate{}, fmt.Errorf("rate: unknown unit in %q", s)
	}
	r := Rate{Gbps: g}
	if paren == "" {
		if strings.Contains(rest, "(") {
			return Rate{}, fmt.Errorf("rate: empty width in %q", s)
		}
		return r, nil
	}
	inner, ok := strings.CutSuffix(strings.TrimSpace(paren), ")")
	if !ok {
		return Rate{}, fmt.Errorf("rate: unclosed parenthesis in %q", s)
	}
	fields := strings.Fields(inner)
	if len(fields) == 0 || len(fields) > 2 {
		return Rate{}, fmt.Errorf("rate: bad width/speed in %q", s)
	}
	w, ok := strings.CutSuffix(strings.ToUpper(fields[0]), "X")
	if !ok || !isDigits(w) || len(w) > 2 {
		return Rate{}, fmt.Errorf("rate: bad width in %q", s)
	}
	r.Width, _ = strconv.Atoi(w)
	if r.Width == 0 {
		return Rate{}, fmt.Errorf("rate: zero width in %q", s)
	}
	if len(fields) == 2 {
		if !printable(fields[1]) || len(fields[1]) > 8 {
			return Rate{}, fmt.Errorf("rate: bad speed in %q", s)
		}
		r.Speed = fields[1]
	}
	return r, nil
}

// ParseGID parses gids/<i>: "fe80:0000:0000:0000:ee0d:9aff:fe2f:c21a". The
// result is always a 16-byte address; RoCE IPv4 GIDs come back IPv4-mapped.
func ParseGID(raw string) (netip.Addr, error) {
	s := strings.TrimSpace(raw)
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("gid: %w", err)
	}
	if !a.Is6() || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("gid: %q is not a 128-bit GID", s)
	}
	return a, nil
}

// IsUnusedGID reports whether a GID table slot is empty. The kernel shows
// free slots as all zeros; some drivers keep the fe80::/64 prefix with a zero
// interface ID.
func IsUnusedGID(a netip.Addr) bool {
	if !a.IsValid() || a.IsUnspecified() {
		return true
	}
	b := a.As16()
	for _, x := range b[8:] {
		if x != 0 {
			return false
		}
	}
	return b[0] == 0xfe && b[1] == 0x80 && b[2]|b[3]|b[4]|b[5]|b[6]|b[7] == 0
}

// GID types exactly as gid_attrs/types/<i> spells them.
const (
	TypeRoCEv1 = "IB/RoCE v1" // also every InfiniBand GID
	TypeRoCEv2 = "RoCE v2"
)

// ParseGIDType parses gid_attrs/types/<i> into TypeRoCEv1 or TypeRoCEv2.
func ParseGIDType(raw string) (string, error) {
	s := strings.ToLower(strings.Join(strings.Fields(raw), " "))
	switch s {
	case "roce v2", "rocev2", "v2":
		return TypeRoCEv2, nil
	case "ib/roce v1", "roce v1", "rocev1", "ib", "v1":
		return TypeRoCEv1, nil
	}
	return "", fmt.Errorf("gid type: unknown %q", strings.TrimSpace(raw))
}

// ShortType turns a GID type into show_gids' VER column (v1, v2).
func ShortType(t string) string {
	switch t {
	case TypeRoCEv2:
		return "v2"
	case TypeRoCEv1:
		return "v1"
	}
	return "?"
}

// Link layers as ports/<p>/link_layer spells them.
const (
	LayerIB  = "InfiniBand"
	LayerEth = "Ethernet"
)

// ParseLinkLayer parses ports/<p>/link_layer.
func ParseLinkLayer(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case strings.EqualFold(s, LayerIB):
		return LayerIB, nil
	case strings.EqualFold(s, LayerEth):
		return LayerEth, nil
	}
	return "", fmt.Errorf("link_layer: unknown %q", s)
}

// ParseLID parses lid and sm_lid, which the kernel prints in hex ("0x1a").
func ParseLID(raw string) (uint16, error) {
	s := strings.TrimSpace(raw)
	base := 10
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		s, base = h, 16
	}
	v, err := strconv.ParseUint(s, base, 16)
	if err != nil {
		return 0, fmt.Errorf("lid: bad value %q", strings.TrimSpace(raw))
	}
	return uint16(v), nil
}

// parseSmallInt parses decimal files such as mtu and numa_node.
func parseSmallInt(raw string) (int, error) {
	s := strings.TrimSpace(raw)
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad integer %q", s)
	}
	return int(v), nil
}

// Unlimited is RLIM_INFINITY as Memlock carries it.
const Unlimited = math.MaxUint64

// Memlock is RLIMIT_MEMLOCK in bytes.
type Memlock struct {
	Soft uint64 `json:"soft"`
	Hard uint64 `json:"hard"`
}

// ParseProcLimits finds "Max locked memory" in /proc/<pid>/limits.
func ParseProcLimits(text string) (Memlock, error) {
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, "Max locked memory")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			return Memlock{}, errors.New("limits: short 'Max locked memory' line")
		}
		soft, err1 := parseLimit(f[0])
		hard, err2 := parseLimit(f[1])
		if err := errors.Join(err1, err2); err != nil {
			return Memlock{}, err
		}
		return Memlock{Soft: soft, Hard: hard}, nil
	}
	return Memlock{}, errors.New("limits: no 'Max locked memory' line")
}

func parseLimit(s string) (uint64, error) {
	if s == "unlimited" {
		return Unlimited, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("limits: bad value %q", s)
	}
	return v, nil
}

// ParseCapEff returns the effective capability mask from /proc/<pid>/status.
func ParseCapEff(text string) (uint64, error) {
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, "CapEff:"); ok {
			v, err := strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("status: bad CapEff %q", strings.TrimSpace(rest))
			}
			return v, nil
		}
	}
	return 0, errors.New("status: no CapEff line")
}

// Capability bit numbers (linux/capability.h).
const (
	capNetRaw  = 13 // AF_PACKET sockets: reading LLDP frames
	capIPCLock = 14
)

// ParseNetnsMode reads ib_core's netns_mode module parameter ("Y" shared,
// "N" exclusive), the file fallback for netlink's `rdma system` query.
func ParseNetnsMode(raw string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "y", "1", "shared":
		return "shared", nil
	case "n", "0", "exclusive":
		return "exclusive", nil
	}
	return "", fmt.Errorf("netns_mode: unknown %q", strings.TrimSpace(raw))
}

// ParseAddrs reads the fixture address file: one netdev per line followed by
// its addresses in CIDR form; '#' starts a comment; a netdev may repeat.
func ParseAddrs(text string) (map[string][]netip.Prefix, error) {
	out := map[string][]netip.Prefix{}
	n := 0
	for line := range strings.Lines(text) {
		n++
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if _, ok := out[f[0]]; !ok {
			out[f[0]] = nil
		}
		for _, p := range f[1:] {
			pfx, err := netip.ParsePrefix(p)
			if err != nil {
				return nil, fmt.Errorf("addrs line %d: %w", n, err)
			}
			out[f[0]] = append(out[f[0]], pfx)
		}
	}
	return out, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// printable keeps terminal control bytes from a corrupt sysfs file out of
// doctor's output.
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return false
		}
	}
	return true
}

// DefaultRoute is the interface of the IPv4 default route in a
// proc/net/route table (destination and mask 00000000); "" when there is
// none or the text is not such a table.
func DefaultRoute(table string) string {
	for i, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 8 {
			continue // the header, or not a route
		}
		if f[1] == "00000000" && f[7] == "00000000" {
			return f[0]
		}
	}
	return ""
}
