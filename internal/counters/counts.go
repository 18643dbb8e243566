package counters

import "fmt"

// Count is one known counter's delta in the compact form a test result
// carries: the counter's index in Known and how much it moved.
type Count struct {
	Index uint8  `json:"index"`
	N     uint64 `json:"n"`
}

// Counts is a delta's moved counters, compactly (a few bytes a test; a
// healthy port's is empty).
func (d Delta) Counts() []Count {
	if len(d.Values) == 0 {
		return nil
	}
	out := make([]Count, 0, len(d.Values))
	for _, v := range d.Values {
		if i := knownIndex(v.Def); i >= 0 {
			out = append(out, Count{Index: uint8(i), N: v.N})
		}
	}
	return out
}

// DeltaOf restores a delta from its counts, in Known's order; an index
// Known does not have (a newer peer's table) is an error naming it.
func DeltaOf(device string, port int, cs []Count) (Delta, error) {
	d := Delta{Device: device, Port: port}
	sum := make([]uint64, len(Known))
	for _, c := range cs {
		if int(c.Index) >= len(Known) {
			return d, fmt.Errorf("counters: index %d: this build knows %d counters", c.Index, len(Known))
		}
		sum[c.Index] += c.N
	}
	for i, n := range sum {
		if n > 0 {
			d.Values = append(d.Values, Value{Def: Known[i], N: n})
		}
	}
	return d, nil
}

// AddCounts merges b into a (both in any order), summing equal indices.
func AddCounts(a, b []Count) []Count {
	for _, c := range b {
		found := false
		for i := range a {
			if a[i].Index == c.Index {
				a[i].N += c.N
				found = true
				break
			}
		}
		if !found {
			a = append(a, c)
		}
	}
	return a
}

func knownIndex(d Def) int {
	for i, k := range Known {
		if k.Name == d.Name && k.Dir == d.Dir {
			return i
		}
	}
	return -1
}
