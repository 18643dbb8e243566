package main

import (
	"fmt"
	"strings"
	"time"
)

// liveInfo and liveMatrix decode the parts of GET /api/v1/live and
// /api/v1/sweeps/live/matrix the live phase judges.
type liveInfo struct {
	Enabled bool   `json:"enabled"`
	PlanID  uint64 `json:"plan_id"`
	Members int    `json:"members"`
	Probing int    `json:"probing"`
	Window  int64  `json:"window"`
	Cells   int    `json:"cells"`
	Healthy bool   `json:"healthy"`
	Error   string `json:"error"`
	// LinkFlows and Links: the steered link flows and the cables they
	// found losing probes.
	LinkFlows   int        `json:"link_flows"`
	TracedFlows int        `json:"traced_flows"`
	Links       []liveLink `json:"links"`
}

type liveLink struct {
	Cable string  `json:"cable"`
	State string  `json:"state"`
	Loss  float64 `json:"loss"`
	Lost  int     `json:"lost"`
	Flaps int     `json:"flaps"`
}

type liveSuspect struct {
	Kind   string `json:"kind"`
	Node   string `json:"node"`
	Device string `json:"device"`
	Class  string `json:"class"`
	Reason string `json:"reason"`
	Bad    int    `json:"bad"`
	Total  int    `json:"total"`
}

type liveMatrix struct {
	Healthy  bool          `json:"healthy"`
	Suspects []liveSuspect `json:"suspects"`
}

// waitLive polls the coordinator's live view until it shows want, at
// most limit, and prints how long that took:
//
//	clean:<N>  N members all probing, every cell judged, no failing suspect
//	<node>     the live matrix's first failing suspect is that node (or its HCA)
//	links-clean:<N>  N members probing, link flows planned and all traced, no cable named
//	link:<A>~<B>     the one cable named and not recovered has ends A and B
//	link-recovered   link flows planned, every cable named has recovered
func waitLive(url, want, limit string) error {
	d, err := time.ParseDuration(limit)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(url, "/")
	start := time.Now()
	var last string
	for {
		status, ok := liveState(base, want)
		if ok {
			fmt.Printf("labcheck: live %s after %.1fs: %s\n", want, time.Since(start).Seconds(), status)
			return nil
		}
		if status != last {
			fmt.Printf("labcheck: live +%.0fs: %s\n", time.Since(start).Seconds(), status)
			last = status
		}
		if time.Since(start) > d {
			return fmt.Errorf("live view not %s within %s: %s", want, limit, status)
		}
		time.Sleep(time.Second)
	}
}

func liveState(base, want string) (string, bool) {
	var info liveInfo
	if err := getJSON(base+"/api/v1/live", &info); err != nil {
		return err.Error(), false
	}
	// No age in it: the status is printed when it changes, once a window.
	status := fmt.Sprintf("plan %d, %d/%d probing, window %d, %d cells", info.PlanID, info.Probing, info.Members,
		info.Window, info.Cells)
	if info.Error != "" {
		status += ", " + info.Error
	}
	if info.LinkFlows > 0 || strings.HasPrefix(want, "link") {
		status += fmt.Sprintf(", %d link flows (%d traced)", info.LinkFlows, info.TracedFlows)
		for _, l := range info.Links {
			status += fmt.Sprintf(", cable %s %s %.1f%% (%d lost, %d flaps)", l.Cable, l.State, 100*l.Loss, l.Lost, l.Flaps)
		}
	}
	if !info.Enabled || info.Cells == 0 {
		return status, false
	}
	if n, ok := strings.CutPrefix(want, "links-clean:"); ok {
		nodes := atoi(n)
		return status, info.LinkFlows > 0 && info.TracedFlows == info.LinkFlows && len(info.Links) == 0 &&
			info.Probing == nodes && info.Members == nodes
	}
	if want == "link-recovered" {
		for _, l := range info.Links {
			if l.State != "recovered" {
				return status, false
			}
		}
		return status, info.LinkFlows > 0
	}
	if ends, ok := strings.CutPrefix(want, "link:"); ok {
		a, b, _ := strings.Cut(ends, "~")
		var bad []liveLink
		for _, l := range info.Links {
			if l.State != "recovered" {
				bad = append(bad, l)
			}
		}
		return status, len(bad) == 1 && (bad[0].Cable == a+" <-> "+b || bad[0].Cable == b+" <-> "+a)
	}
	var m liveMatrix
	if err := getJSON(base+"/api/v1/sweeps/live/matrix", &m); err != nil {
		return status + ": " + err.Error(), false
	}
	// Latency verdicts (class ok, slow) are reported but do not count:
	// under emulation equal virtual links differ by more than the
	// production thresholds (as for sweeps, see the package comment).
	var sus []string
	var failed []liveSuspect
	for _, s := range m.Suspects {
		if s.Class != "" && s.Class != "ok" {
			failed = append(failed, s)
		}
		who := s.Node
		if s.Device != "" {
			who += "/" + s.Device
		}
		sus = append(sus, fmt.Sprintf("%s %s %s %d/%d bad (%s)", s.Kind, who, s.Class, s.Bad, s.Total, s.Reason))
	}
	if len(sus) == 0 {
		status += ", no suspect"
	} else {
		status += ", suspects: " + strings.Join(sus, "; ")
	}
	if n, ok := strings.CutPrefix(want, "clean:"); ok {
		nodes := atoi(n)
		return status, len(failed) == 0 && info.Probing == nodes && info.Members == nodes && info.Cells >= nodes*(nodes-1)
	}
	return status, len(failed) > 0 && failed[0].Node == want
}
