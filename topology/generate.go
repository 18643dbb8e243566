package topology

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// FatTree describes a rail-optimized fat tree: rail r of every node is
// cabled to a rail-r leaf, NodesPerLeaf nodes to a leaf, so same-rail
// traffic inside a leaf group stays on one switch. Each rail is its own
// plane of leaves and spines (and cores in 3 tiers).
//
// 2 tiers (Pods 0): each leaf has NodesPerLeaf/Oversub uplinks spread
// evenly over the plane's Spines. 3 tiers (Pods > 1): nodes are split
// evenly over the pods; each pod has its own leaves and Spines per plane;
// spine j of every pod is cabled to the plane's cores j, j+Spines, ...
// (Cores/Spines of them), one cable each: the classic k-ary layout.
type FatTree struct {
	Nodes        int       `json:"nodes"`
	Rails        int       `json:"rails"`
	NodesPerLeaf int       `json:"nodes_per_leaf"`
	Spines       int       `json:"spines"`
	Pods         int       `json:"pods,omitempty"`
	Cores        int       `json:"cores,omitempty"`
	Oversub      float64   `json:"oversub,omitempty"` // downlinks per uplink on a leaf; 0 = 1
	NodePrefix   string    `json:"node_prefix,omitempty"`
	DevicePrefix string    `json:"device_prefix,omitempty"` // HCA r is DevicePrefix+r; "" = mlx5_
	LinkLayer    LinkLayer `json:"link_layer,omitempty"`    // "" = roce
	// Addrs, when valid, gives switch i the address i+1 of the prefix:
	// the address its traceroute answers come from, so traced hops map
	// onto the tree (the simulated fabric answers from them).
	Addrs netip.Prefix `json:"addrs,omitzero"`
	// NodeName overrides NodePrefix: the name of node i (0-based), so a
	// tree can be laid over a simulated preset's own node names.
	NodeName func(i int) string `json:"-"`
}

const fatTreeKeys = "nodes, rails, leaf (nodes per leaf), spines, pods, cores, oversub, prefix, devices, ll, addrs"

// ParseFatTree reads "nodes=512,rails=8,leaf=32,spines=16[,pods=8,cores=16]
// [,oversub=1][,prefix=node-][,devices=mlx5_][,ll=roce][,addrs=10.255.0.0/16]".
func ParseFatTree(spec string) (FatTree, error) {
	ft := FatTree{}
	seen := map[string]bool{}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return ft, fmt.Errorf("fat tree %q: %q is not KEY=VALUE (keys: %s)", spec, kv, fatTreeKeys)
		}
		if seen[k] {
			return ft, fmt.Errorf("fat tree %q: %s given twice", spec, k)
		}
		seen[k] = true
		num := func(p *int) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("fat tree %q: %s=%s is not a whole number >= 0", spec, k, v)
			}
			*p = n
			return nil
		}
		var err error
		switch k {
		case "nodes":
			err = num(&ft.Nodes)
		case "rails":
			err = num(&ft.Rails)
		case "leaf":
			err = num(&ft.NodesPerLeaf)
		case "spines":
			err = num(&ft.Spines)
		case "pods":
			err = num(&ft.Pods)
		case "cores":
			err = num(&ft.Cores)
		case "oversub":
			f, perr := strconv.ParseFloat(v, 64)
			if perr != nil || !(f >= 1) {
				err = fmt.Errorf("fat tree %q: oversub=%s: want a ratio >= 1 (1 = non-blocking)", spec, v)
			}
			ft.Oversub = f
		case "prefix":
			ft.NodePrefix = v
		case "devices":
			ft.DevicePrefix = v
		case "ll":
			ft.LinkLayer = LinkLayer(v)
		case "addrs":
			p, perr := netip.ParsePrefix(v)
			if perr != nil {
				err = fmt.Errorf("fat tree %q: addrs=%s: want a prefix such as 10.255.0.0/16 (switch i answers from its address i+1)", spec, v)
			}
			ft.Addrs = p.Masked()
		default:
			err = fmt.Errorf("fat tree %q: unknown key %q (keys: %s)", spec, k, fatTreeKeys)
		}
		if err != nil {
			return ft, err
		}
	}
	return ft, ft.check()
}

func (ft FatTree) check() error {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("fat tree: %s: %s", field, fmt.Sprintf(format, a...))
	}
	switch {
	case ft.Nodes < 2:
		return bad("nodes", "%d; a fabric needs at least 2", ft.Nodes)
	case ft.Rails < 1 || ft.Rails > 64:
		return bad("rails", "%d; want 1 to 64", ft.Rails)
	case ft.NodesPerLeaf < 1:
		return bad("leaf", "%d nodes per leaf; want at least 1", ft.NodesPerLeaf)
	case ft.Spines < 1:
		return bad("spines", "%d; want at least 1 per plane", ft.Spines)
	case ft.Pods == 1 || ft.Pods < 0:
		return bad("pods", "%d; leave it out for 2 tiers, or give 2 or more", ft.Pods)
	case ft.LinkLayer != "" && ft.LinkLayer != RoCE && ft.LinkLayer != InfiniBand:
		return bad("ll", "%q; want roce or ib", ft.LinkLayer)
	}
	if up := ft.uplinks(); up < ft.Spines || up%ft.Spines != 0 {
		return bad("spines", "a leaf has %d uplinks (%d nodes / oversub %g), which do not spread evenly over %d spines; pick spines dividing %d",
			up, ft.NodesPerLeaf, ft.oversub(), ft.Spines, up)
	}
	if ft.Pods > 1 {
		switch {
		case ft.Nodes%ft.Pods != 0:
			return bad("pods", "%d nodes do not split evenly over %d pods", ft.Nodes, ft.Pods)
		case ft.Cores < ft.Spines || ft.Cores%ft.Spines != 0:
			return bad("cores", "%d cores per plane; want a multiple of spines (%d), each spine of a pod reaching cores/spines of them", ft.Cores, ft.Spines)
		}
	} else if ft.Cores != 0 {
		return bad("cores", "cores need pods (3 tiers); leave cores out for 2 tiers")
	}
	return nil
}

