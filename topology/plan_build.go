package topology

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// planBuilder turns a plan's ends into the parts New takes, keeping for
// each port the cable and line that first used it so that a second use
// can name both lines.
type planBuilder struct {
	*plan
	switches []Switch
	hcas     []HCA
	cables   []Cable
	swIndex  map[string]int
	hcaIndex map[hcaKey]int
	devRail  map[[2]string]int // node, device → rail, to catch one device on two rails
	used     map[portKey]portUse
	named    map[string]bool // every switch name written as NAME:PORT or listed
}

type portKey struct {
	sw, hca, port int
}

type portUse struct {
	cable, line int
}

func (p *plan) build() (*Topology, error) {
	b := &planBuilder{plan: p, swIndex: map[string]int{}, hcaIndex: map[hcaKey]int{},
		devRail: map[[2]string]int{}, used: map[portKey]portUse{}, named: map[string]bool{}}
	for _, o := range p.overrides {
		if i, dup := b.swIndex[o.sw.Name]; dup {
			return nil, p.errf(o.line, "switches", "switch %s is listed twice (also on line %d); merge the entries", o.sw.Name, p.overrides[i].line)
		}
		b.swIndex[o.sw.Name] = len(b.switches)
		b.switches = append(b.switches, o.sw)
		b.named[o.sw.Name] = true
	}
	for _, c := range p.cables {
		for _, s := range []string{strings.TrimSpace(c.a), strings.TrimSpace(c.b)} {
			if name, _, ok := strings.Cut(s, ":"); ok && !strings.ContainsAny(s, "/ ") {
				b.named[name] = true
			}
		}
	}
	for i, c := range p.cables {
		if err := b.cable(i, c); err != nil {
			return nil, err
		}
	}
	cabled := make([]bool, len(b.switches))
	for _, c := range b.cables {
		for _, e := range []End{c.A, c.B} {
			if !e.IsHCA() {
				cabled[e.Switch] = true
			}
		}
	}
	for i, o := range p.overrides {
		if !cabled[i] {
			return nil, p.errf(o.line, "switches", "switch %s has no cable; cable it or drop it from switches", o.sw.Name)
		}
	}
	t, err := New(p.ll, b.switches, b.hcas, b.cables)
	if err != nil {
		return nil, b.newError(err)
	}
	return t, nil
}

func (b *planBuilder) cable(i int, c planCable) error {
	where := fmt.Sprintf("cable %d", i+1)
	a, err := b.end(c.a)
	if err != nil {
		return b.errf(c.aLine, where+", field a", "%v", err)
	}
	z, err := b.end(c.b)
	if err != nil {
		return b.errf(c.bLine, where+", field b", "%v", err)
	}
	if a == z {
		return b.errf(c.bLine, where+", field b", "%s is also end a; a cable joins two different ports", strings.TrimSpace(c.b))
	}
	for side, e := range []End{a, z} {
		k := portKey{e.Switch, e.HCA, e.Port}
		if e.IsHCA() {
			k.port = 0 // one cable per HCA, whatever port it is given
		}
		field, line := "a", c.aLine
		if side == 1 {
			field, line = "b", c.bLine
		}
		if prev, dup := b.used[k]; dup {
			return b.errf(line, where+", field "+field, "%s is already in cable %d on line %d; one port takes one cable, so fix one of the two lines",
				b.endName(e), prev.cable+1, prev.line)
		}
		b.used[k] = portUse{i, line}
	}
	b.cables = append(b.cables, Cable{A: a, B: z, Speed: strings.TrimSpace(c.speed)})
	return nil
}

func (b *planBuilder) endName(e End) string {
	if e.IsHCA() {
		h := b.hcas[e.HCA]
		if h.Device != "" {
			return fmt.Sprintf("%s/%s (rail %d)", h.Node, h.Device, h.Rail)
		}
		return fmt.Sprintf("%s rail %d", h.Node, h.Rail)
	}
	return b.switches[e.Switch].Name + ":" + strconv.Itoa(e.Port)
}

