package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/hostlist"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// expect judges one fault case and appends a row to the table file:
// case, expected, observed, PASS/FAIL. It fails (exit 1) on a miss.
//
//	labcheck expect FILE CASE [-node vm2] [-class port-down[,other] -cause RE [-fix RE] [-min-bad N]]
//	                          [-suspect-kind hca,node] [-suspect-reason RE] [-suspect-verdict V] [-direction D]
//	                          [-no-failed] [-gate-exit N -gate-said N] [-exclude vm2,vm3|- -exclude-file F]
//	                          [-warning KIND:NODE [-warning-fix RE]] [-min-sweep-seconds N -sweep-seconds N]
//	                          [-table F]
//
// The matrix is the coordinator's, judged with the shipped thresholds: what
// an operator's gate sees. With -class, the verdict must be right (at least
// min-bad of the node's cells failed, none of the other nodes' cells) and
// the diagnosis must name the problem (the dominant class of the node's
// failed cells is an allowed one, and some failed cell's cause and fix
// match). With -class or a suspect flag, the first suspect must be the node,
// one of its HCAs or a pair with it, and no confident suspect (one that
// could exclude nodes) blames anything else. The gate's exit code, its
// exclude list, a configuration warning and the sweep's length are judged
// when given.
func expect(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: labcheck expect FILE CASE [-node N] [-class C -cause RE] [-gate-exit N -gate-said N] [more flags: expect.go]")
	}
	file, name := args[0], args[1]
	fs := flag.NewFlagSet("expect", flag.ContinueOnError)
	node := fs.String("node", "", "the node the fault was put on")
	classes := fs.String("class", "", "allowed dominant classes of the node's failed cells, comma separated")
	causeRE := fs.String("cause", "", "regexp a failed cell's cause must match")
	fixRE := fs.String("fix", "", "regexp that cell's fix must match")
	minBad := fs.Int("min-bad", 1, "failed cells of the node at least")
	table := fs.String("table", "", "append the row to this file")
	kinds := fs.String("suspect-kind", "", "allowed kinds of the first suspect (hca,node,...); empty: any")
	reasonRE := fs.String("suspect-reason", "", "regexp the first suspect's reason must match; empty: any")
	verdict := fs.String("suspect-verdict", "", "the first suspect's verdict (failed, slow-latency, low-bandwidth)")
	direction := fs.String("direction", "", "the first suspect's direction (egress, ingress)")
	noFailed := fs.Bool("no-failed", false, "no cell may have failed")
	gateExit := fs.String("gate-exit", "", "the gate's expected exit code")
	gateSaid := fs.String("gate-said", "", "the gate's exit code, as the runner saw it")
	exclude := fs.String("exclude", "", "the exact exclude list the gate must write (comma separated; - for none)")
	excludeFile := fs.String("exclude-file", "", "the exclude file the gate wrote")
	warning := fs.String("warning", "", "a configuration warning KIND:NODE the matrix must give")
	warningFixRE := fs.String("warning-fix", "", "regexp that warning's fix must match")
	minSweep := fs.Int("min-sweep-seconds", 0, "the sweep lasted at least this long")
	sweepSecs := fs.Int("sweep-seconds", 0, "how long the sweep lasted, as the runner timed it")
	link := fs.String("link", "", "the first suspect is a link whose ends start with these, comma separated (leaf1:,spine1:)")
	linkDirection := fs.String("link-direction", "", "that link suspect's direction (one-way, both)")
	cablingWant := fs.String("cabling", "", "NODE,VERDICT,EXPECTED,FOUND: a finding rdmamesh cabling must give (its JSON in -cabling-file)")
	cablingFile := fs.String("cabling-file", "", "rdmamesh cabling --json's output")
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	res := map[string]*regexp.Regexp{}
	for flagName, v := range map[string]string{"cause": *causeRE, "fix": *fixRE, "suspect-reason": *reasonRE, "warning-fix": *warningFixRE} {
		re, err := regexp.Compile("(?i)" + v)
		if err != nil {
			return fmt.Errorf("-%s: %w", flagName, err)
		}
		res[flagName] = re
	}
	judgeCells := *classes != ""
	judgeSuspect := judgeCells || *kinds != "" || *reasonRE != "" || *verdict != "" || *direction != ""
	if (judgeCells && (*node == "" || *causeRE == "")) || (judgeSuspect && *node == "") {
		return fmt.Errorf("expect %s: -class needs -node and -cause, and a suspect flag needs -node", name)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var m matrix.Matrix
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	c := caseCheck{m: &m, node: *node}
	if judgeCells {
		c.cells(strings.Split(*classes, ","), res["cause"], res["fix"], *minBad)
		c.expected = append(c.expected, fmt.Sprintf(">=%d of %s's cells failed, others ok; class %s; cause ~ /%s/", *minBad, *node, *classes, *causeRE))
	}
	if judgeSuspect {
		c.suspect(*kinds, res["suspect-reason"], *reasonRE, *verdict, *direction)
	}
	if *noFailed {
		c.expected = append(c.expected, "no failed cell")
		if n := m.Counts[matrix.VerdictFailed]; n > 0 {
			c.problem("%d cells failed", n)
		}
	}
	if *gateExit != "" {
		c.expected = append(c.expected, "gate exit "+*gateExit)
		c.observed = append(c.observed, "gate exit "+*gateSaid)
		if *gateSaid != *gateExit {
			c.problem("gate exit %s, want %s", *gateSaid, *gateExit)
		}
	}
	if *exclude != "" {
		c.excludes(*exclude, *excludeFile)
	}
	if *warning != "" {
		c.warning(*warning, res["warning-fix"], *warningFixRE)
	}
	if *link != "" {
		c.link(strings.Split(*link, ","), *linkDirection)
	}
	if *cablingWant != "" {
		c.cabling(*cablingWant, *cablingFile)
	}
	if *minSweep > 0 {
		c.expected = append(c.expected, fmt.Sprintf("sweep >= %d s", *minSweep))
		c.observed = append(c.observed, fmt.Sprintf("sweep %d s", *sweepSecs))
		if *sweepSecs < *minSweep {
			c.problem("the sweep took %d s, under %d s: the fault did not span it", *sweepSecs, *minSweep)
		}
	}
	return c.row(name, *table)
}

