package pathtrace

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// markerLen is a probe's payload: the trace's nonce and the probe's
// sequence number. Shorter than a RoCE BTH, so a RoCE receiver's parser
// drops it before reading any field.
const markerLen = 8

// probe sends one probe and waits for the answer that quotes it. One probe
// is outstanding at a time; an answer quoting an earlier probe (late past
// its timeout) is skipped.
func (p *udpProber) probe(ttl int, timeout time.Duration) (answer, bool, error) {
	if err := p.setTTL(ttl); err != nil {
		return answer{}, false, err
	}
	p.drain()
	p.seq++
	var marker [markerLen]byte
	binary.BigEndian.PutUint32(marker[:4], p.nonce)
	binary.BigEndian.PutUint32(marker[4:], p.seq)
	sent := time.Now()
	if err := p.send(marker[:]); err != nil {
		return answer{}, false, err
	}
	deadline := sent.Add(timeout)
	for {
		ready, err := p.wait(time.Until(deadline))
		if err != nil {
			return answer{}, false, err
		}
		if p.ctx.Err() != nil {
			return answer{}, false, context.Cause(p.ctx)
		}
		if ready {
			a, ok, err := p.read(marker[:])
			if err != nil || ok {
				a.rtt = time.Since(sent)
				return a, ok, err
			}
		}
		if !time.Now().Before(deadline) {
			return answer{}, false, nil
		}
	}
}

// wait blocks until the socket has something to read (an error-queue
// message raises POLLERR on its own), the context ends or d passes.
func (p *udpProber) wait(d time.Duration) (ready bool, err error) {
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}, {Fd: int32(p.wake.fd), Events: unix.POLLIN}}
	ts := unix.NsecToTimespec(max(d, 0).Nanoseconds())
	if _, err := unix.Ppoll(fds, &ts, nil); err != nil {
		if errors.Is(err, unix.EINTR) {
			return false, nil // the runtime's signals: the caller loops
		}
		return false, fmt.Errorf("pathtrace: wait for an answer: %w", err)
	}
	return fds[0].Revents != 0, nil
}

// read takes what the socket holds: the first error-queue message that
// quotes this probe, else a datagram from the destination.
func (p *udpProber) read(marker []byte) (answer, bool, error) {
	for {
		n, oobn, _, _, err := unix.Recvmsg(p.fd, p.buf[:], p.oob[:], unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
		if err != nil {
			break
		}
		a, ok, err := parseErr(p.buf[:n], p.oob[:oobn], marker)
		if err != nil || ok {
			return a, ok, err
		}
	}
	p.clearError()
	for {
		_, from, err := unix.Recvfrom(p.fd, p.buf[:], unix.MSG_DONTWAIT)
		if err != nil {
			return answer{}, false, nil
		}
		if addrPort(from) == p.dst {
			return answer{kind: reply, from: p.dst.Addr(), text: "udp reply"}, true, nil
		}
	}
}

// drain drops what earlier probes left: late answers and replies.
func (p *udpProber) drain() {
	for {
		if _, _, _, _, err := unix.Recvmsg(p.fd, p.buf[:], p.oob[:], unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT); err != nil {
			break
		}
	}
	p.clearError()
	for {
		if _, _, err := unix.Recvfrom(p.fd, p.buf[:], unix.MSG_DONTWAIT); err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// clearError reads (and so resets) the socket's pending error, which an
// ICMP answer sets beside its error-queue message: left set, it keeps
// poll reporting POLLERR and fails the next send.
func (p *udpProber) clearError() {
	_, _ = unix.GetsockoptInt(p.fd, unix.SOL_SOCKET, unix.SO_ERROR)
}

// waker is an eventfd that becomes readable when the trace's context ends,
// so a probe blocked in ppoll returns at once.
type waker struct {
	mu   sync.Mutex
	fd   int
	stop func() bool
}

func newWaker(ctx context.Context) (*waker, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("pathtrace: open an eventfd: %w", err)
	}
	w := &waker{fd: fd}
	w.stop = context.AfterFunc(ctx, w.wake)
	return w, nil
}

func (w *waker) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		// Only fails when the counter would overflow: it is readable then.
		_, _ = unix.Write(w.fd, one[:])
	}
}

func (w *waker) close() {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	unix.Close(w.fd)
	w.fd = -1
}
