package hostlist

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Compress writes names as a short hostlist expression: duplicates dropped,
// parts in natural order (gpu2 before gpu10), consecutive numbers folded into
// ranges and, where names differ in several numbers, several bracket groups
// (r[1-2]n[01-02]). Expand(Compress(x)) gives back the set x.
//
// It folds one digit run at a time, rightmost first, then tries the mirror
// order (leftmost first) and keeps the shorter text. That is not a proof of
// minimality, but it finds the expression a person would write for the
// regular names clusters use. Names must be valid host names (letters,
// digits, "-", "_", "."): a bracket or comma inside a name cannot be written.
func Compress(names []string) (string, error) {
	uniq := make([]string, 0, len(names))
	seen := make(map[string]struct{}, len(names))
	for i, n := range names {
		if n == "" {
			return "", fmt.Errorf("hostlist: name %d is empty", i)
		}
		if err := checkText(n); err != nil {
			return "", fmt.Errorf("hostlist: name %q: %v", n, err)
		}
		if _, dup := seen[n]; !dup {
			seen[n] = struct{}{}
			uniq = append(uniq, n)
		}
	}
	if len(uniq) == 0 {
		return "", nil
	}
	best := fold(uniq, true)
	if left := fold(uniq, false); len(left) < len(best) {
		best = left
	}
	// Folding is greedy; the plain list is the bound it must never exceed.
	sort.Slice(uniq, func(a, b int) bool { return Less(uniq[a], uniq[b]) })
	if plain := strings.Join(uniq, ","); len(plain) <= len(best) {
		best = plain
	}
	return best, nil
}

// item is a name, or a product of names, being folded: left and right are
// already written (brackets included), mid still holds unfolded digit runs.
type item struct {
	left, mid, right string
	first            string // smallest member in natural order, for output order
}

func fold(names []string, fromRight bool) string {
	items := make([]item, len(names))
	for i, n := range names {
		items[i] = item{mid: n, first: n}
	}
	for {
		next, changed := foldOnce(items, fromRight)
		items = next
		if !changed {
			break
		}
	}
	sort.Slice(items, func(a, b int) bool { return Less(items[a].first, items[b].first) })
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = it.left + it.mid + it.right
	}
	return strings.Join(parts, ",")
}

// foldOnce moves one digit run of every item out of mid. Items that agree on
// everything but that run form one group and share one bracket, which is
// exactly a product: every member has the same text around the run.
func foldOnce(items []item, fromRight bool) ([]item, bool) {
	type group struct {
		out     item
		digits  []string
		members []item // as they were, in case folding would not pay
		plain   int    // their length written one by one, commas included
	}
	var order []string
	groups := map[string]*group{}
	var done []item
	for _, it := range items {
		pre, digits, post, ok := digitRun(it.mid, fromRight)
		if !ok || len(digits) > maxDigits { // Expand could not read it back as a range
			done = append(done, it)
			continue
		}
		var out item
		if fromRight {
			out = item{mid: pre, right: "\x00" + post + it.right} // \x00 marks where the run goes
		} else {
			out = item{left: it.left + pre + "\x00", mid: post}
		}
		key := out.left + "\x01" + out.mid + "\x01" + out.right
		g := groups[key]
		if g == nil {
			g = &group{out: out}
			g.out.first = it.first
			groups[key] = g
			order = append(order, key)
		} else if Less(it.first, g.out.first) {
			g.out.first = it.first
		}
		g.digits = append(g.digits, digits)
		g.members = append(g.members, it)
		g.plain += len(it.left) + len(it.mid) + len(it.right) + 1
	}
	if len(order) == 0 {
		return items, false
	}
	for _, k := range order {
		g := groups[k]
		b := brackets(slices.Clone(g.digits)) // sorts its argument; members keep theirs
		folded := len(g.out.left) + len(g.out.mid) + len(g.out.right) - 1 + len(b) + 1
		if len(g.members) > 1 && folded >= g.plain {
			// "a1,a2" is shorter than "a[1-2]": write each run as it is.
			for i, it := range g.members {
				one := g.out
				one.first = it.first
				one.left = strings.Replace(one.left, "\x00", g.digits[i], 1)
				one.right = strings.Replace(one.right, "\x00", g.digits[i], 1)
				done = append(done, one)
			}
			continue
		}
		g.out.left = strings.Replace(g.out.left, "\x00", b, 1)
		g.out.right = strings.Replace(g.out.right, "\x00", b, 1)
		done = append(done, g.out)
	}
	return done, true
}

