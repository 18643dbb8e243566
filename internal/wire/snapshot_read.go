package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// streamReader reads a snapshot's stream, keeping the first error.
type streamReader struct {
	r         *bufio.Reader
	err       error
	railMajor bool // versions 1 and 2: the grid is laid out rail by rail
	version   byte
}

func (r *streamReader) fail(msg string) {
	if r.err == nil {
		r.err = fmt.Errorf("snapshot: %s", msg)
	}
}

func (r *streamReader) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(r.r)
	if err != nil {
		r.err = err
	}
	return v
}

// read returns the next n bytes. Past a megabyte the buffer grows with the
// data actually read, so a corrupt length cannot reserve memory the stream
// does not hold (FuzzSnapshotPayload: six bytes asked for 100 MB).
func (r *streamReader) read(n int) []byte {
	if r.err != nil || n < 0 || n > 1<<30 {
		r.fail("bad length")
		return nil
	}
	if n <= readChunk {
		b := make([]byte, n)
		if _, err := io.ReadFull(r.r, b); err != nil {
			r.err = err
		}
		return b
	}
	var buf bytes.Buffer
	buf.Grow(readChunk)
	if _, err := io.CopyN(&buf, r.r, int64(n)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		r.err = err
		return nil
	}
	return buf.Bytes()
}

// readChunk is the largest field read into a buffer of its stated size.
const readChunk = 1 << 20

// block reads a grid block and its cells' flows and back flows, each nil
// when it has none.
func (r *streamReader) block(classes, errs int) (b *GridBlock, f, back *FlowBlock) {
	flags := r.read(1)
	if r.err != nil {
		return nil, nil, nil
	}
	b = &GridBlock{}
	copy(b.Class[:], r.read(BlockLen))
	rounds := r.read(2 * BlockLen)
	b.Samples = uint32(min(r.uv(), 1<<32-1))
	if r.err != nil {
		return nil, nil, nil
	}
	for j := range b.Round {
		b.Round[j] = binary.LittleEndian.Uint16(rounds[2*j:])
	}
	hasLat, hasBW := false, false
	for _, c := range b.Class {
		// Code 0 is "no cell": flags without a class read as class -1.
		if c != 0 && (c&ClassMask == 0 || int(c&ClassMask) > classes) {
			r.fail("cell class out of range")
		}
		hasLat = hasLat || c&FlagLat != 0
		hasBW = hasBW || c&FlagBW != 0
	}
	if flags[0]&blkSamplesX != 0 {
		raw := r.read(4 * BlockLen)
		if r.err == nil {
			b.SamplesX = new([BlockLen]uint32)
			for j := range b.SamplesX {
				b.SamplesX[j] = binary.LittleEndian.Uint32(raw[4*j:])
			}
		}
	}
	if flags[0]&blkLat != 0 {
		raw := r.read(2 * len(LatQ{}) * BlockLen)
		if r.err == nil {
			b.Lat = new([BlockLen]LatQ)
			for k := range len(LatQ{}) {
				for j := range b.Lat {
					b.Lat[j][k] = binary.LittleEndian.Uint16(raw[2*(k*BlockLen+j):])
				}
			}
		}
	}
	if flags[0]&blkBW != 0 {
		raw := r.read(14 * BlockLen)
		if r.err == nil {
			b.BW = new([BlockLen]BWQ)
			for j := range b.BW {
				e := raw[14*j:]
				b.BW[j].Bytes = int64(binary.LittleEndian.Uint64(e))
				for k := range b.BW[j].Q {
					b.BW[j].Q[k] = binary.LittleEndian.Uint16(e[8+2*k:])
				}
			}
		}
	}
	if flags[0]&blkErr != 0 {
		raw := r.read(2 * BlockLen)
		if r.err == nil {
			b.Err = new([BlockLen]uint16)
			for j := range b.Err {
				b.Err[j] = binary.LittleEndian.Uint16(raw[2*j:])
				if int(b.Err[j]) > errs {
					r.fail("cell error out of range")
				}
			}
		}
	}
	f, back = r.flows(flags[0], blkFlow), r.flows(flags[0], blkBackFlow)
	if b.Lat == nil && hasLat || b.BW == nil && hasBW {
		r.fail("grid block has figure flags but no figures")
	}
	return b, f, back
}

// flows reads a block's flows of the kind flag says, when flags has it.
func (r *streamReader) flows(flags, flag byte) *FlowBlock {
	if flags&flag == 0 {
		return nil
	}
	if r.version <= snapshotV3 {
		r.fail("flows in a snapshot of a version before flows")
	}
	raw := r.read(2 * BlockLen)
	if r.err != nil {
		return nil
	}
	f := new(FlowBlock)
	for j := range f {
		f[j] = binary.LittleEndian.Uint16(raw[2*j:])
	}
	return f
}
