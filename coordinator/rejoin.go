package coordinator

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

// membersFile keeps the gossip addresses of the members last seen alive.
// A restarted coordinator's memberlist knows only its seeds, and when every
// coordinator restarts at once the workers never notice (the new processes
// answer probes at the old addresses), so nobody would tell the
// coordinators about the workers until a random push/pull, if ever.
// Joining a few remembered members pulls the whole member list.
const membersFile = "members.json"

// rejoinFanout is how many remembered members to join: one live member's
// push/pull is the full state, a few cover the dead ones.
const rejoinFanout = 8

func loadMembers(dir string) []string {
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, membersFile))
	if err != nil {
		return nil
	}
	var addrs []string
	if json.Unmarshal(b, &addrs) != nil {
		return nil
	}
	rand.Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
	return addrs[:min(len(addrs), rejoinFanout)]
}

// saveMembers writes the alive members' gossip addresses when they changed
// and returns what is saved.
func (c *Coordinator) saveMembers(last []string) []string {
	if c.opts.DataDir == "" {
		return last
	}
	self := c.ml.LocalNode().Address()
	var addrs []string
	for _, n := range c.ml.Members() {
		if a := n.Address(); a != self {
			addrs = append(addrs, a)
		}
	}
	slices.Sort(addrs)
	if slices.Equal(addrs, last) {
		return last
	}
	b, _ := json.Marshal(addrs)
	tmp := filepath.Join(c.opts.DataDir, membersFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o640); err != nil {
		c.log.Warn("cannot save gossip members", "err", err)
		return last
	}
	if err := os.Rename(tmp, filepath.Join(c.opts.DataDir, membersFile)); err != nil {
		c.log.Warn("cannot save gossip members", "err", err)
		return last
	}
	return addrs
}