func (ft FatTree) oversub() float64 { return max(ft.Oversub, 1) }

func (ft FatTree) uplinks() int { return max(int(float64(ft.NodesPerLeaf)/ft.oversub()), 1) }

// NodeNames are the tree's node names, in order.
func (ft FatTree) NodeNames() []string {
	out := make([]string, ft.Nodes)
	w := len(strconv.Itoa(ft.Nodes))
	w = max(w, 2)
	prefix := ft.NodePrefix
	if prefix == "" {
		prefix = "node-"
	}
	for i := range out {
		if ft.NodeName != nil {
			out[i] = ft.NodeName(i)
		} else {
			out[i] = fmt.Sprintf("%s%0*d", prefix, w, i+1)
		}
	}
	return out
}

// GenerateFatTree is ParseFatTree's tree, generated.
func GenerateFatTree(spec string) (FatTree, *Topology, error) {
	ft, err := ParseFatTree(spec)
	if err != nil {
		return ft, nil, err
	}
	t, err := ft.Generate()
	return ft, t, err
}

// Generate builds the tree.
func (ft FatTree) Generate() (*Topology, error) {
	if err := ft.check(); err != nil {
		return nil, err
	}
	ll := ft.LinkLayer
	if ll == "" {
		ll = RoCE
	}
	dev := ft.DevicePrefix
	if dev == "" {
		dev = "mlx5_"
	}
	pods := max(ft.Pods, 1)
	perPod := ft.Nodes / pods
	leavesPerPod := (perPod + ft.NodesPerLeaf - 1) / ft.NodesPerLeaf
	up := ft.uplinks()
	perSpine := up / ft.Spines
	names := ft.NodeNames()

	g := &builder{}
	hcas := make([]HCA, 0, ft.Nodes*ft.Rails)
	for i, n := range names {
		for r := range ft.Rails {
			// Each rail plane is its own subnet, its LIDs handed out in node
			// order as a subnet manager sweeping the plane would: d-mod-k then
			// spreads destinations over every up port.
			hcas = append(hcas, HCA{Node: n, Device: dev + strconv.Itoa(r), Rail: r, LID: uint16(1 + i%0xBFFF)})
		}
	}
	for r := range ft.Rails {
		var cores []int
		for c := range ft.Cores {
			cores = append(cores, g.sw(Switch{Name: fmt.Sprintf("core-r%d-%02d", r, c), Tier: Core, Plane: r}))
		}
		for p := range pods {
			pod := ""
			if ft.Pods > 1 {
				pod = fmt.Sprintf("p%d-", p)
			}
			spines := make([]int, ft.Spines)
			for s := range spines {
				spines[s] = g.sw(Switch{Name: fmt.Sprintf("spine-r%d-%s%02d", r, pod, s), Tier: Spine, Plane: r, Pod: p})
				// Spine s reaches cores s, s+Spines, ...; spine ports: leaves
				// first, then cores; core ports by pod.
				for k, c := 0, s; c < len(cores); k, c = k+1, c+ft.Spines {
					g.cable(End{Switch: spines[s], HCA: -1, Port: leavesPerPod*perSpine + k + 1},
						End{Switch: cores[c], HCA: -1, Port: p + 1})
				}
			}
			for l := range leavesPerPod {
				leaf := g.sw(Switch{Name: fmt.Sprintf("leaf-r%d-%s%02d", r, pod, l), Tier: Leaf, Plane: r, Pod: p})
				for k := range ft.NodesPerLeaf {
					node := p*perPod + l*ft.NodesPerLeaf + k
					if node >= (p+1)*perPod {
						break
					}
					g.cable(End{Switch: -1, HCA: node*ft.Rails + r, Port: 1}, End{Switch: leaf, HCA: -1, Port: k + 1})
				}
				for s := range ft.Spines {
					for j := range perSpine {
						g.cable(End{Switch: leaf, HCA: -1, Port: ft.NodesPerLeaf + s*perSpine + j + 1},
							End{Switch: spines[s], HCA: -1, Port: l*perSpine + j + 1})
					}
				}
			}
		}
	}
	if err := ft.giveAddrs(g.switches); err != nil {
		return nil, err
	}
	return New(ll, g.switches, hcas, g.cables)
}

// giveAddrs gives switch i the address i+1 of ft.Addrs.
func (ft FatTree) giveAddrs(sw []Switch) error {
	if !ft.Addrs.IsValid() {
		return nil
	}
	a := ft.Addrs.Addr()
	for i := range sw {
		a = a.Next()
		if !ft.Addrs.Contains(a) {
			return fmt.Errorf("fat tree: addrs: %s holds fewer than the tree's %d switches; give a larger prefix", ft.Addrs, len(sw))
		}
		sw[i].Addrs = []string{a.String()}
	}
	return nil
}

type builder struct {
	switches []Switch
	cables   []Cable
}

func (b *builder) sw(s Switch) int {
	b.switches = append(b.switches, s)
	return len(b.switches) - 1
}

func (b *builder) cable(a, z End) { b.cables = append(b.cables, Cable{A: a, B: z}) }
