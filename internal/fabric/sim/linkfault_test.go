package sim

import (
	"strings"
	"testing"
)

func TestParseLinkFault(t *testing.T) {
	for spec, want := range map[string]string{
		"cable=leaf-r0-05:33~spine-r0-02:5:loss=2%": "cable=leaf-r0-05:33~spine-r0-02:5:loss=2%",
		"cable=leaf-r0-05:33>spine-r0-02:5:bw=0.7":  "cable=leaf-r0-05:33>spine-r0-02:5:bw=0.7",
		"link=leaf-r0-05~spine-r0-02:down":          "cable=leaf-r0-05~spine-r0-02:down",
		"cable=node-03/mlx5_1~leaf-r1-00:3:loss=1%": "cable=node-03/mlx5_1~leaf-r1-00:3:loss=1%",
		"switch=spine-r0-02:down":                   "switch=spine-r0-02:down",
		"switch=spine-r0-02:loss=5%,lat=2x":         "switch=spine-r0-02:loss=5%,lat=2x",
	} {
		f, err := ParseFault(spec)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if got := f.String(); got != want {
			t.Errorf("%s: reads back as %s, want %s", spec, got, want)
		}
	}
	for spec, want := range map[string]string{
		"cable=leaf-r0-05:33":                      "want cable=A~B:EFFECT",
		"cable=leaf-r0-05:0~spine-r0-02:5:down":    "must be a number from 1",
		"cable=leaf-r0-05:33~spine-r0-02:5":        "missing",
		"cable=leaf-r0-05:33~spine-r0-02:5:dead":   "a cable takes down, loss",
		"cable=a:1~b:2:loss=2%@egress":             "a cable takes",
		"switch=spine-r0-02":                       "missing \":EFFECT\"",
		"switch=spine r0:down":                     "contains",
		"cable=node-03/mlx5_1:1~leaf-r1-00:3:down": "without a port",
	} {
		_, err := ParseFault(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", spec, err, want)
		}
	}
}

func TestRxeSport(t *testing.T) {
	// hash_32(qpn, 14) by hand for two QP numbers.
	for qpn, want := range map[uint32]uint16{0x11: 0xC000 | uint16((0x11*uint64(0x61C88647))&0xffffffff>>18), 0x12: 0xC000 | uint16((0x12*uint64(0x61C88647))&0xffffffff>>18)} {
		if got := rxeSport(qpn); got != want {
			t.Errorf("qpn %#x: sport %#x, want %#x", qpn, got, want)
		}
	}
}

func TestLinkFaultNeedsATopology(t *testing.T) {
	_, err := New(Config{Preset: "roce-2x100", Faults: faults(t, "switch=spine-r0-00:down")})
	if err == nil || !strings.Contains(err.Error(), "need a topology") {
		t.Errorf("a switch fault without a topology: %v", err)
	}
}
