package sweep

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewID is a sweep ID: its start time, readable and sortable, and a random
// suffix for two sweeps started in the same second.
func NewID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
