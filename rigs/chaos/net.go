package chaos

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Net is the raft network between the coordinators, in userspace. Each
// coordinator advertises (--raft-advertise, and in every --peer list) an
// address that a proxy here listens on; the proxy forwards to the
// coordinator's real --raft-bind. A proxy learns which coordinator dialled
// it from the first RPC header (raftSender), so Cut can refuse and sever
// exactly the links between the two sides of a partition, in both
// directions, while gossip and HTTP stay up: a partition of the consensus
// links, not a paused process.
type Net struct {
	mu       sync.Mutex
	side     map[string]bool // true: cut off from the rest
	proxies  map[string]*proxy
	links    map[*link]struct{}
	refused  int
	severed  int
	sniffErr error
	closed   bool
}

// nameAt maps an advertised raft address (a proxy's) to its coordinator.
func (n *Net) nameAt(addr string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for name, p := range n.proxies {
		if p.ln.Addr().String() == addr {
			return name, true
		}
	}
	return "", false
}

type proxy struct {
	n    *Net
	to   string // coordinator behind this address
	ln   net.Listener
	mu   sync.Mutex
	bind string // where the coordinator listens now; it changes on restart
}

type link struct {
	from, to string
	a, b     net.Conn
}

func newNet() *Net {
	return &Net{side: map[string]bool{}, proxies: map[string]*proxy{}, links: map[*link]struct{}{}}
}

// Listen starts the proxy for coordinator name on addr.
func (n *Net) Listen(name, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	p := &proxy{n: n, to: name, ln: ln}
	n.mu.Lock()
	n.proxies[name] = p
	n.mu.Unlock()
	go p.accept()
	return nil
}

// Route points name's proxy at the coordinator's current raft bind address.
func (n *Net) Route(name, bind string) {
	n.mu.Lock()
	p := n.proxies[name]
	n.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		p.bind = bind
		p.mu.Unlock()
	}
}

// Cut separates names from everyone else: links across the cut are closed
// now and refused from then on. It returns how many links it severed.
func (n *Net) Cut(names ...string) int {
	n.mu.Lock()
	for _, name := range names {
		n.side[name] = true
	}
	var doomed []*link
	for l := range n.links {
		if n.side[l.from] != n.side[l.to] {
			doomed = append(doomed, l)
			delete(n.links, l)
		}
	}
	n.severed += len(doomed)
	n.mu.Unlock()
	for _, l := range doomed {
		l.a.Close()
		l.b.Close()
	}
	return len(doomed)
}

// Heal ends every cut.
func (n *Net) Heal() {
	n.mu.Lock()
	n.side = map[string]bool{}
	n.mu.Unlock()
}

// Stats are the partition's figures: connections refused across the cut,
// links severed by it, and the last header the proxies could not read
// (non-nil means a partition cannot be trusted).
func (n *Net) Stats() (refused, severed int, sniffErr error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.refused, n.severed, n.sniffErr
}

// Close stops every proxy and link.
func (n *Net) Close() {
	n.mu.Lock()
	n.closed = true
	ps := n.proxies
	ls := n.links
	n.links = map[*link]struct{}{}
	n.mu.Unlock()
	for _, p := range ps {
		p.ln.Close()
	}
	for l := range ls {
		l.a.Close()
		l.b.Close()
	}
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		go p.serve(c)
	}
}

// recorder keeps every byte read through it, so the bytes consumed to find
// the sender can be replayed to the coordinator unchanged.
type recorder struct {
	r   io.Reader
	buf bytes.Buffer
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.buf.Write(p[:n])
	return n, err
}

func (p *proxy) serve(c net.Conn) {
	rec := &recorder{r: c}
	// A raft peer writes its RPC right after dialling; the deadline only
	// guards against a stray client.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	from, err := raftSender(bufio.NewReader(rec), p.n.nameAt)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		if !errors.Is(err, io.EOF) {
			p.n.mu.Lock()
			p.n.sniffErr = err
			p.n.mu.Unlock()
		}
		c.Close()
		return
	}
	if p.n.crosses(from, p.to) {
		c.Close()
		return
	}
	p.mu.Lock()
	bind := p.bind
	p.mu.Unlock()
	up, err := net.DialTimeout("tcp", bind, 2*time.Second)
	if err != nil {
		c.Close() // the coordinator is down: the dialler sees a closed link
		return
	}
	if _, err := up.Write(rec.buf.Bytes()); err != nil {
		c.Close()
		up.Close()
		return
	}
	l := &link{from: from, to: p.to, a: c, b: up}
	if !p.n.add(l) {
		c.Close()
		up.Close()
		return
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(up, c); up.Close(); c.Close(); close(done) }()
	_, _ = io.Copy(c, up)
	c.Close()
	up.Close()
	<-done
	p.n.remove(l)
}

// crosses reports (and counts) a connection the current cut refuses.
func (n *Net) crosses(from, to string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.side[from] != n.side[to] {
		n.refused++
		return true
	}
	return false
}

// add registers a link unless a cut made it illegal meanwhile.
func (n *Net) add(l *link) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || n.side[l.from] != n.side[l.to] {
		return false
	}
	n.links[l] = struct{}{}
	return true
}

func (n *Net) remove(l *link) {
	n.mu.Lock()
	delete(n.links, l)
	n.mu.Unlock()
}
