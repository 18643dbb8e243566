package sim

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Fault bends part of the fabric away from its preset. It is parsed from
// TARGET:EFFECT[,EFFECT...]; see ParseFault.
type Fault struct {
	Spec    string  `json:"spec"`   // as written, for messages
	Device  string  `json:"device"` // "" = every HCA of the target nodes
	Effects Effects `json:"effects"`
	// Link, when set, makes this a fault of the fabric's cables or
	// switches rather than of an HCA: the node part below stays empty.
	Link *LinkTarget `json:"link,omitempty"`

	// The node part: one name, or (ranged) prefix + a zero-padded number
	// from lo to hi inclusive. A hand-built Fault{} matches nothing.
	node   string
	ranged bool
	prefix string
	lo, hi int
	width  int
}

// Effects is what a fault does to an HCA. Zero values mean "not set", so
// Effects from several faults merge (see merge).
type Effects struct {
	Down bool    `json:"down,omitempty"` // port DOWN: Open fails, peers see retry-exceeded
	Dead bool    `json:"dead,omitempty"` // the worker is gone; reported by Fabric.Dead only
	Loss float64 `json:"loss,omitempty"` // probability that a test fails with retry-exceeded
	BW   float64 `json:"bw,omitempty"`   // bandwidth factor, 0 < BW <= 1
	Lat  float64 `json:"lat,omitempty"`  // latency multiplier, >= 1
	Tail float64 `json:"tail,omitempty"` // p99 and above multiplier, >= 1
	// Flap is the share of the time a cable or switch is down (flap=P%,
	// link faults only). Each flapping fault is drawn per test (flap.go),
	// so it is kept per fault and never merged.
	Flap float64 `json:"flap,omitempty"`
	// Withdrawn: the link is down and the routing protocol has withdrawn
	// it (link faults only): flows route around it and none fails.
	Withdrawn bool `json:"withdrawn,omitempty"`
	// DropAbove is the largest packet payload a hop on the path carries;
	// larger packets vanish, so big writes fail while small ones pass.
	DropAbove int  `json:"drop_above,omitempty"`
	WrongGID  bool `json:"wrong_gid,omitempty"` // RTR rejects the GID (EINVAL)
	// Egress and Ingress act on one direction of the HCA's traffic only:
	// what it transmits, or what it receives (loss=P%@egress, bw=F@ingress).
	Egress  OneWay `json:"egress,omitzero"`
	Ingress OneWay `json:"ingress,omitzero"`
}

// OneWay is a fault on one direction of an HCA's traffic. A test's writes
// flow from initiator to target and its acknowledgements back, so a test
// meets the initiator's egress and the target's ingress in full, and the
// other two on its acknowledgements only (see Session.Connect).
type OneWay struct {
	Loss float64 `json:"loss,omitempty"`
	BW   float64 `json:"bw,omitempty"`
}

const effectList = "down, dead, loss=P%, bw=F, lat=Nx, tail=Nx, mtu=N, gid=wrong; loss and bw take @egress or @ingress"

// maxRange keeps a typo like node-1~node-999999999 from allocating the world.
const maxRange = 100000

// ParseFault parses TARGET:EFFECT[,EFFECT...]. TARGET is a node (node-03),
// one HCA of it (node-03/mlx5_1), or an inclusive range of nodes sharing a
// prefix (node-05~node-09, optionally /mlx5_1 for one rail of them). Node
// names are not checked here; Fabric.Validate does that against a node list.
func ParseFault(spec string) (Fault, error) {
	spec = strings.TrimSpace(spec)
	bad := func(format string, a ...any) (Fault, error) {
		return Fault{}, fmt.Errorf("fault %q: %s", spec, fmt.Sprintf(format, a...))
	}
	if kind, rest, ok := strings.Cut(spec, "="); ok && (kind == "cable" || kind == "link" || kind == "switch") {
		return parseLinkFault(spec, kind, rest)
	}
	target, effects, ok := strings.Cut(spec, ":")
	if !ok {
		return bad("missing \":EFFECT\" (want TARGET:EFFECT[,EFFECT...], e.g. node-03/mlx5_1:down)")
	}
	f := Fault{Spec: spec}
	if err := f.parseTarget(strings.TrimSpace(target)); err != nil {
		return bad("%v", err)
	}
	if err := f.parseEffects(effects); err != nil {
		return bad("%v", err)
	}
	return f, nil
}

