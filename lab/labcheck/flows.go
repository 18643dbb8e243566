package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The flow check of the routed Clos: the UDP source port each worker
// reported for its test (a cell's flow and back flow) must be the port
// its packets carried on the wire, and a test between leaves must have
// crossed exactly one spine. The wire is what tcpdump saw on each spine
// (SPINE.txt files, `tcpdump -n -l udp dst port 4791` lines).

// wireFlow is one RoCE v2 5-tuple seen on a spine.
type wireFlow struct {
	src, dst string
	sport    int
}

var tcpdumpUDP = regexp.MustCompile(`IP (\d+\.\d+\.\d+\.\d+)\.(\d+) > (\d+\.\d+\.\d+\.\d+)\.4791:`)

// readCaptures reads dir/*.txt, one spine each, into flow → spines (and
// packets per spine).
func readCaptures(dir string) (map[wireFlow]map[string]int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no captures in %s (want SPINE.txt files of tcpdump lines)", dir)
	}
	seen := map[wireFlow]map[string]int{}
	for _, f := range files {
		spine := strings.TrimSuffix(filepath.Base(f), ".txt")
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			m := tcpdumpUDP.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			sport, _ := strconv.Atoi(m[2])
			k := wireFlow{m[1], m[3], sport}
			if seen[k] == nil {
				seen[k] = map[string]int{}
			}
			seen[k][spine]++
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return seen, nil
}

// checkFlows compares the sweep's reported flows with the captures. The
// leaf of a node is the third octet of its data address (lab/clos.sh).
func checkFlows(sweepFile, capDir string) error {
	m, err := readSweep(sweepFile)
	if err != nil {
		return err
	}
	seen, err := readCaptures(capDir)
	if err != nil {
		return err
	}
	ip := map[string]string{}
	for _, n := range m.Nodes {
		for _, p := range n.Ports {
			if p.Rail == 0 {
				ip[n.Name] = p.IP
			}
		}
	}
	leaf := func(addr string) string { return strings.Split(addr, ".")[2] }
	var problems, rows []string
	checked := 0
	tested := 0
	for _, c := range m.Cells {
		if c.Verdict == "untested" {
			continue // out of a link sweep's plan
		}
		tested++
		a, z := ip[c.Src], ip[c.Dst]
		if a == "" || z == "" {
			problems = append(problems, fmt.Sprintf("%s -> %s: no data address", c.Src, c.Dst))
			continue
		}
		cross := leaf(a) != leaf(z)
		for _, dir := range []struct {
			from, to string
			port     int
			what     string
		}{{a, z, c.Flow, "flow"}, {z, a, c.BackFlow, "back flow"}} {
			where := seen[wireFlow{dir.from, dir.to, dir.port}]
			switch {
			case dir.port == 0:
				problems = append(problems, fmt.Sprintf("%s -> %s: no %s reported", c.Src, c.Dst, dir.what))
			case cross && len(where) != 1:
				problems = append(problems, fmt.Sprintf("%s -> %s: %s %d (%s -> %s) seen on spines %v, want exactly one",
					c.Src, c.Dst, dir.what, dir.port, dir.from, dir.to, where))
			case !cross && len(where) != 0:
				problems = append(problems, fmt.Sprintf("%s -> %s: same-leaf %s %d crossed spines %v", c.Src, c.Dst, dir.what, dir.port, where))
			default:
				checked++
				if cross {
					rows = append(rows, fmt.Sprintf("%s -> %s %s %d via %s", c.Src, c.Dst, dir.what, dir.port, spinesOf(where)))
				}
			}
		}
	}
	sort.Strings(rows)
	for _, r := range rows {
		fmt.Println(r)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d of %d reported flows do not match the wire:\n  %s", len(problems), 2*tested, strings.Join(problems, "\n  "))
	}
	fmt.Printf("flows: %d reported flows and back flows of %d cells match the ports on the wire; every test between leaves crossed exactly one spine\n", checked, tested)
	return nil
}

func spinesOf(where map[string]int) string {
	var s []string
	for k, n := range where {
		s = append(s, fmt.Sprintf("%s (%d packets)", k, n))
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}
