package matrix

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadProfiles reads named threshold profiles, one per kind of hardware:
//
//	profiles:
//	  ib-ndr-8x400:
//	    line_rate_fraction: 0.9
//	    robust_z: 6
//	    baseline_bandwidth: -5%
//
// Each profile starts from DefaultThresholds() and sets only the keys it
// lists; an optional rule is switched off by setting it to 0. Keys are the
// Thresholds JSON names (see testdata/profiles.yaml). Every error names the
// profile, the key and the line, and values that the matrix would quietly
// repair (a latency factor under 1) are refused here instead, since in a
// file they are typos.
func LoadProfiles(r io.Reader) (map[string]Thresholds, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("profiles: the file is empty; want a top-level profiles: mapping")
		}
		return nil, fmt.Errorf("profiles: %w", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("profiles: line %d: want a mapping with a profiles: key", doc.Line)
	}
	root := doc.Content[0]
	var list *yaml.Node
	for i := 0; i < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "profiles" {
			return nil, fmt.Errorf("profiles: line %d: unknown top-level key %q (want profiles)", k.Line, k.Value)
		}
		list = v
	}
	if list == nil || list.Kind != yaml.MappingNode || len(list.Content) == 0 {
		return nil, fmt.Errorf("profiles: no profiles: want profiles: followed by at least one named profile")
	}
	out := map[string]Thresholds{}
	for i := 0; i < len(list.Content); i += 2 {
		k, v := list.Content[i], list.Content[i+1]
		name := k.Value
		if name == "" {
			return nil, fmt.Errorf("profiles: line %d: a profile needs a name", k.Line)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("profiles.%s: line %d: defined twice", name, k.Line)
		}
		th, err := loadProfile(name, v)
		if err != nil {
			return nil, err
		}
		out[name] = th
	}
	return out, nil
}

// profileKey parses one key's value into a Thresholds.
type profileKey func(th *Thresholds, v *yaml.Node) error

var profileKeys = map[string]profileKey{
	"latency_factor": func(th *Thresholds, v *yaml.Node) (err error) {
		th.LatencyFactor, err = number(v, func(x float64) bool { return x >= 1 }, "a number >= 1 (2.1 = ClusterKit)")
		return err
	},
	"bandwidth_fraction": func(th *Thresholds, v *yaml.Node) (err error) {
		th.BandwidthFraction, err = number(v, func(x float64) bool { return x > 0 && x <= 1 }, "a fraction in (0, 1] (0.93 = ClusterKit)")
		return err
	},
	"line_rate_fraction": func(th *Thresholds, v *yaml.Node) (err error) {
		th.LineRateFraction, err = number(v, func(x float64) bool { return x >= 0 && x <= 1 }, "a fraction in [0, 1] (0 = off)")
		return err
	},
	"tail_factor": func(th *Thresholds, v *yaml.Node) (err error) {
		th.TailFactor, err = number(v, func(x float64) bool { return x == 0 || x >= 1 }, "0 (off) or a number >= 1 (5 = default)")
		return err
	},
	"robust_z": func(th *Thresholds, v *yaml.Node) (err error) {
		th.RobustZ, err = number(v, func(x float64) bool { return x == 0 || x >= 1 }, "0 (off) or a z-score >= 1 (5 to 8 are sensible)")
		return err
	},
	"quiet_spread": func(th *Thresholds, v *yaml.Node) (err error) {
		th.QuietSpread, err = number(v, func(x float64) bool { return x > 0 }, "a robust SD in log space > 0 (0.05 = default; 100 keeps the fixed rules everywhere)")
		return err
	},
	"max_spread": func(th *Thresholds, v *yaml.Node) (err error) {
		th.MaxSpread, err = number(v, func(x float64) bool { return x > 0 }, "a robust SD in log space > 0, at least quiet_spread (0.5 = default)")
		return err
	},
	"outlier_z": func(th *Thresholds, v *yaml.Node) (err error) {
		th.OutlierZ, err = number(v, func(x float64) bool { return x >= 1 }, "a number of noise SDs >= 1 (4 = default)")
		return err
	},
	"exclude_confidence": func(th *Thresholds, v *yaml.Node) (err error) {
		th.ExcludeConfidence, err = number(v, func(x float64) bool { return x > 0 && x <= 1 }, "a confidence in (0, 1] (0.5 = default)")
		return err
	},
	"max_p99_ns": func(th *Thresholds, v *yaml.Node) (err error) {
		th.MaxP99Ns, err = number(v, func(x float64) bool { return x >= 0 }, "nanoseconds >= 0 (0 = off)")
		return err
	},
	"min_gbps": func(th *Thresholds, v *yaml.Node) (err error) {
		th.MinGbps, err = number(v, func(x float64) bool { return x >= 0 }, "Gb/s >= 0 (0 = off)")
		return err
	},
	"baseline_latency": func(th *Thresholds, v *yaml.Node) (err error) {
		th.BaselineLatency, err = variance(v, +1)
		return err
	},
	"baseline_bandwidth": func(th *Thresholds, v *yaml.Node) (err error) {
		th.BaselineBandwidth, err = variance(v, -1)
		return err
	},
	"group_label": func(th *Thresholds, v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode || strings.ContainsAny(v.Value, " \t=") {
			return fmt.Errorf("want a label key such as leaf or rack (- = off)")
		}
		th.GroupLabel = v.Value
		return nil
	},
}

