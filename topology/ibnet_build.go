package topology

import (
	"errors"
	"fmt"
	"strings"
)

// build names the nodes, checks that both ends of every cable tell the
// same story, and hands the cables to New.
func (r *ibReader) build() (*Topology, error) {
	r.nameSwitches()
	if err := r.nameCAs(); err != nil {
		return nil, err
	}
	if err := r.checkPeers(); err != nil {
		return nil, err
	}
	if err := r.link(); err != nil {
		return nil, err
	}
	t, err := New(InfiniBand, r.switches, r.hcas, r.cables)
	if err != nil {
		var ce *CableError
		if !errors.As(err, &ce) || ce.Index < 0 || ce.Index >= len(r.cables) {
			return nil, &FileError{File: r.file, Msg: err.Error(), Err: err}
		}
		p := r.ends[ce.Index][0]
		if ce.Field == "end B" {
			p = r.ends[ce.Index][1]
		}
		return nil, &FileError{File: r.file, Line: p.line, Field: p.field(), Msg: ce.Msg, Err: err}
	}
	return t, nil
}

func (r *ibReader) nameSwitches() {
	name := func(n *ibNode) string {
		if m := ibManagedDesc.FindStringSubmatch(n.desc); m != nil {
			return m[1]
		}
		return n.desc
	}
	count := map[string]int{}
	for _, n := range r.nodes {
		if n.sw {
			count[name(n)]++
		}
	}
	for _, n := range r.nodes {
		if !n.sw {
			continue
		}
		s := name(n)
		if s == "" || count[s] > 1 {
			s = fmt.Sprintf("S-%016x", n.guid)
		}
		n.index, n.label = len(r.switches), s
		r.switches = append(r.switches, Switch{Name: s, GUID: fmt.Sprintf("0x%016x", n.guid), LID: n.lid})
	}
}

func (r *ibReader) nameCAs() error {
	seen := map[hcaKey]*ibNode{}
	for _, n := range r.nodes {
		if n.sw {
			continue
		}
		field := "NodeDescription"
		w := strings.Fields(n.desc)
		if len(w) != 2 {
			return r.errf(n.line, field, "%q is not \"HOST DEVICE\"; rdma-ndd sets it so (or write \"$(hostname) DEVICE\" to /sys/class/infiniband/DEVICE/node_desc on the host)", n.desc)
		}
		dev := w[1]
		rail, ok := trailingNumber(dev)
		if !ok {
			return r.errf(n.line, field, "device %q has no trailing number to take the rail from (name the devices mlx5_N, N the rail)", dev)
		}
		k := hcaKey{w[0], rail}
		if prev, dup := seen[k]; dup {
			return r.errf(n.line, field, "%s rail %d is also %q on line %d; two CAs of a host cannot share a rail", w[0], rail, prev.desc, prev.line)
		}
		seen[k] = n
		switch len(n.order) {
		case 0:
			return r.errf(n.line, "Ca line", "%s has no cabled port listed: was the file cut or edited?", n.label)
		case 1:
		default:
			p := n.order[1]
			return r.errf(p.line, p.field(), "a second cabled port of one CA (port %d is on line %d); the model has one port per device", n.order[0].num, n.order[0].line)
		}
		n.index = len(r.hcas)
		r.hcas = append(r.hcas, HCA{Node: w[0], Device: dev, Rail: rail, GUID: fmt.Sprintf("0x%016x", n.guid), LID: n.order[0].lid})
	}
	return nil
}

type ibEnd struct {
	guid uint64
	port int
}

// checkPeers looks at every port line on its own: the peer exists, is not
// the node itself, is of the type the line says, and no other line names
// the same peer port. Lines are taken in file order so that the error is
// the first one a reader would meet.
func (r *ibReader) checkPeers() error {
	claimed := map[ibEnd]*ibPort{}
	for _, n := range r.nodes {
		for _, p := range n.order {
			peer, ok := r.byGUID[p.peer]
			id := fmt.Sprintf("%c-%016x", p.peerType, p.peer)
			switch {
			case !ok:
				return r.errf(p.line, p.field(), "goes to %s, a node with no block in the file: was the output cut short?", id)
			case peer == n:
				return r.errf(p.line, p.field(), "goes to port %d of the same node: a cable to itself is no link of the fabric (unplug it or fix the file)", p.peerPort)
			case (p.peerType == 'S') != peer.sw:
				return r.errf(p.line, p.field(), "goes to %s, but line %d says that node is a %s", id, peer.line, map[bool]string{true: "Switch", false: "Ca"}[peer.sw])
			}
			if prev, dup := claimed[ibEnd{p.peer, p.peerPort}]; dup {
				return r.errf(p.line, p.field(), "goes to %s port %d, as line %d does too; one port has one cable: rerun ibnetdiscover", peer.label, p.peerPort, prev.line)
			}
			claimed[ibEnd{p.peer, p.peerPort}] = p
		}
	}
	return nil
}

// link adds each cable once, from the end met first, after checking that
// the far end's block says it goes back.
func (r *ibReader) link() error {
	done := map[ibEnd]bool{}
	for _, n := range r.nodes {
		for _, p := range n.order {
			peer := r.byGUID[p.peer]
			back, ok := peer.ports[p.peerPort]
			switch {
			case !ok:
				return r.errf(p.line, p.field(), "goes to %s port %d, but %s's block (line %d) lists no port %d: was the output cut short?",
					peer.label, p.peerPort, peer.label, peer.line, p.peerPort)
			case back.peer != n.guid || back.peerPort != p.num:
				other := fmt.Sprintf("%c-%016x port %d", back.peerType, back.peer, back.peerPort)
				if o, ok := r.byGUID[back.peer]; ok {
					other = fmt.Sprintf("%s port %d", o.label, back.peerPort)
				}
				return r.errf(p.line, p.field(), "goes to %s port %d, but line %d says that port goes to %s: the fabric changed while ibnetdiscover ran, or the file was edited; rerun it",
					peer.label, p.peerPort, back.line, other)
			}
			if done[ibEnd{n.guid, p.num}] {
				continue
			}
			done[ibEnd{peer.guid, back.num}] = true
			a, z := p, back
			if n.sw && !peer.sw {
				a, z = back, p // the host end first, as the other loaders write it
			}
			r.cables = append(r.cables, Cable{A: a.end(), B: z.end(), Speed: p.speed})
			r.ends = append(r.ends, [2]*ibPort{a, z})
		}
	}
	return nil
}

func (p *ibPort) end() End {
	if p.node.sw {
		return End{Switch: p.node.index, HCA: -1, Port: p.num}
	}
	return End{Switch: -1, HCA: p.node.index, Port: p.num}
}
