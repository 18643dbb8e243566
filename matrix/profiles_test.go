package matrix

import (
	"os"
	"strings"
	"testing"
)

func TestLoadProfilesExample(t *testing.T) {
	f, err := os.Open("testdata/profiles.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := LoadProfiles(f)
	if err != nil {
		t.Fatal(err)
	}
	ib := ps["ib-ndr-8x400"]
	want := Thresholds{LatencyFactor: 2.1, BandwidthFraction: 0.93, LineRateFraction: 0.9, TailFactor: 5, RobustZ: 6,
		MaxP99Ns: 10000, MinGbps: 350, BaselineLatency: 0.10, BaselineBandwidth: 0.05, GroupLabel: "leaf",
		QuietSpread: 0.05, MaxSpread: 0.5, OutlierZ: 4, ExcludeConfidence: 0.5}
	if ib != want {
		t.Errorf("ib-ndr-8x400:\n got %+v\nwant %+v", ib, want)
	}
	// Unlisted keys keep the defaults; 0 turns a rule off.
	if r := ps["roce-2x100"]; r.LatencyFactor != 2.1 || r.LineRateFraction != 0.9 || r.BaselineBandwidth != 0.08 || r.GroupLabel != "rack" {
		t.Errorf("roce-2x100: %+v", r)
	}
	if l := ps["lab-rxe"]; l.LineRateFraction != 0 || l.LatencyFactor != 4 || l.GroupLabel != "-" {
		t.Errorf("lab-rxe: %+v", l)
	}
	if len(ps) != 3 {
		t.Errorf("%d profiles", len(ps))
	}
}

// The copyable example must stay loadable, and name the hardware it says.
func TestLoadProfilesCopyableExample(t *testing.T) {
	f, err := os.Open("examples/profiles.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := LoadProfiles(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ib-ndr-8x400", "ib-hdr-8x200", "roce-2x100", "lab-rxe"} {
		if _, ok := ps[name]; !ok {
			t.Errorf("examples/profiles.yaml lacks %s", name)
		}
	}
}

// Every bad file is refused with an error naming the profile and key, the
// way configs/ reports bad config files.
func TestLoadProfilesErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"empty", ``, "empty"},
		{"not a mapping", `- a`, "want a mapping"},
		{"unknown top key", "profile:\n  a: {}", `unknown top-level key "profile"`},
		{"no profiles", "profiles: {}", "no profiles"},
		{"unknown key", "profiles:\n  h100:\n    latency_factr: 2", "profiles.h100.latency_factr: line 3: unknown key"},
		{"factor under 1", "profiles:\n  h100:\n    latency_factor: 0.5", `profiles.h100.latency_factor: line 3: "0.5": want a number >= 1`},
		{"fraction over 1", "profiles:\n  a:\n    bandwidth_fraction: 93", "profiles.a.bandwidth_fraction"},
		{"not a number", "profiles:\n  a:\n    min_gbps: fast", `profiles.a.min_gbps: line 3: "fast"`},
		{"negative limit", "profiles:\n  a:\n    max_p99_ns: -1", "profiles.a.max_p99_ns"},
		{"z under 1", "profiles:\n  a:\n    robust_z: 0.5", "profiles.a.robust_z"},
		{"variance sign", "profiles:\n  a:\n    baseline_bandwidth: +5%", "profiles.a.baseline_bandwidth: line 3: \"+5%\": variance \"+5%\" has the wrong sign"},
		{"bare percent", "profiles:\n  a:\n    baseline_latency: 10", "a bare number is a fraction"},
		{"duplicate key", "profiles:\n  a:\n    robust_z: 5\n    robust_z: 6", "set twice"},
		{"duplicate profile", "profiles:\n  a: {robust_z: 5}\n  a: {robust_z: 6}", "profiles.a: line 3: defined twice"},
		{"profile not a mapping", "profiles:\n  a: 5", "profiles.a: line 2: want a mapping"},
		{"list value", "profiles:\n  a:\n    min_gbps: [1]", "profiles.a.min_gbps"},
		{"group label with =", "profiles:\n  a:\n    group_label: leaf=L1", "profiles.a.group_label"},
		{"bad yaml", "profiles:\n  a: [", "profiles:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadProfiles(strings.NewReader(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestParseVariance(t *testing.T) {
	cases := []struct {
		in   string
		sign int
		want float64
		ok   bool
	}{
		{"-5%", -1, 0.05, true}, {"5%", -1, 0.05, true}, {"0.05", -1, 0.05, true}, {" -7.5 % ", -1, 0.075, true},
		{"+10%", +1, 0.10, true}, {"10%", +1, 0.10, true}, {"0", +1, 0, true}, {"0%", -1, 0, true},
		{"+5%", -1, 0, false}, {"-10%", +1, 0, false}, {"5", -1, 0, false}, {"abc", +1, 0, false},
		{"-100%", -1, 0, false}, {"%", -1, 0, false}, {"NaN%", +1, 0, false}, {"--5%", -1, 0, false},
	}
	for _, c := range cases {
		got, err := ParseVariance(c.in, c.sign)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseVariance(%q, %d) = %v, %v", c.in, c.sign, got, err)
		}
	}
}

func TestShippedProfilesMatchExamples(t *testing.T) {
	for _, p := range []string{"examples/profiles.yaml", "../configs/gate/profiles.yaml"} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := LoadProfiles(f)
		f.Close()
		if err != nil || len(ps) < 3 {
			t.Fatalf("%s: %d profiles, %v", p, len(ps), err)
		}
	}
}
