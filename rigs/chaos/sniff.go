package chaos

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// raftSender reads the first RPC a raft peer sends on a new connection and
// returns who sent it. hashicorp/raft's TCP transport writes one type byte,
// then the request as a msgpack map that includes the RPCHeader fields ID
// (the sender's server ID) and Addr (its advertised address); a connection
// is only ever used by the peer that dialled it. The codec writes keys in
// sorted order, so Addr usually comes first; byAddr maps an advertised
// address to a name, and an ID found first is taken as is.
func raftSender(r *bufio.Reader, byAddr func(string) (string, bool)) (string, error) {
	if _, err := r.ReadByte(); err != nil { // rpc type
		return "", err
	}
	n, err := mapLen(r)
	if err != nil {
		return "", fmt.Errorf("raft RPC header: %w", err)
	}
	for range n {
		key, err := readStr(r)
		if err != nil {
			return "", fmt.Errorf("raft RPC header: map key: %w", err)
		}
		switch key {
		case "ID":
			id, err := readStr(r)
			if err == nil && id == "" {
				err = errors.New("empty ID")
			}
			if err != nil {
				return "", fmt.Errorf("raft RPC header: ID: %w", err)
			}
			return id, nil
		case "Addr":
			addr, err := readStr(r)
			if err != nil {
				return "", fmt.Errorf("raft RPC header: Addr: %w", err)
			}
			if name, ok := byAddr(addr); ok {
				return name, nil
			}
		default:
			if err := skipValue(r, 0); err != nil {
				return "", fmt.Errorf("raft RPC header: value of %q: %w", key, err)
			}
		}
	}
	return "", errors.New("raft RPC header: neither ID nor a known Addr in the request")
}

// maxLen bounds any single length the stream may claim; log entries in an
// AppendEntries can be large, a header field cannot.
const maxLen = 64 << 20

func mapLen(r *bufio.Reader) (int, error) {
	b, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	switch {
	case b&0xf0 == 0x80:
		return int(b & 0x0f), nil
	case b == 0xde:
		return readLen(r, 2)
	case b == 0xdf:
		return readLen(r, 4)
	}
	return 0, fmt.Errorf("want a map, got type byte %#x", b)
}

func readLen(r *bufio.Reader, size int) (int, error) {
	var buf [4]byte
	if _, err := io.ReadFull(r, buf[:size]); err != nil {
		return 0, err
	}
	n := 0
	for _, c := range buf[:size] {
		n = n<<8 | int(c)
	}
	if n > maxLen {
		return 0, fmt.Errorf("length %d is past the %d-byte limit", n, maxLen)
	}
	return n, nil
}

// strLen returns the length of a str or bin value whose type byte is b
// (raft encodes []byte as either, depending on the codec's settings).
func strLen(r *bufio.Reader, b byte) (int, bool, error) {
	switch {
	case b&0xe0 == 0xa0:
		return int(b & 0x1f), true, nil
	case b == 0xd9 || b == 0xc4:
		n, err := readLen(r, 1)
		return n, true, err
	case b == 0xda || b == 0xc5:
		n, err := readLen(r, 2)
		return n, true, err
	case b == 0xdb || b == 0xc6:
		n, err := readLen(r, 4)
		return n, true, err
	}
	return 0, false, nil
}

func readStr(r *bufio.Reader) (string, error) {
	b, err := r.ReadByte()
	if err != nil {
		return "", err
	}
	if b == 0xc0 {
		return "", nil // a nil []byte
	}
	n, ok, err := strLen(r, b)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("want a string, got type byte %#x", b)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", err
	}
	return string(buf), nil
}

// skipValue skips one msgpack value of any type.
func skipValue(r *bufio.Reader, depth int) error {
	if depth > 32 {
		return errors.New("nesting too deep")
	}
	b, err := r.ReadByte()
	if err != nil {
		return err
	}
	if n, ok, err := strLen(r, b); ok || err != nil {
		if err != nil {
			return err
		}
		_, err = r.Discard(n)
		return err
	}
	fixed := map[byte]int{0xcc: 1, 0xcd: 2, 0xce: 4, 0xcf: 8, 0xd0: 1, 0xd1: 2, 0xd2: 4, 0xd3: 8, 0xca: 4, 0xcb: 8,
		0xd4: 2, 0xd5: 3, 0xd6: 5, 0xd7: 9, 0xd8: 17} // fixext: type byte + data
	var items int
	switch {
	case b <= 0x7f, b >= 0xe0, b == 0xc0, b == 0xc2, b == 0xc3:
		return nil
	case fixed[b] > 0:
		_, err := r.Discard(fixed[b])
		return err
	case b == 0xc7 || b == 0xc8 || b == 0xc9: // ext 8/16/32: length, type, data
		n, err := readLen(r, map[byte]int{0xc7: 1, 0xc8: 2, 0xc9: 4}[b])
		if err != nil {
			return err
		}
		_, err = r.Discard(n + 1)
		return err
	case b&0xf0 == 0x90:
		items = int(b & 0x0f)
	case b == 0xdc:
		items, err = readLen(r, 2)
	case b == 0xdd:
		items, err = readLen(r, 4)
	case b&0xf0 == 0x80:
		items = 2 * int(b&0x0f)
	case b == 0xde:
		items, err = readLen(r, 2)
		items *= 2
	case b == 0xdf:
		items, err = readLen(r, 4)
		items *= 2
	default:
		return fmt.Errorf("unknown type byte %#x", b)
	}
	if err != nil {
		return err
	}
	for range items {
		if err := skipValue(r, depth+1); err != nil {
			return err
		}
	}
	return nil
}