// end reads one end, creating the switch or HCA it names on first use.
func (b *planBuilder) end(s string) (End, error) {
	s = strings.TrimSpace(s)
	f := strings.Fields(s)
	switch {
	case s == "":
		return End{}, fmt.Errorf("empty; write %s", planEndForms)
	case len(f) == 3 && f[1] == "rail":
		rail, err := strconv.Atoi(f[2])
		if err != nil || rail < 0 {
			return End{}, fmt.Errorf("%q: rail %q is not a whole number from 0 (write %s rail N)", s, f[2], f[0])
		}
		node, dev, _ := strings.Cut(f[0], "/")
		if strings.Contains(f[0], "/") && dev == "" {
			return End{}, fmt.Errorf("%q names no device after / (write %s rail %d or %s/DEVICE rail %d)", s, node, rail, node, rail)
		}
		return b.hca(s, node, dev, rail)
	case len(f) == 1 && strings.Contains(s, "/"):
		node, dev, _ := strings.Cut(s, "/")
		rail, ok := trailingNumber(dev)
		if !ok {
			return End{}, fmt.Errorf("%q: device %q has no trailing number to take the rail from (write %s rail N)", s, dev, s)
		}
		return b.hca(s, node, dev, rail)
	case len(f) == 1 && strings.Contains(s, ":"):
		i := strings.LastIndex(s, ":")
		name, port := s[:i], s[i+1:]
		n, err := strconv.Atoi(port)
		if name == "" {
			return End{}, fmt.Errorf("%q names no switch (write SWITCH:PORT)", s)
		}
		if err != nil || n < 1 {
			return End{}, fmt.Errorf("%q: port %q is not a whole number from 1 (write %s:PORT, ports counting from 1)", s, port, name)
		}
		return End{Switch: b.switchIndex(name), HCA: -1, Port: n}, nil
	case len(f) == 1 && b.named[s]:
		return End{}, fmt.Errorf("%q has no port (write %s:PORT)", s, s)
	}
	return End{}, fmt.Errorf("%q is no end; write %s", s, planEndForms)
}

func (b *planBuilder) switchIndex(name string) int {
	if i, ok := b.swIndex[name]; ok {
		return i
	}
	b.swIndex[name] = len(b.switches)
	b.switches = append(b.switches, Switch{Name: name})
	return len(b.switches) - 1
}

func (b *planBuilder) hca(s, node, dev string, rail int) (End, error) {
	switch {
	case node == "":
		return End{}, fmt.Errorf("%q names no node (write NODE/DEVICE or NODE rail N)", s)
	case strings.Contains(dev, ":"):
		return End{}, fmt.Errorf("%q: an HCA end takes no port (write %s; the model has one port per device)", s, strings.Split(s, ":")[0])
	case strings.Contains(dev, "/"):
		return End{}, fmt.Errorf("%q: device %q has a / (write NODE/DEVICE)", s, dev)
	}
	if dev != "" {
		if r, ok := b.devRail[[2]string{node, dev}]; ok && r != rail {
			return End{}, fmt.Errorf("%q: %s/%s is rail %d in an earlier cable; one device is on one rail", s, node, dev, r)
		}
		b.devRail[[2]string{node, dev}] = rail
	}
	k := hcaKey{node, rail}
	i, ok := b.hcaIndex[k]
	if !ok {
		i = len(b.hcas)
		b.hcaIndex[k] = i
		b.hcas = append(b.hcas, HCA{Node: node, Device: dev, Rail: rail})
	} else if h := &b.hcas[i]; h.Device == "" {
		h.Device = dev // "node rail N" first, "node/dev" later: same HCA
	} else if dev != "" && dev != h.Device {
		return End{}, fmt.Errorf("%q: rail %d of %s is %s in an earlier cable; one rail has one device", s, rail, node, h.Device)
	}
	return End{Switch: -1, HCA: i, Port: 1}, nil
}

// newError turns New's complaint about cable i into one about its line;
// New's other complaints cannot arise from a plan the builder accepted,
// but are passed on with the file's name if they do.
func (b *planBuilder) newError(err error) error {
	var ce *CableError
	if !errors.As(err, &ce) || ce.Index < 0 || ce.Index >= len(b.plan.cables) {
		return &FileError{File: b.file, Msg: err.Error(), Err: err}
	}
	c := b.plan.cables[ce.Index]
	field, line := "a", c.aLine
	if ce.Field == "end B" {
		field, line = "b", c.bLine
	}
	return &FileError{File: b.file, Line: line, Field: fmt.Sprintf("cable %d, field %s", ce.Index+1, field), Msg: ce.Msg, Err: err}
}

// trailingNumber is the number a device name ends in, its rail by the
// usual naming (mlx5_3 is rail 3).
func trailingNumber(dev string) (int, bool) {
	digits := dev[len(strings.TrimRight(dev, "0123456789")):]
	n, err := strconv.Atoi(digits)
	return n, err == nil && len(digits) <= 4
}
