package main

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/topology"
)

// The path-truth check of the routed Clos: the spine the product's
// tracer says a flow crosses must be the spine that forwarded the flow's
// packets (the spines' captures), for every flow of every VM pair. It
// proves the path the product reports is the path the packets took.

// tracedPath is the part of `rdmamesh trace --json`'s paths read here.
type tracedPath struct {
	Flow struct {
		Src  string `json:"src_ip"`
		Dst  string `json:"dst_ip"`
		Port int    `json:"src_port"`
	} `json:"flow"`
	Hops []struct {
		TTL  int    `json:"ttl"`
		Addr string `json:"addr"`
	} `json:"hops"`
}

// printSports prints the source ports of the flows from src to dst the
// captures saw, comma-separated, at most limit of them (0: all): the
// flows `rdmamesh trace` is to trace.
func printSports(capDir, src, dst string, limit int) error {
	seen, err := readCaptures(capDir)
	if err != nil {
		return err
	}
	var ports []int
	for f := range seen {
		if f.src == src && f.dst == dst {
			ports = append(ports, f.sport)
		}
	}
	if len(ports) == 0 {
		return fmt.Errorf("no RoCE v2 flow from %s to %s crossed a spine", src, dst)
	}
	sort.Ints(ports)
	if limit > 0 && len(ports) > limit {
		ports = ports[:limit] // every flow on the wire is as good a witness; tracing each costs seconds
	}
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = fmt.Sprint(p)
	}
	fmt.Println(strings.Join(s, ","))
	return nil
}

// pathTruth compares traces with captures; every pair needs minFlows.
func pathTruth(capDir, planFile string, minFlows int, traceFiles []string) error {
	seen, err := readCaptures(capDir)
	if err != nil {
		return err
	}
	topo, err := topology.LoadPlan(planFile)
	if err != nil {
		return err
	}
	type pairKey struct{ src, dst string }
	flows := map[pairKey]int{}
	split := map[pairKey]map[string]int{}
	var problems []string
	for _, file := range traceFiles {
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var paths []tracedPath
		if err := json.Unmarshal(raw, &paths); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		for _, p := range paths {
			f := p.Flow
			traced := ""
			for _, h := range p.Hops {
				a, err := netip.ParseAddr(h.Addr)
				if err != nil {
					continue
				}
				if s, ok := topo.SwitchAt(a); ok && topo.Switches[s].Tier == topology.Spine {
					traced = topo.Switches[s].Name
				}
			}
			wire := seen[wireFlow{f.Src, f.Dst, f.Port}]
			k := pairKey{f.Src, f.Dst}
			switch {
			case traced == "":
				problems = append(problems, fmt.Sprintf("%s -> %s sport %d: the trace names no spine (hops %+v)", f.Src, f.Dst, f.Port, p.Hops))
			case len(wire) != 1:
				problems = append(problems, fmt.Sprintf("%s -> %s sport %d: the captures saw it on %v, want one spine", f.Src, f.Dst, f.Port, wire))
			case wire[traced] == 0:
				problems = append(problems, fmt.Sprintf("%s -> %s sport %d: traced through %s, its packets crossed %s", f.Src, f.Dst, f.Port, traced, spinesOf(wire)))
			default:
				flows[k]++
				if split[k] == nil {
					split[k] = map[string]int{}
				}
				split[k][traced]++
			}
		}
	}
	keys := make([]pairKey, 0, len(flows))
	for k := range flows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].src+keys[i].dst < keys[j].src+keys[j].dst })
	fmt.Println("| pair | flows traced = on the wire | spines |")
	fmt.Println("|---|---:|---|")
	for _, k := range keys {
		var sp []string
		for s, n := range split[k] {
			sp = append(sp, fmt.Sprintf("%s %d", s, n))
		}
		sort.Strings(sp)
		fmt.Printf("| %s -> %s | %d | %s |\n", k.src, k.dst, flows[k], strings.Join(sp, ", "))
		if flows[k] < minFlows {
			problems = append(problems, fmt.Sprintf("%s -> %s: %d flows agree, want at least %d", k.src, k.dst, flows[k], minFlows))
		}
	}
	if len(keys) == 0 {
		problems = append(problems, "no traced flow")
	}
	if len(problems) > 0 {
		return fmt.Errorf("path truth: %d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}