// ParseFaults parses every spec and reports all bad ones at once, so an
// operator fixes a faults list in one go.
func ParseFaults(specs []string) ([]Fault, error) {
	out := make([]Fault, 0, len(specs))
	var errs []error
	for _, s := range specs {
		f, err := ParseFault(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, f)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func (f *Fault) parseTarget(t string) error {
	nodes, dev, hasDev := strings.Cut(t, "/")
	if hasDev {
		if dev == "" || strings.Contains(dev, "/") {
			return fmt.Errorf("bad HCA in target %q (want NODE/DEVICE, e.g. node-03/mlx5_1)", t)
		}
		if err := checkName("HCA", dev); err != nil {
			return err
		}
		f.Device = dev
	}
	if nodes == "" {
		return fmt.Errorf("empty target (want node-03, node-03/mlx5_1 or node-05~node-09)")
	}
	a, b, isRange := strings.Cut(nodes, "~")
	if !isRange {
		if err := checkName("node", nodes); err != nil {
			return err
		}
		f.node = nodes
		return nil
	}
	pa, na, wa, err := splitNumbered(a)
	if err != nil {
		return err
	}
	pb, nb, _, err := splitNumbered(b)
	if err != nil {
		return err
	}
	switch {
	case pa != pb:
		return fmt.Errorf("range %q: ends differ before the number (%q vs %q); both ends need the same prefix", nodes, pa, pb)
	case na > nb:
		return fmt.Errorf("range %q runs backwards (write the lower node first)", nodes)
	case nb-na+1 > maxRange:
		return fmt.Errorf("range %q covers %d nodes, more than %d", nodes, nb-na+1, maxRange)
	case numbered(pa, nb, wa) != b:
		return fmt.Errorf("range %q: %q is not zero-padded like %q (write %s)", nodes, b, a, numbered(pa, nb, wa))
	}
	f.ranged, f.prefix, f.lo, f.hi, f.width = true, pa, na, nb, wa
	return nil
}

// splitNumbered splits node-07 into "node-", 7 and width 2.
func splitNumbered(s string) (prefix string, n, width int, err error) {
	if err := checkName("node", s); err != nil {
		return "", 0, 0, err
	}
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	digits := s[i:]
	if digits == "" || len(digits) > 9 {
		return "", 0, 0, fmt.Errorf("range end %q needs a numeric suffix of 1-9 digits, like node-05", s)
	}
	n, _ = strconv.Atoi(digits)
	return s[:i], n, len(digits), nil
}

func numbered(prefix string, n, width int) string {
	return fmt.Sprintf("%s%0*d", prefix, width, n)
}

// checkName allows what hostnames and RDMA device names use, so a stray
// separator is caught here rather than silently matching nothing.
func checkName(what, s string) error {
	if s == "" {
		return fmt.Errorf("empty %s name", what)
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '-' || r == '_' || r == '.'
		if !ok {
			return fmt.Errorf("%s name %q contains %q (allowed: letters, digits, '-', '_', '.')", what, s, r)
		}
	}
	return nil
}

// effectList is what the fault's kind of target takes, for messages.
func (f *Fault) effectList() string {
	if f.Link != nil {
		return linkEffectList
	}
	return effectList
}

func (f *Fault) parseEffects(list string) error {
	want := f.effectList()
	if strings.TrimSpace(list) == "" {
		return fmt.Errorf("no effect after ':' (want %s)", want)
	}
	seen := map[string]bool{}
	e := &f.Effects
	for _, tok := range strings.Split(list, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			return fmt.Errorf("empty effect in %q (want %s)", list, want)
		}
		plain, dir, hasDir := strings.Cut(tok, "@")
		name, val, hasVal := strings.Cut(plain, "=")
		key := name + "@" + dir
		if seen[key] {
			return fmt.Errorf("effect %q given twice", strings.TrimSuffix(key, "@"))
		}
		seen[key] = true
		var err error
		if hasDir {
			if err := e.parseOneWay(tok, name, val, dir); err != nil {
				return err
			}
			continue
		}
		switch name {
		case "withdrawn":
			if hasVal || f.Link == nil {
				return fmt.Errorf("effect %q: withdrawn takes no value and is a cable's or link's (cable=A~B:withdrawn)", tok)
			}
			e.Withdrawn = true
		case "down", "dead":
			if hasVal {
				return fmt.Errorf("effect %q takes no value (write %s)", tok, name)
			}
			if name == "dead" && f.Device != "" {
				return fmt.Errorf("effect \"dead\" applies to a whole worker, not one HCA (drop /%s)", f.Device)
			}
			e.Down = e.Down || name == "down"
			e.Dead = e.Dead || name == "dead"
		case "loss":
			pct, isPct := strings.CutSuffix(val, "%")
			var p float64
			p, err = strconv.ParseFloat(pct, 64)
			if !isPct || err != nil || !(p > 0 && p <= 100) {
				return fmt.Errorf("bad value in %q: loss wants a percentage 0 < P <= 100 with a %% sign, like loss=30%%", tok)
			}
			e.Loss = p / 100
		case "flap":
			if err := f.parseFlap(tok, val); err != nil {
				return err
			}
		case "bw":
			e.BW, err = strconv.ParseFloat(val, 64)
			if err != nil || !(e.BW > 0 && e.BW <= 1) {
				return fmt.Errorf("bad value in %q: bw wants a factor 0 < F <= 1, like bw=0.4", tok)
			}
		case "lat", "tail":
			x, err := strconv.ParseFloat(strings.TrimSuffix(val, "x"), 64)
			if err != nil || !(x >= 1 && x <= 1e6) {
				return fmt.Errorf("bad value in %q: %s wants a multiplier 1 <= N <= 1e6, like %s=5x", tok, name, name)
			}
			if name == "lat" {
				e.Lat = x
			} else {
				e.Tail = x
			}
		case "mtu":
			n, err := strconv.Atoi(val)
			if err != nil || n < 64 || n > 65536 {
				return fmt.Errorf("bad value in %q: mtu wants the largest packet payload the path carries, 64..65536 bytes, like mtu=1024", tok)
			}
			e.DropAbove = n
		case "gid":
			if val != "wrong" {
				return fmt.Errorf("bad value in %q: the only gid effect is gid=wrong", tok)
			}
			e.WrongGID = true
		default:
			return fmt.Errorf("unknown effect %q (want %s)", name, want)
		}
	}
	return nil
}

// parseOneWay reads loss=P%@DIR or bw=F@DIR.
func (e *Effects) parseOneWay(tok, name, val, dir string) error {
	var w *OneWay
	switch dir {
	case "egress":
		w = &e.Egress
	case "ingress":
		w = &e.Ingress
	default:
		return fmt.Errorf("bad direction in %q: write @egress (what the HCA transmits) or @ingress (what it receives)", tok)
	}
	var one Effects
	switch name {
	case "loss", "bw":
		if err := one.parseEffectsValue(tok, name, val); err != nil {
			return err
		}
	case "lat":
		return fmt.Errorf("effect %q: a latency ping-pong crosses both directions, so lat takes no direction (use loss or bw)", tok)
	default:
		return fmt.Errorf("effect %q takes no direction; only loss and bw do (like loss=3%%@egress)", tok)
	}
	w.Loss, w.BW = max(w.Loss, one.Loss), max(w.BW, one.BW)
	return nil
}

// parseEffectsValue parses one undirected loss or bw value into e.
func (e *Effects) parseEffectsValue(tok, name, val string) error {
	f := Fault{}
	if err := f.parseEffects(name + "=" + val); err != nil {
		return fmt.Errorf("%v (in %q)", err, tok)
	}
	*e = f.Effects
	return nil
}

// String is the canonical spec, which ParseFault reads back to an equal Fault.
func (f Fault) String() string {
	if f.Link != nil {
		return f.Link.String() + ":" + f.Effects.String()
	}
	t := f.node
	if f.ranged {
		t = numbered(f.prefix, f.lo, f.width) + "~" + numbered(f.prefix, f.hi, f.width)
	}
	if f.Device != "" {
		t += "/" + f.Device
	}
	return t + ":" + f.Effects.String()
}

func (e Effects) String() string {
	var parts []string
	add := func(on bool, s string) {
		if on {
			parts = append(parts, s)
		}
	}
	// Ten digits hide the float noise of loss's percent↔fraction trip.
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }
	add(e.Down, "down")
	add(e.Withdrawn, "withdrawn")
	add(e.Dead, "dead")
	add(e.Flap > 0, "flap="+num(e.Flap*100)+"%")
	add(e.Loss > 0, "loss="+num(e.Loss*100)+"%")
	add(e.BW > 0, "bw="+num(e.BW))
	add(e.Lat > 0, "lat="+num(e.Lat)+"x")
	add(e.Tail > 0, "tail="+num(e.Tail)+"x")
	add(e.DropAbove > 0, "mtu="+strconv.Itoa(e.DropAbove))
	add(e.WrongGID, "gid=wrong")
	for _, w := range []struct {
		dir string
		o   OneWay
	}{{"egress", e.Egress}, {"ingress", e.Ingress}} {
		add(w.o.Loss > 0, "loss="+num(w.o.Loss*100)+"%@"+w.dir)
		add(w.o.BW > 0, "bw="+num(w.o.BW)+"@"+w.dir)
	}
	return strings.Join(parts, ",")
}

