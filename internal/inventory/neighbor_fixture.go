package inventory

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/lldp"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// LLDPFile is the fixture file, at the root of a captured tree, that stands
// in for lldpd: the output of `lldpcli -f json0 show neighbors` on the
// machine the tree was captured on.
const LLDPFile = "lldpcli.json"

// maxLLDPFile bounds the read: a host's neighbours take a few KiB.
const maxLLDPFile = 1 << 20

// FixtureNeighbors answers from a captured tree's LLDPFile. A tree without
// one answers that every neighbour is unknown and why, so a captured tree
// never reads this machine's LLDP.
func FixtureNeighbors(fsys fs.FS) (NeighborLookup, error) {
	f, err := fsys.Open(LLDPFile)
	if errors.Is(err, fs.ErrNotExist) {
		return func(netdevs []string) NeighborTable {
			t := NeighborTable{About: "a captured tree without " + LLDPFile, ByNetdev: map[string]probe.Neighbor{}}
			for _, nd := range netdevs {
				t.ByNetdev[nd] = probe.Neighbor{Interface: nd,
					Unknown: "the captured tree has no " + LLDPFile + " (save `lldpcli -f json0 show neighbors` at its root)"}
			}
			return t
		}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxLLDPFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", LLDPFile, err)
	}
	heard, err := lldp.ParseLLDPCLI(b, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", LLDPFile, err)
	}
	return func(netdevs []string) NeighborTable {
		t := NeighborTable{About: "lldpd, as captured in " + LLDPFile, ByNetdev: map[string]probe.Neighbor{}}
		for _, nd := range netdevs {
			t.ByNetdev[nd] = fromLLDPD(nd, heard[nd])
		}
		return t
	}, nil
}
