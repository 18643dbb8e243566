package lldp

import (
	"strings"
	"testing"
	"time"
	"unicode"
)

// printable fails t when a string that may reach a terminal holds a
// control character or a rune that does not print.
func printable(t *testing.T, what, s string) {
	t.Helper()
	if i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
		t.Fatalf("%s %q has an unprintable rune at byte %d", what, s, i)
	}
}

// FuzzParseFrame feeds arbitrary bytes to the frame parser: it must never
// panic, whatever it accepts carries the mandatory chassis and port IDs,
// and every string it yields is safe to print.
func FuzzParseFrame(f *testing.F) {
	f.Add(capturedFrame(f))
	f.Add(ethernet([]byte{2, 0, 0, 0, 0, 1}, leafDU()))
	f.Add(ethernet([]byte{2, 0, 0, 0, 0, 1}, leafDU()[:20]))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		du, from, err := ParseFrame(b)
		if err != nil {
			if du != nil {
				t.Fatalf("an error (%v) with a unit", err)
			}
			return
		}
		if du.ChassisID.Type == "" || du.PortID.Type == "" || du.ChassisID.Value == "" || du.PortID.Value == "" {
			t.Fatalf("accepted a unit without chassis or port ID: %+v", du)
		}
		n := du.Neighbor("eth0", from, time.Unix(0, 0))
		for what, s := range map[string]string{"chassis ID": n.ChassisID, "port ID": n.PortID, "system name": n.SystemName,
			"port description": n.PortDescription, "system description": n.SystemDescription, "label": n.Label()} {
			printable(t, what, s)
		}
	})
}

// FuzzParseLLDPCLI feeds arbitrary text to the lldpcli reader: errors are
// fine, panics are not, every neighbour is filed under its interface, and
// its strings are safe to print.
func FuzzParseLLDPCLI(f *testing.F) {
	for _, name := range []string{"lldpcli-json0-two.json", "lldpcli-json0-mac.json", "lldpcli-json0-empty.json", "lldpcli-json-two.json"} {
		f.Add(readTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ns, err := ParseLLDPCLI(b, time.Unix(0, 0))
		if err != nil {
			return
		}
		for ifname, list := range ns {
			for _, n := range list {
				if n.Interface != ifname || ifname == "" {
					t.Fatalf("neighbour %+v filed under %q", n, ifname)
				}
				for what, s := range map[string]string{"chassis ID": n.ChassisID, "port ID": n.PortID,
					"system name": n.SystemName, "port description": n.PortDescription} {
					printable(t, what, s)
				}
			}
		}
	})
}
