package sim

import (
	"fmt"
	"strings"
)

// LinkTarget is the fabric part a link fault bends: one cable (both
// directions, or only From → To when OneWay), or every link into and out
// of a switch. Ends are written as the topology names them: SWITCH:PORT,
// SWITCH alone when one cable joins the two switches, or NODE/DEVICE.
type LinkTarget struct {
	Switch string `json:"switch,omitempty"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	OneWay bool   `json:"one_way,omitempty"`
}

const linkEffectList = "down, withdrawn, flap=P%, loss=P%, bw=F, lat=Nx, tail=Nx, mtu=N"

// parseLinkFault reads cable=A~B:EFFECTS, cable=A>B:EFFECTS (one way, A to
// B) and switch=NAME:EFFECTS. The ends carry colons of their own
// (leaf-r0-05:33), so the effects start after the last end's port.
func parseLinkFault(spec, kind, rest string) (Fault, error) {
	bad := func(format string, a ...any) (Fault, error) {
		return Fault{}, fmt.Errorf("fault %q: %s", spec, fmt.Sprintf(format, a...))
	}
	f := Fault{Spec: spec, Link: &LinkTarget{}}
	var effects string
	switch kind {
	case "switch":
		name, eff, ok := strings.Cut(rest, ":")
		if !ok {
			return bad("missing \":EFFECT\" (want switch=NAME:EFFECT, e.g. switch=spine-r0-02:down)")
		}
		if err := checkName("switch", name); err != nil {
			return bad("%v", err)
		}
		f.Link.Switch, effects = name, eff
	case "cable", "link":
		sep := strings.IndexAny(rest, "~>")
		if sep < 0 {
			return bad("want %s=A~B:EFFECT (both directions) or %s=A>B:EFFECT (A to B only), e.g. cable=leaf-r0-05:33~spine-r0-02:5:loss=2%%", kind, kind)
		}
		a, b := rest[:sep], rest[sep+1:]
		f.Link.OneWay = rest[sep] == '>'
		from, err := parseEnd(a)
		if err != nil {
			return bad("end A: %v", err)
		}
		// b is END:EFFECTS where END may be NAME:PORT.
		name, after, ok := strings.Cut(b, ":")
		if !ok {
			return bad("missing \":EFFECT\" after %q", b)
		}
		to := name
		if port, more, ok := strings.Cut(after, ":"); ok && isDigits(port) {
			to, after = name+":"+port, more
		} else if isDigits(after) {
			return bad("missing \":EFFECT\" after %q", b)
		}
		if _, err := parseEnd(to); err != nil {
			return bad("end B: %v", err)
		}
		f.Link.From, f.Link.To, effects = from, to, after
	}
	if err := f.parseEffects(effects); err != nil {
		return bad("%v", err)
	}
	e := f.Effects
	if e.Dead || e.WrongGID || e.Egress != (OneWay{}) || e.Ingress != (OneWay{}) {
		return bad("a %s takes %s (write cable=A>B:... for one direction)", kind, linkEffectList)
	}
	return f, nil
}

// parseEnd checks NAME, NAME:PORT or NODE/DEVICE and returns it as given.
func parseEnd(s string) (string, error) {
	name, port, hasPort := strings.Cut(s, ":")
	node, dev, isHCA := strings.Cut(name, "/")
	switch {
	case hasPort && (!isDigits(port) || port == "0"):
		return "", fmt.Errorf("%q: the port after ':' must be a number from 1", s)
	case isHCA && hasPort:
		return "", fmt.Errorf("%q: an HCA end is NODE/DEVICE without a port", s)
	case isHCA:
		if err := checkName("node", node); err != nil {
			return "", err
		}
		return s, checkName("HCA", dev)
	}
	return s, checkName("switch", name)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func (lt LinkTarget) String() string {
	if lt.Switch != "" {
		return "switch=" + lt.Switch
	}
	sep := "~"
	if lt.OneWay {
		sep = ">"
	}
	return "cable=" + lt.From + sep + lt.To
}

// resolve finds the directed links the target names.
func (lt LinkTarget) resolve(p Paths) ([]int32, error) {
	if p == nil {
		return nil, fmt.Errorf("%s: link and switch faults need a topology (run with --fat-tree or --topology)", lt)
	}
	links, err := p.TargetLinks(lt.Switch, lt.From, lt.To, lt.OneWay)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lt, err)
	}
	return links, nil
}
