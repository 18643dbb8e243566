package member

import (
	"net"
	"strconv"

	sockaddr "github.com/hashicorp/go-sockaddr"
)

// Advertise picks the host:port others should dial for a listener: the
// explicit address when given, else the listener's, with an unspecified host
// (0.0.0.0, ::) replaced the way memberlist picks its own advertise address
// (the first private IPv4), so a worker's API address and its gossip address
// agree. Loopback is the last resort, for single-host runs.
func Advertise(explicit string, ln net.Addr) string {
	if explicit != "" {
		return explicit
	}
	tcp, ok := ln.(*net.TCPAddr)
	if !ok {
		return ln.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
		if ip, err := sockaddr.GetPrivateIP(); err == nil && ip != "" {
			host = ip
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}
