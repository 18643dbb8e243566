package hostlist

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	cases := []struct {
		expr string
		want string // comma-joined
	}{
		{"", ""},
		{"login1", "login1"},
		{"gpu[001-003,130]", "gpu001,gpu002,gpu003,gpu130"},
		{"node-[01-04],login1", "node-01,node-02,node-03,node-04,login1"},
		{"r[1-2]n[01-02]", "r1n01,r1n02,r2n01,r2n02"},
		{"a[1-2]-ib,b[3]", "a1-ib,a2-ib,b3"},
		{"[7-9]", "7,8,9"},
		{"n[8-11]", "n8,n9,n10,n11"},
		{"n[098-101]", "n098,n099,n100,n101"},
		{" a1 , b2 ", "a1,b2"},
		{"a[1-3],a2,a[1]", "a1,a2,a3"}, // each name once, first place kept
		{"x.y_z[1-2].lan", "x.y_z1.lan,x.y_z2.lan"},
	}
	for _, c := range cases {
		got, err := Expand(c.expr)
		if err != nil {
			t.Errorf("Expand(%q): %v", c.expr, err)
			continue
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("Expand(%q) = %q, want %q", c.expr, strings.Join(got, ","), c.want)
		}
	}
}

// Every error names the part at fault, so a 200-character Slurm expression
// is fixable from the message alone.
func TestExpandErrors(t *testing.T) {
	cases := []struct{ expr, part, msg string }{
		{"gpu[001-128,13a]", `in "gpu[001-128,13a]"`, `"13a" is not a number`},
		{"ok1,gpu[5-1]", `in "gpu[5-1]"`, "runs backwards"},
		{"a[1-2", `in "a[1-2"`, "never closed"},
		{"a1-2],b", `in "a1-2]"`, "']' without '['"},
		{"a[1[2]]", `in "a[1[2]]"`, "nested"},
		{"a,,b", "", "part 2 is empty"},
		{"a,", "", "part 2 is empty"},
		{"a[]", `in "a[]"`, "empty brackets"},
		{"a[-3]", `in "a[-3]"`, "want digits"},
		{"a b", `in "a b"`, "not allowed"},
		{"big[1-9999999]", `in "big[1-9999999]"`, "more than"},
		{"r[1-2000]n[1-2000]", `in "r[1-2000]n[1-2000]"`, "more than"},
		{"n[1234567890123456789]", "", "want digits"},
	}
	for _, c := range cases {
		_, err := Expand(c.expr)
		if err == nil {
			t.Errorf("Expand(%q) accepted", c.expr)
			continue
		}
		if !strings.Contains(err.Error(), c.part) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Expand(%q): %v; want %q and %q", c.expr, err, c.part, c.msg)
		}
	}
}

func TestCompress(t *testing.T) {
	cases := []struct {
		in   string // comma-joined names
		want string
	}{
		{"", ""},
		{"login1", "login1"},
		{"gpu001,gpu002,gpu003,gpu130", "gpu[001-003,130]"},
		{"gpu130,gpu002,gpu001,gpu003,gpu002", "gpu[001-003,130]"},
		{"node-01,node-02,node-03,node-04,login1", "login1,node-[01-04]"},
		{"r1n01,r1n02,r2n01,r2n02", "r[1-2]n[01-02]"},
		{"r1n1,r2n1,r3n1", "r[1-3]n1"},
		{"n8,n9,n10,n11", "n[8-11]"},
		{"n098,n099,n100", "n[098-100]"},
		{"n1,n01", "n1,n01"}, // "n[1,01]" is longer
		{"n1,n01,n2,n02,n3", "n[1-3,01-02]"},
		{"a,b,c", "a,b,c"},
		{"gpu1,gpu2,gpu10", "gpu[1-2,10]"},
		{"a1-ib,a2-ib", "a[1-2]-ib"},
	}
	for _, c := range cases {
		var in []string
		if c.in != "" {
			in = strings.Split(c.in, ",")
		}
		got, err := Compress(in)
		if err != nil {
			t.Errorf("Compress(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Compress(%q) = %q, want %q", c.in, got, c.want)
		}
		checkRoundTrip(t, in, got)
	}
}

func TestCompressRejectsUnwritableNames(t *testing.T) {
	for _, names := range [][]string{{"a", ""}, {"a[1]"}, {"a,b"}, {"a b"}} {
		if got, err := Compress(names); err == nil {
			t.Errorf("Compress(%q) = %q, want an error", names, got)
		}
	}
}

// A 1,024-node cluster folds into one short part, and a cluster with holes
// keeps them.
func TestCompressLarge(t *testing.T) {
	var names []string
	for i := 1; i <= 1024; i++ {
		if i == 17 || i == 500 {
			continue
		}
		names = append(names, fmt.Sprintf("gpu%04d", i))
	}
	got, err := Compress(names)
	if err != nil {
		t.Fatal(err)
	}
	if want := "gpu[0001-0016,0018-0499,0501-1024]"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	checkRoundTrip(t, names, got)
}

func TestLess(t *testing.T) {
	in := []string{"gpu10", "gpu2", "a", "gpu01", "gpu1", "b1", "gpu2-ib"}
	sort.Slice(in, func(a, b int) bool { return Less(in[a], in[b]) })
	want := "a,b1,gpu1,gpu01,gpu2,gpu2-ib,gpu10"
	if strings.Join(in, ",") != want {
		t.Fatalf("got %s, want %s", strings.Join(in, ","), want)
	}
}

// checkRoundTrip: Expand(Compress(x)) is the set x.
func checkRoundTrip(t *testing.T, names []string, expr string) {
	t.Helper()
	back, err := Expand(expr)
	if err != nil {
		t.Fatalf("Expand(Compress(%q)) = Expand(%q): %v", names, expr, err)
	}
	a, b := setOf(names), setOf(back)
	if !slices.Equal(a, b) {
		t.Fatalf("round trip of %q via %q gave %q", a, expr, b)
	}
	if len(back) != len(b) {
		t.Fatalf("Expand(%q) repeats names: %q", expr, back)
	}
}

func setOf(names []string) []string {
	out := slices.Clone(names)
	sort.Strings(out)
	return slices.Compact(out)
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"gpu[001-128,130]", "node-[01-04],login1", "r[1-2]n[01-02]", "a[1-3],a2",
		"n[098-101]", "a[1[2]]", "a,,b", "x[9-10]y[1,01]", "", "[0-0]", "a[1-2],b[1-2]c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		names, err := Expand(expr)
		if err != nil {
			if !strings.Contains(err.Error(), "hostlist") {
				t.Fatalf("error does not say where it comes from: %v", err)
			}
			return
		}
		if len(names) > 20000 {
			return // valid but too big to round-trip quickly
		}
		expr2, err := Compress(names)
		if err != nil {
			t.Fatalf("Compress(Expand(%q)): %v", expr, err)
		}
		if len(names) > 0 && len(expr2) > len(strings.Join(names, ",")) {
			t.Fatalf("Compress made %q longer than the plain list", expr2)
		}
		checkRoundTrip(t, names, expr2)
	})
}
