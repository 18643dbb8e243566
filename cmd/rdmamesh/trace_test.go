package main

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// freeUDPPort is a UDP port of 127.0.0.1 nothing holds: the kernel's
// choice, released for the trace to bind.
func freeUDPPort(t *testing.T) string {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return strconv.Itoa(c.LocalAddr().(*net.UDPAddr).Port)
}

func TestTraceLoopback(t *testing.T) {
	port := freeUDPPort(t)
	code, out, errOut := runArgs(t, "trace", "--src", "127.0.0.1", "--dst", "127.0.0.1", "--sport", port, "--timeout", "2s")
	if code != 0 || !strings.Contains(out, "127.0.0.1:"+port+" → 127.0.0.1:4791 udp: 1 127.0.0.1") || !strings.Contains(out, "port unreachable") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestTraceBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--src", "x", "--dst", "10.0.0.2", "--sport", "49152"}, `--src "x"`},
		{[]string{"--src", "10.0.0.1", "--dst", "", "--sport", "49152"}, `--dst ""`},
		{[]string{"--src", "10.0.0.1", "--dst", "10.0.0.2"}, "--sport is empty"},
		{[]string{"--src", "10.0.0.1", "--dst", "10.0.0.2", "--sport", "49152,70000"}, `--sport "70000"`},
		{[]string{"--src", "10.0.0.1", "--dst", "fd00::2", "--sport", "49152"}, "different families"},
		{[]string{"--src", "10.0.0.1", "--dst", "10.0.0.2", "--sport", "49152", "--max-ttl", "999"}, "--max-ttl, --timeout or --pacing: pathtrace: Options.MaxTTL 999"},
	} {
		code, out, errOut := runArgs(t, append([]string{"trace"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 naming %q\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
}
