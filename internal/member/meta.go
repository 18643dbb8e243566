// Package member is the typed gossip metadata every rdmamesh process puts in
// its memberlist node meta, and the memberlist configuration both roles share.
package member

import (
	"encoding/json"
	"errors"
	"fmt"
)

// metaVersion is the first byte of every meta blob; a reader that sees
// another version ignores the node rather than misreading it.
const metaVersion byte = 1

// MaxMeta is memberlist's MetaMaxSize: larger meta makes memberlist panic.
const MaxMeta = 512

// Roles.
const (
	RoleWorker      = "worker"
	RoleCoordinator = "coordinator"
)

// Meta is the small, fixed-size header gossiped with membership. The full
// inventory is fetched from the worker API when Generation changes.
type Meta struct {
	Role       string `json:"r"`
	APIAddr    string `json:"a"`
	Generation uint64 `json:"g"`
	Ports      int    `json:"p,omitempty"`  // usable HCA ports, for a quick view
	Provider   string `json:"f,omitempty"`  // verbs | sim
	RaftAddr   string `json:"ra,omitempty"` // coordinators: raft transport address
}

// Encode returns the versioned blob, refusing anything over the cap.
func (m Meta) Encode() ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	out := append([]byte{metaVersion}, body...)
	if len(out) > MaxMeta {
		return nil, fmt.Errorf("gossip meta is %d bytes, over memberlist's %d-byte cap", len(out), MaxMeta)
	}
	return out, nil
}

// ErrMetaVersion marks meta from an incompatible rdmamesh version.
var ErrMetaVersion = errors.New("gossip meta from an incompatible rdmamesh version")

// Decode parses a blob written by Encode.
func Decode(b []byte) (Meta, error) {
	var m Meta
	if len(b) == 0 {
		return m, errors.New("empty gossip meta")
	}
	if b[0] != metaVersion {
		return m, fmt.Errorf("%w: version %d, want %d", ErrMetaVersion, b[0], metaVersion)
	}
	if err := json.Unmarshal(b[1:], &m); err != nil {
		return m, fmt.Errorf("gossip meta: %w", err)
	}
	if m.Role != RoleWorker && m.Role != RoleCoordinator {
		return m, fmt.Errorf("gossip meta: unknown role %q", m.Role)
	}
	return m, nil
}
