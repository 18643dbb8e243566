package cabling

import "strings"

// switchNames finds a plan switch by what a neighbour says of itself.
// Switches advertise their host name, often fully qualified, with the
// case their operator typed; InfiniBand switches are known by GUID.
type switchNames struct {
	exact map[string]int32
	short map[string]int32 // folded short name → switch, -1 when two share it
	guid  map[string]int32
	cache map[[2]string]int32
}

func newSwitchNames(names, guids []string) *switchNames {
	s := &switchNames{exact: map[string]int32{}, short: map[string]int32{}, guid: map[string]int32{}, cache: map[[2]string]int32{}}
	for i, n := range names {
		s.exact[n] = int32(i)
		k := shortName(n)
		if _, dup := s.short[k]; dup {
			s.short[k] = -1
		} else {
			s.short[k] = int32(i)
		}
		if g := normGUID(guids[i]); g != "" {
			s.guid[g] = int32(i)
		}
	}
	return s
}

// find is the switch a neighbour names, or -1.
func (s *switchNames) find(system, chassis string) int32 {
	key := [2]string{system, chassis}
	if i, ok := s.cache[key]; ok {
		return i
	}
	i := s.lookup(system, chassis)
	s.cache[key] = i
	return i
}

func (s *switchNames) lookup(system, chassis string) int32 {
	if system != "" {
		if i, ok := s.exact[system]; ok {
			return i
		}
		if i, ok := s.short[shortName(system)]; ok && i >= 0 {
			return i
		}
	}
	if g := normGUID(chassis); g != "" {
		if i, ok := s.guid[g]; ok {
			return i
		}
	}
	return -1
}

// shortName is a host name's first label, case folded: "Leaf-R0-01.dc1"
// and "leaf-r0-01" are one switch.
func shortName(n string) string {
	n, _, _ = strings.Cut(strings.TrimSpace(n), ".")
	return strings.ToLower(n)
}

// normGUID writes 0x0c42a10300aa0001 and 0c:42:a1:03:00:aa:00:01 alike;
// anything that is not 1 to 16 hex digits is no GUID.
func normGUID(g string) string {
	g = strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(g, "0x"), "0X"))
	g = strings.ReplaceAll(g, ":", "")
	g = strings.TrimLeft(g, "0")
	if g == "" || len(g) > 16 || strings.Trim(g, "0123456789abcdef") != "" {
		return ""
	}
	return g
}
