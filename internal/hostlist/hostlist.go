// Package hostlist reads and writes Slurm hostlist expressions such as
// gpu[001-128,130] or r[1-2]n[01-02],login1. It is pure and stdlib-only, so
// the matrix exports and the sweep spec can both use it.
//
// Grammar (what Slurm's scontrol accepts for ordinary clusters):
//
//	list   = part { "," part }          commas inside brackets do not split
//	part   = { text | "[" ranges "]" }  brackets may repeat, never nest
//	ranges = range { "," range }
//	range  = digits [ "-" digits ]      lo <= hi; the width of lo pads every value
//
// Names may use letters, digits and "-", "_", ".". Spaces around a part are
// ignored, since people type "a[1-2], b1".
package hostlist

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxNames bounds one expansion, so a typo such as gpu[1-99999999] is an
// error instead of a few GB of strings.
const MaxNames = 1 << 20

// maxDigits keeps range bounds inside uint64 with room to add one.
const maxDigits = 18

// Error names the part of the expression that is wrong.
type Error struct {
	Expr string // the whole expression
	Part string // the comma-separated part at fault ("" when the whole is)
	Msg  string
}

func (e *Error) Error() string {
	if e.Part == "" {
		return fmt.Sprintf("hostlist %q: %s", e.Expr, e.Msg)
	}
	return fmt.Sprintf("hostlist %q: in %q: %s", e.Expr, e.Part, e.Msg)
}

// Expand returns the names an expression denotes, in expression order
// (brackets further left vary slowest, as in Slurm), each name once. An empty
// expression is an empty list.
func Expand(expr string) ([]string, error) {
	parts, err := splitTop(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]struct{}{}
	for _, p := range parts {
		segs, count, err := parsePart(p)
		if err != nil {
			return nil, &Error{Expr: expr, Part: p, Msg: err.Error()}
		}
		if count > MaxNames-len(out) {
			return nil, &Error{Expr: expr, Part: p, Msg: fmt.Sprintf("expands to more than %d names", MaxNames)}
		}
		expandPart(segs, func(name string) {
			if _, dup := seen[name]; !dup {
				seen[name] = struct{}{}
				out = append(out, name)
			}
		})
	}
	return out, nil
}

// splitTop splits at commas outside brackets and checks bracket balance, so
// later errors can name one part.
func splitTop(expr string) ([]string, error) {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(expr); i++ {
		switch expr[i] {
		case '[':
			if depth > 0 {
				return nil, &Error{Expr: expr, Part: partAround(expr, i), Msg: "nested '[' is not allowed"}
			}
			depth++
		case ']':
			if depth == 0 {
				return nil, &Error{Expr: expr, Part: partAround(expr, i), Msg: "']' without '['"}
			}
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, expr[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, &Error{Expr: expr, Part: strings.TrimSpace(expr[start:]), Msg: "'[' is never closed"}
	}
	parts = append(parts, expr[start:])
	if len(parts) == 1 && strings.TrimSpace(parts[0]) == "" {
		return nil, nil
	}
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
		if parts[i] == "" {
			return nil, &Error{Expr: expr, Msg: fmt.Sprintf("part %d is empty (two commas in a row, or a leading/trailing comma)", i+1)}
		}
	}
	return parts, nil
}

// partAround is the top-level part holding byte i, for error messages found
// before the split is known.
func partAround(expr string, i int) string {
	start := strings.LastIndexByte(expr[:i], ',') + 1
	end := strings.IndexByte(expr[i:], ',')
	if end < 0 {
		return strings.TrimSpace(expr[start:])
	}
	return strings.TrimSpace(expr[start : i+end])
}

// segment is literal text or one bracket's list of ranges.
type segment struct {
	text   string
	ranges []numRange // nil for text
}

type numRange struct {
	lo, hi uint64
	width  int // digits of lo as written; every value is zero-padded to it
}

func (r numRange) size() uint64 { return r.hi - r.lo + 1 }

// parsePart splits one part into segments and counts the names it makes,
// without making them.
func parsePart(p string) ([]segment, int, error) {
	var segs []segment
	count := uint64(1)
	for len(p) > 0 {
		open := strings.IndexByte(p, '[')
		if open < 0 {
			open = len(p)
		}
		if open > 0 {
			if err := checkText(p[:open]); err != nil {
				return nil, 0, err
			}
			segs = append(segs, segment{text: p[:open]})
		}
		if open == len(p) {
			break
		}
		end := strings.IndexByte(p[open:], ']') + open // splitTop checked balance
		ranges, n, err := parseRanges(p[open+1 : end])
		if err != nil {
			return nil, 0, err
		}
		segs = append(segs, segment{ranges: ranges})
		if count > uint64(MaxNames)/n+1 { // would pass MaxNames; stop multiplying before overflow
			return nil, 0, fmt.Errorf("expands to more than %d names", MaxNames)
		}
		count *= n
		p = p[end+1:]
	}
	if count > MaxNames {
		return nil, 0, fmt.Errorf("expands to more than %d names", MaxNames)
	}
	return segs, int(count), nil
}

func checkText(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !hostChar(c) {
			return fmt.Errorf("character %q is not allowed in a host name", c)
		}
	}
	return nil
}

func hostChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// parseRanges reads "001-128,130" and returns the ranges and how many values
// they hold (capped just above MaxNames so callers can multiply safely).
func parseRanges(s string) ([]numRange, uint64, error) {
	if s == "" {
		return nil, 0, fmt.Errorf("empty brackets []")
	}
	var out []numRange
	var total uint64
	for _, item := range strings.Split(s, ",") {
		r, err := parseRange(item)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
		total += min(r.size(), MaxNames+1)
		total = min(total, MaxNames+1)
	}
	return out, total, nil
}

func parseRange(item string) (numRange, error) {
	loS, hiS, isRange := strings.Cut(item, "-")
	lo, err := parseNum(loS, item)
	if err != nil {
		return numRange{}, err
	}
	r := numRange{lo: lo, hi: lo, width: len(loS)}
	if !isRange {
		return r, nil
	}
	if r.hi, err = parseNum(hiS, item); err != nil {
		return numRange{}, err
	}
	if r.hi < r.lo {
		return numRange{}, fmt.Errorf("range %q runs backwards", item)
	}
	return r, nil
}

func parseNum(s, item string) (uint64, error) {
	if s == "" || len(s) > maxDigits {
		return 0, fmt.Errorf("range %q: want digits (1 to %d), got %q", item, maxDigits, s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("range %q: %q is not a number", item, s)
		}
	}
	return strconv.ParseUint(s, 10, 64)
}

// expandPart emits the cartesian product of the segments, leftmost slowest.
func expandPart(segs []segment, emit func(string)) {
	var rec func(i int, prefix []byte)
	rec = func(i int, prefix []byte) {
		if i == len(segs) {
			emit(string(prefix))
			return
		}
		s := segs[i]
		if s.ranges == nil {
			rec(i+1, append(prefix, s.text...))
			return
		}
		for _, r := range s.ranges {
			for v := r.lo; ; v++ {
				rec(i+1, appendPadded(prefix, v, r.width))
				if v == r.hi {
					break
				}
			}
		}
	}
	rec(0, nil)
}

// appendPadded appends v zero-padded to width digits. It appends to a copy of
// prefix's length so sibling branches of the recursion never share bytes.
func appendPadded(prefix []byte, v uint64, width int) []byte {
	digits := strconv.FormatUint(v, 10)
	out := make([]byte, len(prefix), len(prefix)+max(width, len(digits))+16)
	copy(out, prefix)
	for i := len(digits); i < width; i++ {
		out = append(out, '0')
	}
	return append(out, digits...)
}
