package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// sweepInfo is the part of the coordinator's api.SweepInfo the lab reads.
type sweepInfo struct {
	ID        string `json:"id"`
	State     string `json:"state"`
	Error     string `json:"error"`
	Cells     int    `json:"cells"`
	CellsDone int    `json:"cells_done"`
	Spec      *struct {
		Connect string `json:"connect"`
	} `json:"spec"`
}

var client = http.Client{Timeout: 10 * time.Second}

func getJSON(url string, v any) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(b))
	}
	return json.Unmarshal(b, v)
}

// startSweep posts a sweep with the lab's small fault-case parameters and
// prints its id. args are key=value pairs of the sweep request (connect,
// latency_iters, bw_iters, bw_size, retests, pair_timeout, nodes=a,b).
// Without retests=N the sweep has no confirmation pass, as ib_write_lat.
func startSweep(url string, args []string) error {
	req := map[string]any{"mode": "full", "retests": 0}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("sweep argument %q: want key=value", a)
		}
		switch k {
		case "latency_iters", "latency_size", "bw_iters", "bw_size", "retests":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s=%q: want a number", k, v)
			}
			req[k] = n
		case "nodes":
			req[k] = strings.Split(v, ",")
		default:
			req[k] = v
		}
	}
	body, _ := json.Marshal(req)
	resp, err := client.Post(strings.TrimSuffix(url, "/")+"/api/v1/sweeps", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("starting a sweep: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	var info sweepInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return err
	}
	fmt.Println(info.ID)
	return nil
}

// waitSweep polls until the sweep has at least cells measured (0: until it
// ends), then, when it ended, writes its matrix to out.
func waitSweep(url, id string, cells int, limit, out string) error {
	d, err := time.ParseDuration(limit)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(url, "/") + "/api/v1/sweeps/" + id
	deadline := time.Now().Add(d)
	for {
		var info sweepInfo
		if err := getJSON(base, &info); err != nil {
			return err
		}
		if cells > 0 && info.CellsDone >= cells {
			return nil
		}
		if info.State != "running" {
			if info.State != "done" {
				return fmt.Errorf("sweep %s ended %s: %s", id, info.State, info.Error)
			}
			if out == "" {
				return nil
			}
			var m json.RawMessage
			if err := getJSON(base+"/matrix", &m); err != nil {
				return err
			}
			if info.Spec != nil && info.Spec.Connect != "" {
				fmt.Printf("labcheck: sweep %s done (connect %s)\n", id, info.Spec.Connect)
			}
			return os.WriteFile(out, m, 0o644)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sweep %s still running after %s (%d of %d cells)", id, limit, info.CellsDone, info.Cells)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// waitNode polls the coordinator until node's inventory says its first
// port is usable (want "usable") or not (want "unusable"), usable with GID
// index N (want "gidN"), or the node is gone from gossip (want "dead").
func waitNode(url, node, want, limit string) error {
	d, err := time.ParseDuration(limit)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(d)
	last := ""
	for {
		state, err := nodeState(url, node, want)
		if err != nil {
			state = err.Error()
		}
		if state == want {
			fmt.Printf("labcheck: %s is %s\n", node, want)
			return nil
		}
		last = state
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not %s after %s (last: %s)", node, want, limit, last)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func nodeState(url, node, want string) (string, error) {
	var nodes []nodeInfo
	if err := getJSON(strings.TrimSuffix(url, "/")+"/api/v1/nodes", &nodes); err != nil {
		return "", err
	}
	for _, n := range nodes {
		if n.Name != node {
			continue
		}
		switch {
		case n.State != "alive":
			return "dead", nil
		case n.Inventory == nil || len(n.Inventory.Ports) == 0:
			return "no inventory", nil
		case want == fmt.Sprintf("gid%d", n.Inventory.Ports[0].GIDIndex) && n.Inventory.Ports[0].Usable:
			return want, nil
		case want == fmt.Sprintf("mtu%d", n.Inventory.Ports[0].MTU) && n.Inventory.Ports[0].Usable:
			return want, nil
		case strings.HasPrefix(want, "lldp-"):
			if nb := n.Inventory.Ports[0].Neighbor; nb != nil && "lldp-"+nb.SystemName == want {
				return want, nil
			} else if nb != nil {
				return "lldp-" + nb.SystemName + nb.Unknown, nil
			}
			return "no neighbour", nil
		case n.Inventory.Ports[0].Usable:
			return "usable", nil
		}
		return "unusable", nil
	}
	return "unknown", nil
}

// served sums what the workers' /v1/health report as responder sessions
// connected in mode: the proof that a sweep really used that mode.
func served(mode string, apis []string) error {
	total := int64(0)
	for _, api := range apis {
		var h struct {
			Served map[string]int64 `json:"served"`
		}
		if err := getJSON("http://"+api+"/v1/health", &h); err != nil {
			return err
		}
		total += h.Served[mode]
	}
	fmt.Println(total)
	return nil
}
