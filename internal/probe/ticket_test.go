package probe

import (
	"errors"
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
