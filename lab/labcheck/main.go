// Command labcheck holds the lab's assertions that are awkward in shell:
//
//	labcheck nodes URL N TIMEOUT   wait until the coordinator lists N alive
//	                               workers whose inventory has a usable port
//	labcheck sweep FILE N NET      the gate's matrix: every cell of N nodes
//	                               measured ok, over the IPv4 RoCE v2 GID
//	                               with an address in NET (e.g. 10.77.0)
//	labcheck start URL [k=v ...]   start a sweep (connect=rdmacm, latency_iters=N,
//	                               bw_iters=N, ...), print its id
//	labcheck wait URL ID TIMEOUT [CELLS|OUT]
//	                               wait until CELLS cells are done, or until
//	                               the sweep ends and write its matrix to OUT
//	labcheck node URL NODE usable|unusable|gidN|dead TIMEOUT
//	                               wait for a worker's state
//	labcheck expect FILE CASE -node N -class C -cause RE ...
//	                               judge one fault case (expect.go)
//	labcheck table FILE            print the fault table, fail on any miss
//	labcheck cellstats FILE        P7's figures of a sweep matrix (p7.go)
//	labcheck scenario FILE         check a fault scenario file and print its
//	                               plan for lab/scenario.sh (scenario.go)
//	labcheck scenario -vms FILE... check them, print the most VMs any needs
//	labcheck served MODE API...    sum of the workers' responder sessions
//	                               connected in MODE (exchange|rdmacm)
//	labcheck live URL clean:N|NODE TIMEOUT
//	                               wait until the live (always-on) matrix
//	                               is clean with N nodes probing, or names
//	                               NODE its first suspect (live.go)
//	labcheck churn API NODE N CONC OUT
//	                               N test sessions through one worker's API
//	                               (to itself), leak check (churn.go)
//
// The verdicts are the gate's to judge (its exit code, with the shipped
// thresholds, which judge emulation's noisy rails against their noise);
// sweep reports any slow or low-bandwidth cell beside the figures.
//
// The setup checks decode only the fields they read; the fault-case judge
// (expect.go) reads the matrix with the module's own matrix package.
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

type port struct {
	Device   string `json:"device"`
	Rail     int    `json:"rail"`
	State    string `json:"state"`
	GIDIndex int    `json:"gid_index"`
	GID      string `json:"gid"`
	GIDType  string `json:"gid_type"`
	MTU      int    `json:"mtu"`
	IP       string `json:"ip"`
	Usable   bool   `json:"usable"`
	Why      string `json:"unusable_why"`
	Neighbor *struct {
		SystemName string `json:"system_name"`
		Unknown    string `json:"unknown"`
	} `json:"neighbor"`
}

type nodeInfo struct {
	Name      string `json:"name"`
	Role      string `json:"role"`
	State     string `json:"state"`
	Inventory *struct {
		Provider string `json:"provider"`
		Ports    []port `json:"ports"`
	} `json:"inventory"`
}

type sweepMatrix struct {
	Nodes []struct {
		Name  string `json:"name"`
		Ports []port `json:"ports"`
	} `json:"nodes"`
	Cells []struct {
		Src     string `json:"src"`
		Dst     string `json:"dst"`
		Rail    int    `json:"rail"`
		Class   string `json:"class"`
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
		Error   any    `json:"error"`
		Latency *struct {
			P50 float64 `json:"p50_ns"`
		} `json:"latency"`
		Bandwidth *struct {
			Gbps float64 `json:"gbps"`
		} `json:"bandwidth"`
		Flow     int `json:"flow"`
		BackFlow int `json:"back_flow"`
	} `json:"cells"`
	Healthy bool `json:"healthy"`
}

// readSweep reads a sweep's matrix JSON (gate --json).
func readSweep(file string) (sweepMatrix, error) {
	var m sweepMatrix
	b, err := os.ReadFile(file)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", file, err)
	}
	return m, nil
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: labcheck nodes URL N TIMEOUT | labcheck sweep FILE N NET")
	}
	var err error
	switch a := os.Args[2:]; os.Args[1] {
	case "nodes":
		if len(a) != 3 {
			fail("usage: labcheck nodes URL N TIMEOUT")
		}
		err = waitNodes(a[0], atoi(a[1]), a[2])
	case "sweep":
		if len(a) != 3 {
			fail("usage: labcheck sweep FILE N NET")
		}
		err = checkSweep(a[0], atoi(a[1]), a[2])
	case "start":
		if len(a) < 1 {
			fail("usage: labcheck start URL [key=value ...]")
		}
		err = startSweep(a[0], a[1:])
	case "wait":
		if len(a) < 3 || len(a) > 4 {
			fail("usage: labcheck wait URL ID TIMEOUT [CELLS|OUT]")
		}
		cells, out := 0, ""
		if len(a) == 4 {
			if n, convErr := strconv.Atoi(a[3]); convErr == nil {
				cells = n
			} else {
				out = a[3]
			}
		}
		err = waitSweep(a[0], a[1], cells, a[2], out)
	case "node":
		if len(a) != 4 {
			fail("usage: labcheck node URL NODE usable|unusable|dead TIMEOUT")
		}
		err = waitNode(a[0], a[1], a[2], a[3])
	case "expect":
		err = expect(a)
	case "served":
		if len(a) < 2 {
			fail("usage: labcheck served MODE WORKER_API...")
		}
		err = served(a[0], a[1:])
	case "churn":
		if len(a) != 5 {
			fail("usage: labcheck churn API NODE N CONC OUT")
		}
		err = churn(a[0], a[1], atoi(a[2]), atoi(a[3]), a[4])
	case "scenario":
		err = scenario(a)
	case "live":
		if len(a) != 3 {
			fail("usage: labcheck live URL clean:N|NODE|links-clean:N|link:A~B TIMEOUT")
		}
		err = waitLive(a[0], a[1], a[2])
	case "cellstats":
		if len(a) != 1 {
			fail("usage: labcheck cellstats FILE")
		}
		err = cellStats(a[0])
	case "sports":
		if len(a) != 3 && len(a) != 4 {
			fail("usage: labcheck sports CAPTURE_DIR SRC_IP DST_IP [MAX]")
		}
		limit := 0
		if len(a) == 4 {
			limit = atoi(a[3])
		}
		err = printSports(a[0], a[1], a[2], limit)
	case "pathtruth":
		if len(a) < 4 {
			fail("usage: labcheck pathtruth CAPTURE_DIR PLAN MIN_FLOWS TRACE.json...")
		}
		err = pathTruth(a[0], a[1], atoi(a[2]), a[3:])
	case "flows":
		if len(a) != 2 {
			fail("usage: labcheck flows SWEEP.json CAPTURE_DIR")
		}
		err = checkFlows(a[0], a[1])
	case "table":
		if len(a) != 1 {
			fail("usage: labcheck table FILE")
		}
		err = printTable(a[0])
	default:
		fail("unknown check " + os.Args[1])
	}
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "labcheck:", msg)
	os.Exit(1)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail(fmt.Sprintf("%q is not a number", s))
	}
	return n
}