// caseCheck gathers what one case expected, what it saw and what is wrong.
type caseCheck struct {
	m                            *matrix.Matrix
	node                         string
	expected, observed, problems []string
}

func (c *caseCheck) problem(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// cells judges the node's failed cells: how many, their dominant class,
// a cause and fix that name the problem, and no other node's cell failed.
func (c *caseCheck) cells(allowed []string, cre, fre *regexp.Regexp, minBad int) {
	bad, total, others := 0, 0, 0
	count := map[string]int{}
	// cause and fix: the first failed cell's of the node that match;
	// said: the first failed cell's, shown when none matches, so the
	// table always tells what the product said.
	var cause, fix, saidCause, saidFix string
	for _, r := range c.m.Cells {
		mine := r.Src == c.node || r.Dst == c.node
		failed := r.Verdict == matrix.VerdictFailed
		switch {
		case mine:
			total++
			if failed {
				bad++
				count[string(r.Class)]++
				if r.Error != nil && cause == "" && cre.MatchString(r.Error.Cause) && fre.MatchString(r.Error.Fix) {
					cause, fix = r.Error.Cause, r.Error.Fix
				}
				if r.Error != nil && saidCause == "" {
					saidCause, saidFix = r.Error.Cause, r.Error.Fix
				}
			}
		case failed:
			others++
			c.problem("%s->%s failed (%s) though it does not touch %s", r.Src, r.Dst, r.Class, c.node)
		}
	}
	dominant := ""
	if keys := sortedByCount(count); len(keys) > 0 {
		dominant = keys[0]
	}
	if bad < minBad {
		c.problem("only %d of %d cells of %s failed", bad, total, c.node)
	}
	if bad > 0 && !slices.Contains(allowed, dominant) {
		c.problem("dominant class %s, want %s", dominant, strings.Join(allowed, ","))
	}
	if bad > 0 && cause == "" {
		c.problem("no failed cell's cause matches /%s/ with a fix matching /%s/", cre, fre)
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
	c.observed = append(c.observed, fmt.Sprintf("%d/%d of its cells failed (%s), %d others; %scause: %s | fix: %s",
		bad, total, strings.Join(cls, ", "), others, said, short(cause, cl), short(fix, fl)))
}

// suspect judges the first suspect, and that no confident one blames
// anything the node is not part of: weak outliers of a noisy fabric are
// reported, not acted on, so they may stand beside the fault.
func (c *caseCheck) suspect(kinds string, rre *regexp.Regexp, reasonRE, verdict, direction string) {
	exp := fmt.Sprintf("first suspect %s %s", strings.ReplaceAll(cmp.Or(kinds, "any"), ",", "|"), c.node)
	for _, e := range [][2]string{{"verdict", verdict}, {"direction", direction}} {
		if e[1] != "" {
			exp += fmt.Sprintf(", %s %s", e[0], e[1])
		}
	}
	if reasonRE != "" {
		exp += fmt.Sprintf(", reason ~ /%s/", reasonRE)
	}
	c.expected = append(c.expected, exp)
	floor := cmp.Or(c.m.Thresholds.ExcludeConfidence, matrix.LowConfidence)
	suspect, reason := "none", ""
	for i, s := range c.m.Suspects {
		name := s.Kind + " " + s.Node
		if s.Device != "" {
			name += "/" + s.Device
		}
		if s.Peer != "" {
			name += "<->" + s.Peer
		}
		involved := s.Node == c.node || s.Peer == c.node || slices.Contains(s.Members, c.node)
		if i == 0 {
			suspect, reason = fmt.Sprintf("%s (%s, confidence %g, direction %s)", name, s.Verdict, s.Confidence, cmp.Or(s.Direction, "-")), s.Reason
			if !involved || (kinds != "" && !slices.Contains(strings.Split(kinds, ","), s.Kind)) {
				c.problem("first suspect is %s", name)
			}
			if !rre.MatchString(s.Reason) {
				c.problem("first suspect's reason does not match /%s/: %s", reasonRE, short(s.Reason, 600))
			}
			if verdict != "" && string(s.Verdict) != verdict {
				c.problem("first suspect's verdict is %s, want %s", s.Verdict, verdict)
			}
			if direction != "" && s.Direction != direction {
				c.problem("first suspect's direction is %q, want %s", s.Direction, direction)
			}
		} else if !involved && s.Confidence >= floor {
			c.problem("also blamed: %s (confidence %g)", name, s.Confidence)
		}
	}
	if len(c.m.Suspects) == 0 {
		c.problem("the matrix names no suspect")
	}
	obs := "suspect " + suspect
	if reasonRE != "" {
		obs += "; reason: " + short(reason, 400)
	}
	c.observed = append(c.observed, obs)
}

// excludes judges the gate's exclude file against the exact list wanted.
func (c *caseCheck) excludes(want, file string) {
	c.expected = append(c.expected, "exclude "+want)
	var got []string
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			c.problem("exclude file: %v", err)
			return
		}
		if expr := strings.TrimSpace(string(b)); expr != "" {
			if got, err = hostlist.Expand(expr); err != nil {
				c.problem("exclude file %q: %v", expr, err)
				return
			}
		}
	}
	var wantList []string
	if want != "-" {
		wantList = strings.Split(want, ",")
	}
	slices.Sort(got)
	slices.Sort(wantList)
	c.observed = append(c.observed, "exclude "+cmp.Or(strings.Join(got, ","), "-"))
	if !slices.Equal(got, wantList) {
		c.problem("excluded %s, want %s", cmp.Or(strings.Join(got, ","), "nobody"), want)
	}
}

