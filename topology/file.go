package topology

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// LoadFile reads a topology from a file: ibnetdiscover output (recognised
// by its vendid=/Switch/Ca lines), or a cabling plan (CSV by its .csv
// name, YAML otherwise).
func LoadFile(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if looksLikeIBNet(data) {
		return ParseIBNetDiscover(path, data)
	}
	return ParsePlan(path, data)
}

func looksLikeIBNet(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 0; sc.Scan() && n < 50; n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "vendid=") || strings.HasPrefix(line, "Switch\t") || strings.HasPrefix(line, "Ca\t") {
			return true
		}
	}
	return false
}

// WritePlan writes the topology as a YAML cabling plan that ParsePlan
// reads back to an equal fabric: the form `rdmamesh topology generate`
// hands an operator to edit into their own design.
func (t *Topology) WritePlan(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %d switches, %d HCAs, %d cables\nlink_layer: %s\nswitches:\n", len(t.Switches), len(t.HCAs), len(t.Cables), t.LinkLayer)
	for _, s := range t.Switches {
		fmt.Fprintf(bw, "  - {name: %s, tier: %s, plane: %d", s.Name, s.Tier, s.Plane)
		if s.Pod != 0 {
			fmt.Fprintf(bw, ", pod: %d", s.Pod)
		}
		if len(s.Addrs) > 0 {
			fmt.Fprintf(bw, ", addrs: [%s]", strings.Join(s.Addrs, ", "))
		}
		fmt.Fprint(bw, "}\n")
	}
	fmt.Fprint(bw, "cables:\n")
	for _, c := range t.Cables {
		fmt.Fprintf(bw, "  - {a: %s, b: %s", t.planEnd(c.A), t.planEnd(c.B))
		if c.Speed != "" {
			fmt.Fprintf(bw, ", speed: %s", c.Speed)
		}
		fmt.Fprint(bw, "}\n")
	}
	return bw.Flush()
}

// planEnd is an end as a plan writes it: the rail given explicitly when
// the device's number is not the rail.
func (t *Topology) planEnd(e End) string {
	if !e.IsHCA() {
		return t.EndName(e)
	}
	h := t.HCAs[e.HCA]
	switch {
	case h.Device == "":
		return fmt.Sprintf("%s rail %d", h.Node, h.Rail)
	case strings.HasSuffix(h.Device, fmt.Sprint(h.Rail)) && !strings.HasSuffix(h.Device, fmt.Sprint(10+h.Rail)):
		return h.Node + "/" + h.Device
	}
	return fmt.Sprintf("%s/%s rail %d", h.Node, h.Device, h.Rail)
}
