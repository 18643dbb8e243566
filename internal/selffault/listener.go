package selffault

import "net"

// Listener records the resource failures of l's Accept. http.Server logs
// and retries them, so without this a server out of descriptors looks to
// its clients like a hung peer — a fabric fault.
func Listener(l net.Listener, op string) net.Listener { return &listener{Listener: l, op: op} }

type listener struct {
	net.Listener
	op string
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		Note(l.op, err)
	}
	return c, err
}