// warning judges that the matrix gives a configuration warning of a kind
// on a node (or a link), with a fix that names what to do.
func (c *caseCheck) warning(want string, fre *regexp.Regexp, fixRE string) {
	kind, node, _ := strings.Cut(want, ":")
	c.expected = append(c.expected, fmt.Sprintf("warning %s on %s, fix ~ /%s/", kind, node, fixRE))
	var seen []string
	found := false
	for _, w := range c.m.Warnings {
		subject := cmp.Or(w.Node, w.Link)
		seen = append(seen, fmt.Sprintf("%s %s: %s (fix: %s)", w.Kind, subject, w.Reason, w.Fix))
		found = found || (w.Kind == kind && subject == node && fre.MatchString(w.Fix))
	}
	c.observed = append(c.observed, "warnings: "+cmp.Or(strings.Join(seen, "; "), "none"))
	if !found {
		c.problem("no %s warning on %s with a fix matching /%s/", kind, node, fixRE)
	}
}

// row prints and appends the case's table row; an error when it failed.
func (c *caseCheck) row(name, table string) error {
	observed := strings.Join(c.observed, "; ")
	result := "PASS"
	if len(c.problems) > 0 {
		result = "FAIL"
		observed += " [" + strings.Join(c.problems, "; ") + "]"
	}
	row := strings.Join([]string{name, strings.Join(c.expected, "; "), observed, result}, "\t")
	fmt.Println(row)
	if table != "" {
		f, err := os.OpenFile(table, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		fmt.Fprintln(f, row)
		if err := f.Close(); err != nil {
			return err
		}
	}
	if result != "PASS" {
		return fmt.Errorf("case %s: %s", name, strings.Join(c.problems, "; "))
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

// link judges the first suspect: a link (switch to switch) whose ends
// start with the given prefixes, in order, and its direction.
func (c *caseCheck) link(ends []string, direction string) {
	c.expected = append(c.expected, fmt.Sprintf("first suspect link %s %s", strings.Join(ends, " -> "), cmp.Or(direction, "any direction")))
	if len(c.m.Suspects) == 0 {
		c.observed = append(c.observed, "no suspect")
		c.problem("no suspect, want the link %s", strings.Join(ends, " -> "))
		return
	}
	s := c.m.Suspects[0]
	c.observed = append(c.observed, fmt.Sprintf("first suspect %s %v %s: %s", s.Kind, s.Ends, s.Direction, short(s.Reason, 200)))
	ok := s.Kind == matrix.KindLink && len(s.Ends) == len(ends)
	for i := range ends {
		ok = ok && strings.HasPrefix(s.Ends[i], ends[i])
	}
	if !ok {
		c.problem("first suspect %s %v, want the link %s", s.Kind, s.Ends, strings.Join(ends, " -> "))
	}
	if direction != "" && s.Direction != direction {
		c.problem("link direction %q, want %s", s.Direction, direction)
	}
}
