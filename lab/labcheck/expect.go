package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// emulationThresholds turn the performance rules off: under TCG the spread
// between equal virtual links is far beyond any production threshold, so
// slow/low-bandwidth verdicts would drown the failure being diagnosed. The
// failure classes, rollups and localization are the product's own.
var emulationThresholds = matrix.Thresholds{LatencyFactor: 1e9, BandwidthFraction: 1e-9, GroupLabel: "-"}

// rejudge rebuilds the coordinator's matrix with emulationThresholds.
func rejudge(b []byte) (*matrix.Matrix, error) {
	var m matrix.Matrix
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	cells := make([]matrix.Cell, 0, len(m.Cells))
	for _, r := range m.Cells {
		cells = append(cells, r.Cell)
	}
	return matrix.Build(m.Nodes, cells, emulationThresholds), nil
}

// expect judges one fault case and appends a row to the table file:
// case, expected, observed, PASS/FAIL. It fails (exit 1) on a miss.
//
//	labcheck expect FILE CASE -node vm2 -class port-down[,other] -cause RE [-fix RE] [-min-bad N]
//	                          [-suspect-kind hca,node] [-suspect-reason RE] [-table F]
//
// The matrix is rebuilt with emulationThresholds first. The verdict must
// be right (at least min-bad of the node's cells failed, none of the other
// nodes' cells), the suspect must be right (the matrix's first suspect is
// that node, one of its HCAs or a pair with it, of an allowed kind, and no
// suspect blames anything else), and the diagnosis must
// name the problem: the dominant class of the node's failed cells is one
// of the allowed ones and some failed cell's cause (and fix) match.
func expect(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: labcheck expect FILE CASE -node N -class C -cause RE [-fix RE] [-min-bad N] [-table F]")
	}
	file, name := args[0], args[1]
	fs := flag.NewFlagSet("expect", flag.ContinueOnError)
	node := fs.String("node", "", "the node the fault was put on")
	classes := fs.String("class", "", "allowed dominant classes, comma separated")
	causeRE := fs.String("cause", "", "regexp a failed cell's cause must match")
	fixRE := fs.String("fix", "", "regexp that cell's fix must match")
	minBad := fs.Int("min-bad", 1, "failed cells of the node at least")
	table := fs.String("table", "", "append the row to this file")
	kinds := fs.String("suspect-kind", "", "allowed kinds of the first suspect (hca,node,...); empty: any")
	reasonRE := fs.String("suspect-reason", "", "regexp the first suspect's reason must match; empty: any")
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	if *node == "" || *classes == "" || *causeRE == "" {
		return fmt.Errorf("expect %s: -node, -class and -cause are required", name)
	}
	cre, err := regexp.Compile("(?i)" + *causeRE)
	if err != nil {
		return fmt.Errorf("-cause: %w", err)
	}
	fre, err := regexp.Compile("(?i)" + *fixRE)
	if err != nil {
		return fmt.Errorf("-fix: %w", err)
	}
	rre, err := regexp.Compile("(?i)" + *reasonRE)
	if err != nil {
		return fmt.Errorf("-suspect-reason: %w", err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	m, err := rejudge(b)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	allowed := strings.Split(*classes, ",")
	expected := fmt.Sprintf("suspect %s %s; >=%d of its cells failed, others ok; class %s; cause ~ /%s/", strings.ReplaceAll(*kinds, ",", "|"), *node, *minBad, *classes, *causeRE)
	if *reasonRE != "" {
		expected += fmt.Sprintf("; suspect reason ~ /%s/", *reasonRE)
	}

	var problems []string
	bad, total, others := 0, 0, 0
	count := map[string]int{}
	// cause and fix: the first failed cell's of the node that match;
	// said: the first failed cell's, shown when none matches, so the
	// table always tells what the product said.
	var cause, fix, saidCause, saidFix string
	for _, c := range m.Cells {
		mine := c.Src == *node || c.Dst == *node
		failed := c.Class != probe.ClassOK && c.Class != ""
		switch {
		case mine:
			total++
			if failed {
				bad++
				count[string(c.Class)]++
				if c.Error != nil && cause == "" && cre.MatchString(c.Error.Cause) && fre.MatchString(c.Error.Fix) {
					cause, fix = c.Error.Cause, c.Error.Fix
				}
				if c.Error != nil && saidCause == "" {
					saidCause, saidFix = c.Error.Cause, c.Error.Fix
				}
			}
		case failed:
			others++
			problems = append(problems, fmt.Sprintf("%s->%s failed (%s) though it does not touch %s", c.Src, c.Dst, c.Class, *node))
		}
	}
	dominant := ""
	for _, k := range sortedByCount(count) {
		dominant = k
		break
	}
	if bad < *minBad {
		problems = append(problems, fmt.Sprintf("only %d of %d cells of %s failed", bad, total, *node))
	}
	if bad > 0 && !slices.Contains(allowed, dominant) {
		problems = append(problems, fmt.Sprintf("dominant class %s, want %s", dominant, *classes))
	}
	if bad > 0 && cause == "" {
		problems = append(problems, fmt.Sprintf("no failed cell's cause matches /%s/ with a fix matching /%s/", *causeRE, *fixRE))
	}
	// The first suspect must be the node (of an allowed kind), and no
	// suspect may blame anything that does not involve it.
	suspect, reason := "none", ""
	for i, s := range m.Suspects {
		name := s.Kind + " " + s.Node
		if s.Device != "" {
			name += "/" + s.Device
		}
		if s.Peer != "" {
			name += "<->" + s.Peer
		}
		involved := s.Node == *node || s.Peer == *node || slices.Contains(s.Members, *node)
		if i == 0 {
			suspect, reason = name, s.Reason
			if !involved || (*kinds != "" && !slices.Contains(strings.Split(*kinds, ","), s.Kind)) {
				problems = append(problems, "first suspect is "+name)
			}
			if !rre.MatchString(s.Reason) {
				problems = append(problems, fmt.Sprintf("first suspect's reason does not match /%s/: %s", *reasonRE, short(s.Reason, 600)))
			}
		} else if !involved {
			problems = append(problems, "also blamed: "+name)
		}
	}
	if len(m.Suspects) == 0 {
		problems = append(problems, "the matrix names no suspect")
	}
	var cls []string
	for _, k := range sortedByCount(count) {
		cls = append(cls, fmt.Sprintf("%s %d", k, count[k]))
	}
	said, cl, fl := "", 150, 90
	if cause == "" && saidCause != "" {
		// Nothing matched: the whole of what the product said.
		cause, fix, said, cl, fl = saidCause, saidFix, "unmatched ", 1000, 1000
	}
	observed := fmt.Sprintf("suspect %s; %d/%d of its cells failed (%s), %d others; %scause: %s | fix: %s",
		suspect, bad, total, strings.Join(cls, ", "), others, said, short(cause, cl), short(fix, fl))
	if *reasonRE != "" {
		observed += "; suspect reason: " + short(reason, 400)
	}
	result := "PASS"
	if len(problems) > 0 {
		result = "FAIL"
		observed += " [" + strings.Join(problems, "; ") + "]"
	}
	row := strings.Join([]string{name, expected, observed, result}, "\t")
	fmt.Println(row)
	if *table != "" {
		f, err := os.OpenFile(*table, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		fmt.Fprintln(f, row)
		f.Close()
	}
	if result != "PASS" {
		return fmt.Errorf("case %s: %s", name, strings.Join(problems, "; "))
	}
	return nil
}

func sortedByCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

func short(s string, n int) string {
	if s == "" {
		return "-"
	}
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

// printTable prints the fault table the expect rows built, and fails when
// any row failed.
func printTable(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	fails := 0
	fmt.Println()
	fmt.Println("fault case table (Soft-RoCE, real engine)")
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			continue
		}
		if f[3] != "PASS" {
			fails++
		}
		fmt.Printf("\n%-4s %s\n     expected: %s\n     observed: %s\n", f[3], f[0], f[1], f[2])
	}
	if fails > 0 {
		return fmt.Errorf("%d fault case(s) failed", fails)
	}
	return nil
}