// digitRun splits s around its last (or first) run of digits.
func digitRun(s string, last bool) (pre, digits, post string, ok bool) {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	if last {
		end := len(s)
		for end > 0 && !isDigit(s[end-1]) {
			end--
		}
		if end == 0 {
			return "", "", "", false
		}
		start := end
		for start > 0 && isDigit(s[start-1]) {
			start--
		}
		return s[:start], s[start:end], s[end:], true
	}
	start := 0
	for start < len(s) && !isDigit(s[start]) {
		start++
	}
	if start == len(s) {
		return "", "", "", false
	}
	end := start
	for end < len(s) && isDigit(s[end]) {
		end++
	}
	return s[:start], s[start:end], s[end:], true
}

// brackets writes a set of digit strings: one alone stays plain ("7"), more
// become "[01-04,09]". A run "lo-hi" means every value from lo to hi padded
// to lo's width, because that is how Expand reads it back; so a run takes
// the next value only when it is written exactly that way. Runs start in
// value order and may skip differently padded values (1,01,2,02 gives
// "1-2,01-02").
func brackets(digits []string) string {
	sort.Slice(digits, func(a, b int) bool { return lessDigits(digits[a], digits[b]) })
	left := make(map[string]bool, len(digits))
	for _, d := range digits {
		left[d] = true
	}
	if len(left) == 1 {
		return digits[0]
	}
	var b strings.Builder
	b.WriteByte('[')
	for _, lo := range digits {
		if !left[lo] {
			continue // taken by an earlier run, or a duplicate
		}
		delete(left, lo)
		v, _ := strconv.ParseUint(lo, 10, 64) // at most maxDigits digits
		hi := lo
		for next := pad(v+1, len(lo)); left[next]; next = pad(v+1, len(lo)) {
			delete(left, next)
			hi, v = next, v+1
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(lo)
		if hi != lo {
			b.WriteByte('-')
			b.WriteString(hi)
		}
	}
	b.WriteByte(']')
	return b.String()
}

func pad(v uint64, width int) string {
	s := strconv.FormatUint(v, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

// lessDigits orders digit strings by value, then shorter (unpadded) first.
func lessDigits(a, b string) bool {
	ta, tb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(ta) != len(tb) {
		return len(ta) < len(tb)
	}
	if ta != tb {
		return ta < tb
	}
	return len(a) < len(b)
}

// Less orders host names naturally: digit runs by value (gpu2 < gpu10),
// text runs bytewise. Names equal in value but not in padding (n1, n01)
// order the shorter first, so the order is total.
func Less(a, b string) bool {
	for a != "" && b != "" {
		ra, restA := leadingRun(a)
		rb, restB := leadingRun(b)
		da, db := ra[0] >= '0' && ra[0] <= '9', rb[0] >= '0' && rb[0] <= '9'
		switch {
		case da && db:
			if ra != rb {
				return lessDigits(ra, rb)
			}
		case da != db:
			return da // digits sort before letters, as in ASCII
		case ra != rb:
			return ra < rb
		}
		a, b = restA, restB
	}
	return len(a) < len(b)
}

// leadingRun cuts s's first run of digits or of non-digits.
func leadingRun(s string) (run, rest string) {
	digit := s[0] >= '0' && s[0] <= '9'
	i := 1
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') == digit {
		i++
	}
	return s[:i], s[i:]
}
