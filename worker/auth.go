package worker

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// requireToken guards the worker API: with a token configured every /v1 call
// (coordinator dispatch, peer sessions, inventory) must carry it.
func (a *Agent) requireToken(next http.Handler) http.Handler {
	if a.opts.Token == "" {
		return next
	}
	want := []byte("Bearer " + a.opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		writeErr(w, http.StatusUnauthorized, &probe.Error{Class: probe.ClassInternal,
			Cause: "missing or wrong bearer token", Fix: "give every rdmamesh process the same auth.token (or auth.token_file)"})
	})
}

func (a *Agent) authorize(req *http.Request) {
	if a.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.opts.Token)
	}
}

// authorizeSession checks that the coordinator scheduled this session and
// that it is for us (403 when not); validSessionFields then checks every
// field a provider would hand to the HCA (400), all before any verbs call.
func (a *Agent) authorizeSession(req probe.SessionRequest, now time.Time) error {
	if req.Dst != a.opts.Name {
		return fmt.Errorf("session for %q sent to worker %q", req.Dst, a.opts.Name)
	}
	if req.Src == "" || req.Src != req.Initiator.Node {
		return fmt.Errorf("session src %q does not match the initiator's QP info node %q", req.Src, req.Initiator.Node)
	}
	if a.opts.Token != "" {
		if err := probe.VerifyTicket([]byte(a.opts.Token), req.Ticket, req.SweepID, req.Src, req.Dst, req.Deadline, now); err != nil {
			return err
		}
	}
	return nil
}

func (a *Agent) validSessionFields(req probe.SessionRequest) error {
	if !a.hasPort(req.Local.Device, req.Local.Port) {
		return fmt.Errorf("no HCA port %s/%d on %s", req.Local.Device, req.Local.Port, a.opts.Name)
	}
	if req.Local.GIDIndex < -1 || req.Local.GIDIndex > 0xffff {
		return fmt.Errorf("gid_index %d out of range", req.Local.GIDIndex)
	}
	return validQP(req.Initiator)
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

// hasPort looks the port up in place: a copy of the inventory per session
// was a quarter of a large sweep's allocations.
func (a *Agent) hasPort(device string, port int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.ContainsFunc(a.inv.Ports, func(p probe.Port) bool { return p.Device == device && p.Port == port })
}
