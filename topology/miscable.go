package topology

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A miscabling is one way the cables differ from the plan. A simulated
// fabric routes, traces and announces LLDP over the fabric as cabled
// while its coordinator judges against the plan, so a cabling check has
// something real to find.

// MiscableSyntax lists the specs Miscable reads, for error messages.
const MiscableSyntax = "swap=NODE/DEV,NODE/DEV, move=NODE/DEV>SWITCH:PORT, uplink=SWITCH:PORT>SWITCH:PORT, missing=NODE/DEV or missing=SWITCH:PORT"

// Miscable is plan as cabled after specs, each one of:
//
//	swap=NODE/DEV,NODE/DEV          two HCAs' cables exchanged at the switch side
//	move=NODE/DEV>SWITCH:PORT       an HCA's cable in another switch port, free in the plan
//	uplink=SWITCH:PORT>SWITCH:PORT  the cable at the first port (between switches) has its far end at the second
//	missing=NODE/DEV                an HCA's cable is not there
//	missing=SWITCH:PORT             the cable at that port is not there
//
// A topology needs every HCA cabled, so a missing HCA cable stays in
// cabled and its HCA is listed in unplugged: the port is down and hears
// no neighbour, which a simulation applies. Switches and HCAs keep their
// plan indices, so an HCA index means the same port in both. Each cable
// may be named by one spec only, and a port a spec cables to must be
// free in the plan and in the other specs.
func Miscable(plan *Topology, specs []string) (cabled *Topology, unplugged []int, err error) {
	m := &miscabler{plan: plan, cables: slices.Clone(plan.Cables), touched: map[int]string{},
		taken: map[[2]int]string{}, removed: map[int]bool{}}
	var errs []error
	for _, s := range specs {
		if err := m.apply(strings.TrimSpace(s)); err != nil {
			errs = append(errs, fmt.Errorf("miscabling %q: %w", s, err))
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	cables := m.cables[:0:0]
	for i, c := range m.cables {
		if !m.removed[i] {
			cables = append(cables, c)
		}
	}
	// New fills in tiers and planes in place: the plan's own slices must
	// not change under it.
	switches := slices.Clone(plan.Switches)
	t, err := New(plan.LinkLayer, switches, slices.Clone(plan.HCAs), cables)
	if err != nil {
		return nil, nil, fmt.Errorf("the plan miscabled by %s: %w", strings.Join(specs, " "), err)
	}
	return t, m.unplugged, nil
}

type miscabler struct {
	plan      *Topology
	cables    []Cable
	touched   map[int]string    // cable -> the spec that changed it
	taken     map[[2]int]string // switch, port -> the spec that cabled it
	removed   map[int]bool
	unplugged []int
}

func (m *miscabler) apply(spec string) error {
	kind, rest, _ := strings.Cut(spec, "=")
	switch kind {
	case "swap":
		a, b, ok := strings.Cut(rest, ",")
		if !ok {
			return fmt.Errorf("want swap=NODE/DEV,NODE/DEV (two HCAs, e.g. swap=node-03/mlx5_0,node-03/mlx5_1)")
		}
		return m.swap(spec, a, b)
	case "move":
		from, to, ok := strings.Cut(rest, ">")
		if !ok {
			return fmt.Errorf("want move=NODE/DEV>SWITCH:PORT (e.g. move=node-03/mlx5_0>leaf-r0-01:9)")
		}
		h, err := m.hca(from)
		if err != nil {
			return err
		}
		return m.moveFar(spec, m.plan.HCACable(h), End{Switch: -1, HCA: h}, to)
	case "uplink":
		from, to, ok := strings.Cut(rest, ">")
		if !ok {
			return fmt.Errorf("want uplink=SWITCH:PORT>SWITCH:PORT (the cable at the first port now reaches the second, e.g. uplink=leaf-r0-00:5>spine-r0-00:9)")
		}
		e, err := m.switchPort(from, true)
		if err != nil {
			return err
		}
		c := m.cableAt(e)
		if c < 0 {
			return fmt.Errorf("%s: no cable there in the plan; name the port of a cable between switches", from)
		}
		if h, _, ok := m.plan.Cables[c].hostSide(); ok {
			return fmt.Errorf("%s: that is %s's cable, not one between switches; write move=%s>%s", from, m.plan.HCAName(h), m.plan.HCAName(h), to)
		}
		return m.moveFar(spec, c, e, to)
	case "missing":
		return m.missing(spec, rest)
	}
	return fmt.Errorf("%q: unknown kind; want %s", kind, MiscableSyntax)
}

func (m *miscabler) swap(spec, a, b string) error {
	ha, err := m.hca(a)
	if err != nil {
		return err
	}
	hb, err := m.hca(b)
	if err != nil {
		return err
	}
	if ha == hb {
		return fmt.Errorf("%s is named twice; name two different HCAs", a)
	}
	ca, cb := m.plan.HCACable(ha), m.plan.HCACable(hb)
	if err := m.touch(spec, ca, a); err != nil {
		return err
	}
	if err := m.touch(spec, cb, b); err != nil {
		return err
	}
	fa, fb := m.far(ca, End{Switch: -1, HCA: ha}), m.far(cb, End{Switch: -1, HCA: hb})
	*fa, *fb = *fb, *fa
	return nil
}

// moveFar puts the far end of cable c (seen from near) at the port to.
func (m *miscabler) moveFar(spec string, c int, near End, to string) error {
	e, err := m.switchPort(to, false)
	if err != nil {
		return err
	}
	if by, ok := m.taken[[2]int{e.Switch, e.Port}]; ok {
		return fmt.Errorf("%s: %s cables to it already; give each spec its own free port", to, by)
	}
	if !near.IsHCA() && near.Switch == e.Switch {
		return fmt.Errorf("%s: the cable would join %s to itself; name a port of another switch", to, m.plan.Switches[e.Switch].Name)
	}
	name := m.plan.EndName(near)
	if err := m.touch(spec, c, name); err != nil {
		return err
	}
	*m.far(c, near) = e
	m.taken[[2]int{e.Switch, e.Port}] = spec
	return nil
}

func (m *miscabler) missing(spec, end string) error {
	if strings.Contains(end, "/") {
		h, err := m.hca(end)
		if err != nil {
			return err
		}
		m.unplugged = append(m.unplugged, h)
		return m.touch(spec, m.plan.HCACable(h), end)
	}
	e, err := m.switchPort(end, true)
	if err != nil {
		return err
	}
	c := m.cableAt(e)
	if c < 0 {
		return fmt.Errorf("%s: nothing is cabled there in the plan; name a planned cable's port or NODE/DEV", end)
	}
	if err := m.touch(spec, c, end); err != nil {
		return err
	}
	if h, _, ok := m.plan.Cables[c].hostSide(); ok {
		m.unplugged = append(m.unplugged, h)
	} else {
		m.removed[c] = true
	}
	return nil
}

// touch claims cable c for spec: two specs changing one cable would
// depend on their order.
func (m *miscabler) touch(spec string, c int, end string) error {
	if by, ok := m.touched[c]; ok {
		return fmt.Errorf("%s: its cable (%s) is changed by %q already; give one spec per cable", end, m.plan.CableName(c), by)
	}
	m.touched[c] = spec
	return nil
}

// far is the end of cable c that is not near.
func (m *miscabler) far(c int, near End) *End {
	if sameEnd(m.cables[c].A, near) {
		return &m.cables[c].B
	}
	return &m.cables[c].A
}

// sameEnd compares ends by what they name: a plan may leave HCA or Port
// unset on the side that does not use it.
func sameEnd(a, b End) bool {
	if a.IsHCA() || b.IsHCA() {
		return a.IsHCA() && b.IsHCA() && a.HCA == b.HCA
	}
	return a.Switch == b.Switch && a.Port == b.Port
}

// hca finds NODE/DEV among the plan's HCAs.
func (m *miscabler) hca(name string) (int, error) {
	node, dev, ok := strings.Cut(name, "/")
	if !ok || node == "" || dev == "" {
		return 0, fmt.Errorf("%q: want an HCA as NODE/DEV (e.g. %s)", name, m.plan.HCAName(0))
	}
	for h, x := range m.plan.HCAs {
		if x.Node == node && x.Device == dev {
			return h, nil
		}
	}
	return 0, fmt.Errorf("%s: no such HCA in the plan (HCAs are named like %s)", name, m.plan.HCAName(0))
}

// switchPort reads SWITCH:PORT. A port to cable to (planned false) must
// be free in the plan; one naming a cable (planned true) need not be.
func (m *miscabler) switchPort(s string, planned bool) (End, error) {
	name, port, ok := strings.Cut(s, ":")
	if !ok {
		return End{}, fmt.Errorf("%q: want SWITCH:PORT (e.g. %s:%d)", s, m.plan.Switches[0].Name, 1)
	}
	sw, found := m.plan.Switch(name)
	if !found {
		return End{}, fmt.Errorf("%s: no switch %q in the plan (switches are named like %s)", s, name, m.plan.Switches[0].Name)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 {
		return End{}, fmt.Errorf("%s: port %q must be a number from 1", s, port)
	}
	e := End{Switch: sw, HCA: -1, Port: p}
	if c := m.cableAt(e); !planned && c >= 0 {
		return End{}, fmt.Errorf("%s: the plan cables that port already (%s); name a free port", s, m.plan.CableName(c))
	}
	return e, nil
}

// cableAt is the plan's cable at a switch port, -1 for none.
func (m *miscabler) cableAt(e End) int {
	for i, c := range m.plan.Cables {
		if sameEnd(c.A, e) || sameEnd(c.B, e) {
			return i
		}
	}
	return -1
}
