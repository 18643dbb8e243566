package store

import (
	"slices"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// keptRounds holds the round entries this replica encoded for its own
// raft.Apply (EncodeOwnRound), as their encoder had them. hashicorp/raft
// hands the leader's FSM the very slice given to Apply, so applyRound can
// know its own entry by the identity of the bytes and skip inflating and
// decoding them; any other copy of the same bytes (a follower's, a replay
// after restart) is not found and decodes as usual.
//
// Entries whose apply never comes (leadership lost, a proposal that timed
// out) are dropped oldest first, so the table stays a few rounds' codes.
type keptRounds struct {
	mu   sync.Mutex
	ents []keptRound // oldest first
}

// maxKept bounds the table: the committer encodes a round while the one
// before it is applied, so one or two entries are the rule.
const maxKept = 4

type keptRound struct {
	// b is the entry's payload as applyRound receives it. Holding it keeps
	// its address from being reused by another allocation while it is
	// registered, so address and length identify it.
	b     []byte
	codes *wire.RoundCodes
}

func (k *keptRounds) add(b []byte, rc *wire.RoundCodes) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.ents) == maxKept {
		k.ents[0].codes.Release()
		k.ents = slices.Delete(k.ents, 0, 1)
	}
	k.ents = append(k.ents, keptRound{b: b, codes: rc})
}

// take unregisters b and returns its codes; nil when b is not a kept
// entry. The caller releases the codes.
func (k *keptRounds) take(b []byte) *wire.RoundCodes {
	if len(b) == 0 {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, e := range k.ents {
		if len(e.b) == len(b) && &e.b[0] == &b[0] {
			k.ents = slices.Delete(k.ents, i, i+1)
			return e.codes
		}
	}
	return nil
}

// len is how many entries are registered.
func (k *keptRounds) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.ents)
}
