package member

import (
	"errors"
	"strings"
	"testing"
)

func TestMetaRoundTrip(t *testing.T) {
	m := Meta{Role: RoleWorker, APIAddr: "[fd00:1234:5678:9abc::42]:65535", Generation: 1<<64 - 1, Ports: 8, Provider: "verbs"}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxMeta {
		t.Fatalf("%d bytes", len(b))
	}
	t.Logf("8-HCA worker meta: %d bytes of %d", len(b), MaxMeta)
	got, err := Decode(b)
	if err != nil || got != m {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestMetaRejects(t *testing.T) {
	if _, err := (Meta{Role: RoleWorker, APIAddr: strings.Repeat("x", 600)}).Encode(); err == nil {
		t.Fatal("oversized meta encoded")
	}
	if _, err := Decode([]byte{9, '{', '}'}); !errors.Is(err, ErrMetaVersion) {
		t.Fatalf("want version error, got %v", err)
	}
	for _, b := range [][]byte{nil, {1}, {1, '{'}, []byte("\x01{\"r\":\"spy\"}")} {
		if _, err := Decode(b); err == nil {
			t.Errorf("decoded %q", b)
		}
	}
}

func FuzzDecode(f *testing.F) {
	b, _ := Meta{Role: RoleCoordinator, APIAddr: "127.0.0.1:1"}.Encode()
	f.Add(b)
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Decode(in)
		if err == nil {
			if _, err := m.Encode(); err != nil && len(in) <= MaxMeta {
				t.Fatalf("decoded meta does not re-encode: %v", err)
			}
		}
	})
}
