package topology

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FileError is a loader's complaint about one place in an input file.
// Line is 0 when the complaint is about the whole file.
type FileError struct {
	File  string
	Line  int
	Field string
	Msg   string
	Err   error // what New said, when the complaint is New's
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	return b.String() + ": " + e.Msg
}

func (e *FileError) Unwrap() error { return e.Err }

// LoadPlan reads a cabling plan file; see ParsePlan.
func LoadPlan(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePlan(path, data)
}

// ParsePlan reads a cabling plan: CSV when name ends in .csv, else YAML.
// name is only for error messages.
//
// A cabling plan is the operator's intended design, one entry per cable,
// in YAML or CSV:
//
//	link_layer: roce        # or ib; roce when left out
//	switches:               # optional: to set tier, plane, pod or addrs
//	  - {name: spine-r1-00, tier: spine, plane: 1, addrs: [10.0.1.2, 10.0.2.2]}
//	cables:
//	  - {a: node-01/mlx5_0, b: leaf-r0-00:1, speed: 400G}
//	  - {a: node-02 rail 0, b: leaf-r0-00:2}
//	  - {a: leaf-r0-00:5, b: spine-r0-00:1}
//
// An end is read by its shape, so a plan needs no list of devices:
//
//	SWITCH:PORT           a switch port; PORT counts from 1
//	NODE/DEVICE           an HCA; its rail is DEVICE's trailing number
//	                      (mlx5_3 is rail 3)
//	NODE/DEVICE rail N    an HCA whose device number is not its rail, as
//	                      on hosts where mlx5_0..3 are the Ethernet NICs
//	NODE rail N           an HCA whose device name is not known
//
// The rail is written on the end rather than as a key of the cable so
// that the CSV form needs no extra column and an end means the same in
// both forms. An HCA end takes no port: the model has one port per
// device, which is how ConnectX-4 and later present a multi-port card.
//
// Switches are created as cables name them, with their tier and plane
// derived by New; switches: only overrides. plane is the rail a switch
// serves (-1: several). addrs are the switch's IP addresses, any that may
// answer a traceroute (hops.go); without them a traced hop there stays
// unknown. A switch listed there but in no cable is refused,
// as it is a typo far more often than an unused switch.
//
// The CSV form has a header row naming the columns a, b and optionally
// speed, in any order; lines starting with # are comments. It has no
// place for a link layer or overrides, so a CSV plan is RoCE with every
// tier derived; write YAML for anything else.
//
// Every error is a *FileError naming the file, the line and the field.
// Nothing is returned on error: a half-read plan would validate a fabric
// that nobody designed.
func ParsePlan(name string, data []byte) (*Topology, error) {
	// Spreadsheets export CSV with a byte order mark.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var p *plan
	var err error
	if strings.HasSuffix(strings.ToLower(name), ".csv") {
		p, err = readPlanCSV(name, data)
	} else {
		p, err = readPlanYAML(name, data)
	}
	if err != nil {
		return nil, err
	}
	return p.build()
}

// plan is a file's content before any end is interpreted, with the line
// of every value so that later checks can point at it.
type plan struct {
	file      string
	ll        LinkLayer
	overrides []planSwitch
	cables    []planCable
}

type planSwitch struct {
	sw   Switch
	line int
}

type planCable struct {
	a, b         string
	speed        string
	aLine, bLine int
}

const (
	planEndForms   = "SWITCH:PORT, NODE/DEVICE, NODE/DEVICE rail N or NODE rail N"
	planTopKeys    = "link_layer, switches, cables"
	planSwitchKeys = "name, tier, plane, pod, addrs"
	planCableKeys  = "a, b, speed"
	planCSVColumns = "a, b and optionally speed"
)

