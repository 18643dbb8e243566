package probe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// A ticket is the coordinator's signature on one scheduled test: the target
// worker opens a probe session only for an initiator holding a valid ticket
// naming both ends, so nobody can make workers run RDMA sessions at will.
// The key is the cluster's shared API token.

// SignTicket signs (sweep, src, dst, expiry).
func SignTicket(key []byte, sweep, src, dst string, exp time.Time) string {
	m := hmac.New(sha256.New, key)
	for _, part := range []string{sweep, src, dst, strconv.FormatInt(exp.UnixNano(), 10)} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Ticket errors.
var (
	ErrTicketMissing = errors.New("probe session without a ticket: only sessions the coordinator scheduled are accepted")
	ErrTicketBad     = errors.New("probe session ticket does not verify: wrong token, or the request was altered")
	ErrTicketExpired = errors.New("probe session ticket expired: the pair's deadline has passed")
)

// VerifyTicket checks a ticket against the same fields at time now.
func VerifyTicket(key []byte, ticket, sweep, src, dst string, exp, now time.Time) error {
	if ticket == "" {
		return ErrTicketMissing
	}
	want := SignTicket(key, sweep, src, dst, exp)
	if !hmac.Equal([]byte(want), []byte(ticket)) {
		return ErrTicketBad
	}
	if now.After(exp) {
		return ErrTicketExpired
	}
	return nil
}
