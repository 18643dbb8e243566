package cabling

import "sort"

// Verdict is what became of one planned port or one thing seen.
type Verdict string

const (
	OK Verdict = "ok"
	// Swapped: two HCAs of one node (or two uplinks of one switch) have
	// each other's cables.
	Swapped Verdict = "swapped"
	// WrongRail: the cable reaches a switch of another rail's plane.
	WrongRail Verdict = "wrong-rail"
	// WrongLeaf: an HCA's cable reaches another switch of its own plane.
	WrongLeaf Verdict = "wrong-leaf"
	// WrongSwitch: a cable between switches reaches another switch of
	// its plane at the far end.
	WrongSwitch Verdict = "wrong-switch"
	// WrongPort: the right switch, another port.
	WrongPort Verdict = "wrong-port"
	// Missing: the plan has the cable; its port is down, or its switch's
	// table lists nothing there, or the node reports no such HCA.
	Missing Verdict = "missing"
	// Unexpected: seen, but not in the plan.
	Unexpected Verdict = "unexpected"
	// UnknownSwitch: a neighbour that names no switch of the plan; the
	// finding carries its raw strings.
	UnknownSwitch Verdict = "unknown-switch"
	// NamePattern (no plan only): a neighbour whose name breaks the
	// pattern the rest of the fabric follows.
	NamePattern Verdict = "name-pattern"
	// NoEvidence: nothing heard and no traced path: never ok.
	NoEvidence Verdict = "no-evidence"
)

// Verdicts in report order: the worst first.
var Verdicts = []Verdict{Swapped, WrongRail, WrongLeaf, WrongSwitch, WrongPort, Missing, UnknownSwitch, Unexpected, NamePattern, NoEvidence, OK}

// How a finding's Found was seen.
const (
	EvidenceHost   = "host-lldp"   // the HCA's own neighbour
	EvidenceSwitch = "switch-lldp" // a switch's neighbour table
	EvidencePath   = "path"        // traced paths' first or last hop
	EvidenceVotes  = "inferred"    // without a plan: the fabric's majority
)

// Finding is one port's verdict. An HCA's finding has Node, HCA and
// Rail; a cable between switches has End, its planned lower-tier end,
// and Rail the plane (-1 for several).
type Finding struct {
	Verdict  Verdict `json:"verdict"`
	End      string  `json:"end"` // node-01/mlx5_3 or leaf-r0-01:33
	Node     string  `json:"node,omitempty"`
	HCA      string  `json:"hca,omitempty"` // mlx5_3, or "rail 3" when the device is unknown
	Rail     int     `json:"rail"`
	Expected string  `json:"expected,omitempty"` // SWITCH:PORT the plan gives, SWITCH without a port when inferred
	Found    string  `json:"found,omitempty"`    // SWITCH:PORT, SWITCH:? when the port is not known, or the raw neighbour
	With     string  `json:"with,omitempty"`     // swapped: the other end
	Evidence string  `json:"evidence,omitempty"`
	Detail   string  `json:"detail,omitempty"`
	Action   string  `json:"action,omitempty"`
}

// Report is an analysis's answer.
type Report struct {
	// Planned is true for Check, false for Survey.
	Planned bool `json:"planned"`
	// Ports has a finding for every planned HCA port and cable between
	// switches (ok ones too), then everything seen and not planned.
	Ports  []Finding       `json:"ports"`
	Counts map[Verdict]int `json:"counts"`
	// PortRules says how each shape of port name was read.
	PortRules []PortRule `json:"port_rules,omitempty"`
	// PlanWouldAdd (Survey only) is what a plan would let the analysis
	// tell that the fabric alone cannot.
	PlanWouldAdd []string `json:"plan_would_add,omitempty"`
}

// Findings are the ports whose verdict is not ok.
func (r *Report) Findings() []Finding {
	var out []Finding
	for _, f := range r.Ports {
		if f.Verdict != OK {
			out = append(out, f)
		}
	}
	return out
}

// finish counts the verdicts and orders the ports: worst verdict first,
// then by end, so that a report reads the same each time.
func (r *Report) finish() {
	rank := map[Verdict]int{}
	for i, v := range Verdicts {
		rank[v] = i
	}
	sort.SliceStable(r.Ports, func(i, j int) bool {
		a, b := &r.Ports[i], &r.Ports[j]
		if a.Verdict != b.Verdict {
			return rank[a.Verdict] < rank[b.Verdict]
		}
		return a.End < b.End
	})
	r.Counts = map[Verdict]int{}
	for _, f := range r.Ports {
		r.Counts[f.Verdict]++
	}
}