func (p *plan) errf(line int, field, format string, a ...any) error {
	return &FileError{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}

var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func readPlanYAML(name string, data []byte) (*plan, error) {
	p := &plan{file: name, ll: RoCE}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// The parser reports where the broken construct began, which may
		// be a line or more before the damage (or the end of a file cut
		// short).
		if m := yamlErrLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, p.errf(line, "", "YAML syntax: %s (on this line or one after it)", m[2])
		}
		return nil, p.errf(0, "", "YAML syntax: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, p.errf(0, "", "the file is empty; want a cables: list, one entry per cable (see configs/topology/cabling.example.yaml)")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root.Line, "", "want a mapping with the keys %s", planTopKeys)
	}
	var cables *yaml.Node
	err := eachKey(p, root, "", planTopKeys, func(k, v *yaml.Node) error {
		switch k.Value {
		case "link_layer":
			switch strings.ToLower(v.Value) {
			case "roce":
				p.ll = RoCE
			case "ib", "infiniband":
				p.ll = InfiniBand
			default:
				return p.errf(v.Line, "link_layer", "%q is no link layer (write roce or ib)", v.Value)
			}
		case "switches":
			return p.readSwitches(v)
		case "cables":
			cables = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cables == nil || cables.Kind != yaml.SequenceNode || len(cables.Content) == 0 {
		line := root.Line
		if cables != nil {
			line = cables.Line
		}
		return nil, p.errf(line, "cables", "no cables; want a list with one entry {a: END, b: END} per cable, ends written as %s", planEndForms)
	}
	for i, c := range cables.Content {
		if err := p.readCable(i, c); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// eachKey calls f for each key of a mapping, refusing repeated keys and
// values that are not plain scalars (none of the plan's keys take lists
// except switches and cables, which f reads itself).
func eachKey(p *plan, m *yaml.Node, where, allowed string, f func(k, v *yaml.Node) error) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			return p.errf(k.Line, where, "%s is given twice (also on line %d); keep one", k.Value, first)
		}
		seen[k.Value] = k.Line
		if !strings.Contains(", "+allowed+", ", ", "+k.Value+", ") {
			return unknownKey(p, k, where, allowed)
		}
		if v.Kind != yaml.ScalarNode && k.Value != "switches" && k.Value != "cables" && k.Value != "addrs" {
			return p.errf(v.Line, fieldName(where, k.Value), "want a single value, not a list or mapping")
		}
		if err := f(k, v); err != nil {
			return err
		}
	}
	return nil
}

func unknownKey(p *plan, k *yaml.Node, where, allowed string) error {
	return p.errf(k.Line, where, "unknown key %q (allowed: %s)", k.Value, allowed)
}

func fieldName(where, key string) string {
	if where == "" {
		return key
	}
	return where + ", field " + key
}

func (p *plan) readSwitches(list *yaml.Node) error {
	if list.Tag == "!!null" {
		return nil // "switches:" with nothing under it overrides nothing
	}
	if list.Kind != yaml.SequenceNode {
		return p.errf(list.Line, "switches", "want a list of {name: SWITCH, tier: leaf|spine|core, plane: N, pod: N}")
	}
	for i, m := range list.Content {
		where := fmt.Sprintf("switch %d", i+1)
		if m.Kind != yaml.MappingNode {
			return p.errf(m.Line, where, "want a mapping with the keys %s", planSwitchKeys)
		}
		ps := planSwitch{line: m.Line}
		err := eachKey(p, m, where, planSwitchKeys, func(k, v *yaml.Node) error {
			var err error
			switch k.Value {
			case "name":
				ps.sw.Name = strings.TrimSpace(v.Value)
			case "tier":
				ps.sw.Tier, err = parseTier(v.Value)
			case "plane":
				ps.sw.Plane, err = planeOrPod(v.Value, -1, "a rail number, or -1 for a switch serving several rails")
			case "pod":
				ps.sw.Pod, err = planeOrPod(v.Value, 0, "a pod number from 0")
			case "addrs":
				ps.sw.Addrs, err = planAddrs(v)
			}
			if err != nil {
				return p.errf(v.Line, fieldName(where, k.Value), "%v", err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if ps.sw.Name == "" {
			return p.errf(m.Line, where, "no name (write name: SWITCH as the cables name it)")
		}
		p.overrides = append(p.overrides, ps)
	}
	return nil
}

// planAddrs reads a list of IP addresses, or one address alone.
func planAddrs(v *yaml.Node) ([]string, error) {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	var out []string
	for _, it := range items {
		a, err := netip.ParseAddr(strings.TrimSpace(it.Value))
		if it.Kind != yaml.ScalarNode || err != nil {
			return nil, fmt.Errorf("%q: want IP addresses, like [10.0.1.2, 10.0.2.2]", it.Value)
		}
		out = append(out, a.String())
	}
	return out, nil
}

func parseTier(s string) (Tier, error) {
	for _, t := range []Tier{Leaf, Spine, Core} {
		if strings.EqualFold(s, t.String()) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%q is no tier (write leaf, spine or core, or leave tier out to derive it)", s)
}

func planeOrPod(s string, lowest int, want string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < lowest {
		return 0, fmt.Errorf("%q: want %s", s, want)
	}
	return n, nil
}

func (p *plan) readCable(i int, m *yaml.Node) error {
	where := fmt.Sprintf("cable %d", i+1)
	if m.Kind != yaml.MappingNode {
		return p.errf(m.Line, where, "want a mapping {a: END, b: END, speed: S}, ends written as %s", planEndForms)
	}
	c := planCable{}
	err := eachKey(p, m, where, planCableKeys, func(k, v *yaml.Node) error {
		switch k.Value {
		case "a":
			c.a, c.aLine = v.Value, v.Line
		case "b":
			c.b, c.bLine = v.Value, v.Line
		case "speed":
			c.speed = v.Value
		}
		return nil
	})
	if err != nil {
		return err
	}
	if c.aLine == 0 || c.bLine == 0 {
		missing := "a"
		if c.aLine != 0 {
			missing = "b"
		}
		return p.errf(m.Line, where, "no %s; a cable has two ends, a and b, each written as %s", missing, planEndForms)
	}
	p.cables = append(p.cables, c)
	return nil
}

func readPlanCSV(name string, data []byte) (*plan, error) {
	p := &plan{file: name, ll: RoCE}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	r.FieldsPerRecord = -1 // checked below, to say which column is missing
	r.TrimLeadingSpace = true
	col := map[string]int{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, p.errf(pe.Line, "", "CSV syntax: %v", pe.Err)
		} else if err != nil {
			return nil, p.errf(0, "", "CSV: %v", err)
		}
		line, _ := r.FieldPos(0)
		if len(col) == 0 {
			if err := p.csvHeader(line, rec, col); err != nil {
				return nil, err
			}
			continue
		}
		where := fmt.Sprintf("cable %d", len(p.cables)+1)
		if len(rec) != len(col) {
			return nil, p.errf(line, where, "%d columns, but the header names %d (%s); give every cable each column, an empty speed as ,,", len(rec), len(col), planCSVColumns)
		}
		c := planCable{a: rec[col["a"]], b: rec[col["b"]], aLine: line, bLine: line}
		if i, ok := col["speed"]; ok {
			c.speed = strings.TrimSpace(rec[i])
		}
		p.cables = append(p.cables, c)
	}
	switch {
	case len(col) == 0:
		return nil, p.errf(0, "", "the file is empty; want a header row a,b,speed then one row per cable")
	case len(p.cables) == 0:
		return nil, p.errf(0, "", "no cables after the header; want one row per cable, ends written as %s", planEndForms)
	}
	return p, nil
}

func (p *plan) csvHeader(line int, rec []string, col map[string]int) error {
	for i, h := range rec {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "a" && h != "b" && h != "speed" {
			hint := "the first row must name the columns"
			if strings.ContainsAny(h, ";\t") {
				hint = "separate the columns with commas"
			}
			return p.errf(line, "header", "unknown column %q (allowed: %s); %s", h, planCSVColumns, hint)
		}
		if _, dup := col[h]; dup {
			return p.errf(line, "header", "column %s is named twice", h)
		}
		col[h] = i
	}
	for _, need := range []string{"a", "b"} {
		if _, ok := col[need]; !ok {
			return p.errf(line, "header", "no column %s (want %s; the first row must name the columns)", need, planCSVColumns)
		}
	}
	return nil
}