func waitNodes(url string, want int, limit string) error {
	d, err := time.ParseDuration(limit)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(d)
	var last string
	for {
		ready, status, err := readyWorkers(url)
		if err == nil && ready >= want {
			fmt.Printf("labcheck: %d workers ready: %s\n", ready, status)
			return nil
		}
		if err != nil {
			status = err.Error()
		}
		if status != last {
			fmt.Println("labcheck: waiting for workers:", status)
			last = status
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d workers ready after %s: %s", ready, want, limit, status)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func readyWorkers(url string) (int, string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(strings.TrimSuffix(url, "/") + "/api/v1/nodes")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var nodes []nodeInfo
	if err := json.NewDecoder(resp.Body).Decode(&nodes); err != nil {
		return 0, "", fmt.Errorf("decoding /api/v1/nodes: %w", err)
	}
	ready := 0
	var parts []string
	for _, n := range nodes {
		if n.Role != "worker" {
			continue
		}
		s := n.Name + "=" + n.State
		ok := n.State == "alive" && n.Inventory != nil && len(n.Inventory.Ports) > 0
		if ok {
			for _, p := range n.Inventory.Ports {
				ok = ok && p.Usable
				s += fmt.Sprintf("[%s %s gid %d]", p.Device, p.State, p.GIDIndex)
			}
		} else {
			s += "[no inventory yet]"
		}
		if ok {
			ready++
		}
		parts = append(parts, s)
	}
	return ready, strings.Join(parts, " "), nil
}

func checkSweep(file string, nodes int, net string) error {
	m, err := readSweep(file)
	if err != nil {
		return err
	}
	var problems []string
	if len(m.Nodes) != nodes {
		problems = append(problems, fmt.Sprintf("matrix has %d nodes, want %d", len(m.Nodes), nodes))
	}
	rails := 0
	for _, n := range m.Nodes {
		for _, p := range n.Ports {
			rails = max(rails, p.Rail+1)
			// The sweep must run over the IPv4-mapped RoCE v2 entry of the
			// lab's own network, the one that routes between the VMs.
			if p.GIDType != "RoCE v2" || !strings.HasPrefix(p.IP, net+".") || p.GID != "::ffff:"+p.IP {
				problems = append(problems, fmt.Sprintf("%s %s uses GID %d %s (%s), not the IPv4 RoCE v2 entry in %s.0/24",
					n.Name, p.Device, p.GIDIndex, p.GID, p.GIDType, net))
			}
		}
	}
	want := nodes * (nodes - 1) * max(rails, 1)
	if len(m.Cells) != want {
		problems = append(problems, fmt.Sprintf("matrix has %d cells, want %d (%d nodes, %d rails, both directions)", len(m.Cells), want, nodes, rails))
	}
	for _, c := range m.Cells {
		if c.Class != "ok" || c.Latency == nil || c.Bandwidth == nil || c.Bandwidth.Gbps <= 0 {
			e, _ := json.Marshal(c.Error)
			problems = append(problems, fmt.Sprintf("cell %s->%s rail %d: class %q, error %s", c.Src, c.Dst, c.Rail, c.Class, e))
		}
	}
	var judged []string
	for _, c := range m.Cells {
		if c.Verdict != "ok" && c.Class == "ok" {
			judged = append(judged, fmt.Sprintf("%s->%s rail %d: %s (%s)", c.Src, c.Dst, c.Rail, c.Verdict, c.Reason))
		}
	}
	if len(judged) > 0 {
		fmt.Printf("labcheck: %d cells slower or narrower than their rail (the gate's exit code says whether that counts): %s\n",
			len(judged), strings.Join(judged, "; "))
	}
	if len(problems) > 0 {
		return fmt.Errorf("sweep check failed:\n  %s", strings.Join(problems, "\n  "))
	}
	fmt.Printf("labcheck: sweep ok: %d nodes, %d cells, all ok over IPv4 RoCE v2 GIDs\n", len(m.Nodes), len(m.Cells))
	for _, c := range m.Cells {
		fmt.Printf("  %s -> %s rail %d: p50 %.1f us, %.3f Gb/s, verdict %s\n", c.Src, c.Dst, c.Rail, c.Latency.P50/1000, c.Bandwidth.Gbps, c.Verdict)
	}
	return nil
}
