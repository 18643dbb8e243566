package session

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// validLocal and validQP check every field of an open that a provider
// would hand to the HCA, before any verbs call.

func validLocal(ep probe.Endpoint) error {
	if ep.GIDIndex < -1 || ep.GIDIndex > 0xffff {
		return fmt.Errorf("gid_index %d out of range", ep.GIDIndex)
	}
	return nil
}

// validQP rejects QP info that cannot come from a real HCA.
func validQP(q probe.QPInfo) error {
	switch {
	case q.QPN == 0 || q.QPN >= 1<<24:
		return fmt.Errorf("initiator qpn %#x outside 1..0xffffff", q.QPN)
	case q.PSN >= 1<<24:
		return fmt.Errorf("initiator psn %#x outside 24 bits", q.PSN)
	case !slices.Contains([]int{256, 512, 1024, 2048, 4096}, q.MTU):
		return fmt.Errorf("initiator mtu %d is not an IB MTU (256..4096)", q.MTU)
	case q.Size < 0 || q.Size > 1<<30:
		return fmt.Errorf("initiator buffer size %d out of range", q.Size)
	case q.LinkLayer != "InfiniBand" && q.LinkLayer != "Ethernet":
		return fmt.Errorf("initiator link layer %q: want InfiniBand or Ethernet", q.LinkLayer)
	case q.LinkLayer == "Ethernet" && !strings.Contains(q.GID, ":"):
		return fmt.Errorf("initiator GID %q is not an IPv6-form GID (RoCE needs one)", q.GID)
	case q.Device == "" || len(q.Device) > 64:
		return errors.New("initiator device name missing or too long")
	}
	return nil
}
