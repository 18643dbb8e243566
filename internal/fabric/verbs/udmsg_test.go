package verbs

import (
	"encoding/binary"
	"strings"
	"testing"
)

func TestUDMsgRoundTrip(t *testing.T) {
	m := udMsg{Kind: udKindProbe, Seq: 1<<40 + 7, Stamp: 123456789, Token: 0xfeedface, QPN: 0x123456, QKey: udQKey,
		GID: [16]byte{10: 0xff, 11: 0xff, 12: 10, 13: 78, 14: 0, 15: 11}, LID: 0x42}
	b := m.encode()
	if len(b) != udMsgLen || string(b[:4]) != "RMLP" {
		t.Fatalf("header % x", b[:8])
	}
	// The C side stamps the send time at udStampOff, big-endian: the
	// decoder must read it from there.
	binary.BigEndian.PutUint64(b[udStampOff:], 987654321)
	got, err := decodeUDMsg(b[:])
	if err != nil {
		t.Fatal(err)
	}
	m.Stamp = 987654321
	if got != m {
		t.Fatalf("decoded %+v, want %+v", got, m)
	}
}

func TestUDMsgRefusesOthers(t *testing.T) {
	good := udMsg{Kind: udKindReply}.encode()
	cases := map[string]func(b []byte) []byte{
		"short":   func(b []byte) []byte { return b[:udMsgLen-1] },
		"magic":   func(b []byte) []byte { b[0] = 'X'; return b },
		"version": func(b []byte) []byte { b[4] = 9; return b },
		"kind":    func(b []byte) []byte { b[5] = 7; return b },
	}
	for name, mangle := range cases {
		b := good
		if _, err := decodeUDMsg(mangle(b[:])); err == nil {
			t.Errorf("%s: accepted", name)
		} else if name == "version" && !strings.Contains(err.Error(), "version 9") {
			t.Errorf("version error does not say which: %v", err)
		}
	}
}
