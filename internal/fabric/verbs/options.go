package verbs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrUnavailable is wrapped by New's error when this binary or host cannot
// run the engine at all: built without the verbs tag, or no libibverbs.
// Callers can fall back (e.g. to the simulator) with errors.Is.
var ErrUnavailable = errors.New("verbs engine unavailable")

// Options select what the engine may use.
type Options struct {
	// Devices limits the engine to these HCAs (e.g. "mlx5_0", "rxe0");
	// empty means every device the library lists.
	Devices []string
	// GID is the GID index policy for endpoints that leave the choice to
	// the provider: "auto" (the default: the IPv4-mapped RoCE v2 entry on
	// Ethernet, index 0 on InfiniBand) or "index=N".
	GID string
}

// gidPolicy is a parsed Options.GID.
type gidPolicy struct {
	auto  bool
	index int
}

func (g gidPolicy) String() string {
	if g.auto {
		return "auto"
	}
	return "index=" + strconv.Itoa(g.index)
}

// parseGID accepts "", "auto", "index=N" and a bare "N" (what perftest's -x
// users type).
func parseGID(s string) (gidPolicy, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" || s == "auto" {
		return gidPolicy{auto: true}, nil
	}
	num := strings.TrimPrefix(s, "index=")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > 0xffff {
		return gidPolicy{}, fmt.Errorf("gid %q: want \"auto\" or \"index=N\" with N a GID table index (0..65535)", s)
	}
	return gidPolicy{index: n}, nil
}

// validate checks Options without touching the library, so a typo is
// reported the same way with or without the engine compiled in.
func (o Options) validate() (gidPolicy, error) {
	g, err := parseGID(o.GID)
	if err != nil {
		return g, err
	}
	seen := map[string]bool{}
	for _, d := range o.Devices {
		if d == "" || strings.ContainsAny(d, "/ \t\n") {
			return g, fmt.Errorf("device %q: want an HCA name such as mlx5_0 or rxe0", d)
		}
		if seen[d] {
			return g, fmt.Errorf("device %q listed twice", d)
		}
		seen[d] = true
	}
	return g, nil
}
