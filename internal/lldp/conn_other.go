//go:build !linux

package lldp

import (
	"context"
	"errors"
	"fmt"
)

// Conn reads LLDP frames on Linux only (AF_PACKET); elsewhere Open says so
// and LLDPD is the way to a neighbour.
type Conn struct{ Interface string }

var errNoPacketSocket = errors.New("reading LLDP frames needs Linux (AF_PACKET); ask lldpd instead")

// Open explains that frames cannot be read on this system.
func Open(ifname string) (*Conn, error) {
	return nil, fmt.Errorf("listen for LLDP on %s: %w", ifname, errNoPacketSocket)
}

// Read is never reached: Open returns no Conn here.
func (c *Conn) Read(context.Context) (Neighbor, error) { return Neighbor{}, errNoPacketSocket }

// Close has nothing to close.
func (c *Conn) Close() error { return nil }
