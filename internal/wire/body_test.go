package wire

import (
	"strings"
	"testing"
)

// TestBodyCloseDuringRead closes a body while another goroutine reads it,
// as a transport may after RoundTrip returns (run with -race): the reader
// gets the bytes or EOF, never a buffer back in the pool.
func TestBodyCloseDuringRead(t *testing.T) {
	for range 100 {
		buf := GetBuf()
		buf.B = append(buf.B, "0123456789"...)
		body := NewBody(buf)
		done := make(chan string)
		go func() {
			var got []byte
			p := make([]byte, 3)
			for {
				n, err := body.Read(p)
				got = append(got, p[:n]...)
				if err != nil {
					done <- string(got)
					return
				}
			}
		}()
		body.Close()
		body.Close()
		if got := <-done; !strings.HasPrefix("0123456789", got) {
			t.Fatalf("read %q", got)
		}
	}
}