func loadProfile(name string, node *yaml.Node) (Thresholds, error) {
	th := DefaultThresholds()
	if node.Kind != yaml.MappingNode {
		return th, fmt.Errorf("profiles.%s: line %d: want a mapping of threshold keys", name, node.Line)
	}
	seen := map[string]bool{}
	for i := 0; i < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		parse, ok := profileKeys[k.Value]
		if !ok {
			return th, fmt.Errorf("profiles.%s.%s: line %d: unknown key (known: %s)", name, k.Value, k.Line, knownKeys())
		}
		if seen[k.Value] {
			return th, fmt.Errorf("profiles.%s.%s: line %d: set twice", name, k.Value, k.Line)
		}
		seen[k.Value] = true
		if err := parse(&th, v); err != nil {
			return th, fmt.Errorf("profiles.%s.%s: line %d: %q: %v", name, k.Value, v.Line, v.Value, err)
		}
	}
	if th.MaxSpread < th.QuietSpread {
		return th, fmt.Errorf("profiles.%s.max_spread: %s is under quiet_spread %s: a rail too noisy to judge must be noisier than a quiet one; raise max_spread or lower quiet_spread",
			name, num(th.MaxSpread), num(th.QuietSpread))
	}
	return th, nil
}

func knownKeys() string {
	keys := make([]string, 0, len(profileKeys))
	for k := range profileKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

func number(v *yaml.Node, ok func(float64) bool, want string) (float64, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("want %s", want)
	}
	x, err := strconv.ParseFloat(v.Value, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || !ok(x) {
		return 0, fmt.Errorf("want %s", want)
	}
	return x, nil
}

func variance(v *yaml.Node, sign int) (float64, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("want a variance such as %s", exampleVariance(sign))
	}
	return ParseVariance(v.Value, sign)
}

func exampleVariance(sign int) string {
	if sign > 0 {
		return `"+10%"`
	}
	return `"-5%"`
}

// ParseVariance reads a baseline variance rule: "-5%" (bandwidth may drop
// 5%), "+10%" (latency may grow 10%), an unsigned "5%", or a fraction such
// as 0.05. sign says which direction the rule allows (+1 growth, -1 drop);
// the opposite sign is refused, since "latency may drop 10%" is no limit.
// "0" or "0%" turns the rule off.
func ParseVariance(s string, sign int) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	neg := strings.HasPrefix(t, "-")
	if neg || strings.HasPrefix(t, "+") {
		if (neg && sign > 0) || (!neg && sign < 0) {
			return 0, fmt.Errorf("variance %q has the wrong sign: want %s", s, exampleVariance(sign))
		}
		t = t[1:]
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return 0, fmt.Errorf("variance %q: want a percentage such as %s", s, exampleVariance(sign))
	}
	if pct {
		x /= 100
	} else if x >= 1 {
		return 0, fmt.Errorf("variance %q: a bare number is a fraction (0.05); write %s for percent", s, exampleVariance(sign))
	}
	if sign < 0 && x >= 1 {
		return 0, fmt.Errorf("variance %q: bandwidth cannot drop 100%% or more", s)
	}
	return x, nil
}
