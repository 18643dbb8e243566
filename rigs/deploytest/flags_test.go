package deploytest

import (
	"slices"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/config/docgen/keyflags"
)

// The flag table agrees with the binary in both directions: every flag named
// here exists, and every flag of a config-reading command either sets a
// key listed here or is declared as setting none.
func TestFlagsMatchBinary(t *testing.T) {
	cli, err := SharedCLI()
	if err != nil {
		t.Fatal(err)
	}
	mapped := map[keyflags.Flag]bool{}
	for key, fl := range keyflags.Flags {
		for _, f := range fl {
			mapped[f] = true
			have, err := cli.Flags(f.Cmd)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := have[f.Name]; !ok {
				t.Errorf("%s: %s is not a flag of the binary", key, f)
			}
		}
	}
	global, err := cli.Flags("")
	if err != nil {
		t.Fatal(err)
	}
	for cmd, skip := range keyflags.NotKeys {
		have, err := cli.Flags(cmd)
		if err != nil {
			t.Fatal(err)
		}
		for name := range have {
			_, isGlobal := global[name]
			switch {
			case slices.Contains(skip, name), slices.Contains(keyflags.NotKeys[""], name):
			case cmd != "" && isGlobal:
				// Persistent flags are checked once, under "".
			case !mapped[keyflags.Flag{Cmd: cmd, Name: name}]:
				t.Errorf("rdmamesh %s --%s sets no key in keyflags.Flags: map it, or list it in keyflags.NotKeys", cmd, name)
			}
		}
	}
}
