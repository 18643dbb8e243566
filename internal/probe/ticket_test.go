package probe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestTicket(t *testing.T) {
	key := []byte("s3cret")
	now := time.Unix(1000, 0)
	exp := now.Add(time.Minute)
	tk := SignTicket(key, "sw", "a", "b", exp)
	cases := []struct {
		name                 string
		key                  []byte
		ticket, sw, src, dst string
		exp, now             time.Time
		want                 error
	}{
		{"valid", key, tk, "sw", "a", "b", exp, now, nil},
		{"missing", key, "", "sw", "a", "b", exp, now, ErrTicketMissing},
		{"other key", []byte("other"), tk, "sw", "a", "b", exp, now, ErrTicketBad},
		{"swapped ends", key, tk, "sw", "b", "a", exp, now, ErrTicketBad},
		{"other sweep", key, tk, "sw2", "a", "b", exp, now, ErrTicketBad},
		{"stretched expiry", key, tk, "sw", "a", "b", exp.Add(time.Hour), now, ErrTicketBad},
		{"expired", key, tk, "sw", "a", "b", exp, exp.Add(time.Second), ErrTicketExpired},
	}
	for _, c := range cases {
		if err := VerifyTicket(c.key, c.ticket, c.sw, c.src, c.dst, c.exp, c.now); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

// oldTicket is the ticket as workers of every version verify it: HMAC-SHA256
// over the parts, each ended by a zero byte, in hex.
func oldTicket(key []byte, parts ...string) string {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// A reused signer signs each ticket as a fresh HMAC does, whatever it
// signed before (longer or shorter parts).
func TestTicketSignerSignsAsAFreshHMAC(t *testing.T) {
	key := []byte("cluster-token")
	s := NewTicketSigner(key)
	if !s.Keyed("cluster-token") || s.Keyed("other") {
		t.Fatal("Keyed does not tell the signer's key")
	}
	for i := range 200 {
		sw, src, dst := strings.Repeat("s", i%7), fmt.Sprintf("node-%0*d", i%5, i), strings.Repeat("d", 40-i%40)
		exp := time.Unix(0, int64(i)*7_919_000_013)
		want := oldTicket(key, sw, src, dst, strconv.FormatInt(exp.UnixNano(), 10))
		if got := s.Sign(sw, src, dst, exp); got != want {
			t.Fatalf("ticket %d: %s, a fresh HMAC gives %s", i, got, want)
		}
		if got := SignTicket(key, sw, src, dst, exp); got != want {
			t.Fatalf("SignTicket %d: %s, want %s", i, got, want)
		}
		var buf TicketBuf
		if got := s.SignInto(&buf, sw, src, dst, exp); got != want || string(buf[:]) != want {
			t.Fatalf("SignInto %d: %s (buffer %s), want %s", i, got, buf[:], want)
		}
	}
}

// BenchmarkTicketSigner is the coordinator's two tickets a task; set
// against BenchmarkSignTicket, a fresh HMAC each.
func BenchmarkTicketSigner(b *testing.B) {
	s := NewTicketSigner([]byte("0123456789abcdef0123456789abcdef"))
	exp := time.Now()
	var buf TicketBuf
	b.ReportAllocs()
	for b.Loop() {
		s.SignInto(&buf, "sweep-20261127-190000", "node-0001", "node-1023", exp)
	}
}

func BenchmarkSignTicket(b *testing.B) {
	key, exp := []byte("0123456789abcdef0123456789abcdef"), time.Now()
	b.ReportAllocs()
	for b.Loop() {
		oldTicket(key, "sweep-20261127-190000", "node-0001", "node-1023", strconv.FormatInt(exp.UnixNano(), 10))
	}
}
