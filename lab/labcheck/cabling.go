package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// cablingReport is what rdmamesh cabling --json writes (package cabling's
// Report), as far as a scenario judges it.
type cablingReport struct {
	Ports []struct {
		Verdict  string `json:"verdict"`
		End      string `json:"end"`
		Node     string `json:"node"`
		Expected string `json:"expected"`
		Found    string `json:"found"`
		Detail   string `json:"detail"`
	} `json:"ports"`
	Counts map[string]int `json:"counts"`
}

// cabling checks that the report in file has want's finding: "NODE,
// VERDICT,EXPECTED,FOUND", the last two prefixes of switch ports.
func (c *caseCheck) cabling(want, file string) {
	f := strings.Split(want, ",")
	if len(f) != 4 {
		c.problem("-cabling %q: want NODE,VERDICT,EXPECTED,FOUND", want)
		return
	}
	node, verdict, expected, found := f[0], f[1], f[2], f[3]
	c.expected = append(c.expected, fmt.Sprintf("cabling %s %s: expected %s…, found %s…", node, verdict, expected, found))
	b, err := os.ReadFile(file)
	if err != nil {
		c.problem("no cabling report: %v", err)
		return
	}
	var r cablingReport
	if err := json.Unmarshal(b, &r); err != nil {
		c.problem("cabling report %s: %v", file, err)
		return
	}
	var seen []string
	for _, p := range r.Ports {
		if p.Verdict == "ok" || p.Verdict == "no-evidence" {
			continue
		}
		seen = append(seen, fmt.Sprintf("%s %s (expected %s, found %s)", p.End, p.Verdict, p.Expected, p.Found))
		if p.Node == node && p.Verdict == verdict && strings.HasPrefix(p.Expected, expected) && strings.HasPrefix(p.Found, found) {
			c.observed = append(c.observed, fmt.Sprintf("cabling %s %s: expected %s, found %s", p.End, p.Verdict, p.Expected, p.Found))
			return
		}
	}
	c.observed = append(c.observed, "cabling: "+strings.Join(seen, "; "))
	c.problem("no cabling finding %s %s (expected %s…, found %s…) among %d: %s", node, verdict, expected, found, len(seen), strings.Join(seen, "; "))
}
