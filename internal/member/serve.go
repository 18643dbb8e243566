package member

import (
	"net"
	"net/http"
)

// URL is a member's API URL for a path. TLS is all or nothing in a
// cluster, so whether this process dials with TLS says the scheme.
func URL(secure bool, addr, path string) string {
	if secure {
		return "https://" + addr + path
	}
	return "http://" + addr + path
}

// Serve serves an API on ln, over TLS when srv has a TLSConfig. ServeTLS
// rather than a TLS listener so that browsers get HTTP/2 from the UI.
func Serve(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		// ServeTLS adds HTTP/2 to the config in place, and one config is
		// shared by a process's servers (and a test cluster's processes).
		srv.TLSConfig = srv.TLSConfig.Clone()
		return srv.ServeTLS(ln, "", "")
	}
	return srv.Serve(ln)
}
