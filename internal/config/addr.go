package config

import (
	"fmt"
	"net"
	"strconv"
)

// checkHostPort accepts host:port with a port in range; an empty host means
// all interfaces and is allowed only where we listen, not where others dial.
func checkHostPort(addr string, needHost bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port (e.g. 10.0.0.5:7946): %v", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%q: port %q must be a number 0..65535", addr, port)
	}
	if needHost && host == "" {
		return fmt.Errorf("%q needs a host others can reach", addr)
	}
	return nil
}