// Nodes expands the target's node names.
func (f Fault) Nodes() []string {
	if !f.ranged {
		if f.node == "" {
			return nil
		}
		return []string{f.node}
	}
	out := make([]string, 0, f.hi-f.lo+1)
	for n := f.lo; n <= f.hi; n++ {
		out = append(out, numbered(f.prefix, n, f.width))
	}
	return out
}

// matchesNode reports whether node is in the target, without expanding a range.
func (f Fault) matchesNode(node string) bool {
	if !f.ranged {
		return f.node != "" && node == f.node
	}
	rest, ok := strings.CutPrefix(node, f.prefix)
	if !ok || rest == "" || len(rest) > 9 {
		return false
	}
	n, err := strconv.Atoi(rest)
	return err == nil && n >= f.lo && n <= f.hi && numbered(f.prefix, n, f.width) == node
}

// Matches reports whether the fault applies to device on node.
func (f Fault) Matches(node, device string) bool {
	return f.matchesNode(node) && (f.Device == "" || f.Device == device)
}

// merge combines the effects of several faults on one HCA, or of both ends
// of a path: the worst value wins, and independent losses compound.
func merge(a, b Effects) Effects {
	minSet := func(x, y float64) float64 {
		if x == 0 || (y != 0 && y < x) {
			return y
		}
		return x
	}
	minInt := func(x, y int) int {
		if x == 0 || (y != 0 && y < x) {
			return y
		}
		return x
	}
	return Effects{
		Down:      a.Down || b.Down,
		Dead:      a.Dead || b.Dead,
		Loss:      1 - (1-a.Loss)*(1-b.Loss),
		BW:        minSet(a.BW, b.BW),
		Lat:       math.Max(a.Lat, b.Lat),
		Tail:      math.Max(a.Tail, b.Tail),
		DropAbove: minInt(a.DropAbove, b.DropAbove),
		WrongGID:  a.WrongGID || b.WrongGID,
		Egress:    OneWay{Loss: 1 - (1-a.Egress.Loss)*(1-b.Egress.Loss), BW: minSet(a.Egress.BW, b.Egress.BW)},
		Ingress:   OneWay{Loss: 1 - (1-a.Ingress.Loss)*(1-b.Ingress.Loss), BW: minSet(a.Ingress.BW, b.Ingress.BW)},
	}
}

// ackShare is the part of a one-way loss that a test meets on its
// acknowledgements alone: RC acknowledges cumulatively, so a lost ACK
// costs a retransmission only when no later one covers it.
const ackShare = 0.25

// directed is what a test from the HCA with effects init to the one with
// effects target meets of their one-way faults, as undirected effects: the
// writes cross init's egress and target's ingress, the acknowledgements
// the other two.
func directed(init, target Effects) Effects {
	data := OneWay{Loss: 1 - (1-init.Egress.Loss)*(1-target.Ingress.Loss)}
	ack := 1 - (1-init.Ingress.Loss)*(1-target.Egress.Loss)
	bw := init.Egress.BW
	if bw == 0 || (target.Ingress.BW != 0 && target.Ingress.BW < bw) {
		bw = target.Ingress.BW
	}
	return Effects{Loss: 1 - (1-data.Loss)*(1-ackShare*ack), BW: bw}
}

func (e Effects) bwFactor() float64 {
	if e.BW == 0 {
		return 1
	}
	return e.BW
}

func (e Effects) latFactor() float64 { return math.Max(e.Lat, 1) }

func (e Effects) tailFactor() float64 { return math.Max(e.Tail, 1) }
