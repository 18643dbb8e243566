package matrix

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteCables writes the cable, link and switch suspects as CSV, one row
// per part a data-center technician walks to: the switch and port, what
// is on the other end, the problem, the evidence and what to do. A matrix
// without such suspects writes the header alone.
func (m *Matrix) WriteCables(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"switch", "port", "peer", "peer_port", "problem", "direction", "evidence", "confidence", "action"}); err != nil {
		return err
	}
	for i := range m.Suspects {
		s := &m.Suspects[i]
		var row []string
		switch s.Kind {
		case KindSwitch:
			row = []string{s.Switch, "", "", "", problem(s), "", evidence(s), conf(s), s.Fix}
		case KindCable, KindLink:
			if len(s.Ends) != 2 {
				continue
			}
			sw, peer := s.Ends[0], s.Ends[1]
			dir := ""
			if s.Kind == KindCable && !strings.Contains(sw, ":") {
				sw, peer = peer, sw // the switch side first
			}
			switch s.Direction {
			case "one-way":
				dir = s.Ends[0] + " -> " + s.Ends[1]
			case "egress":
				dir = "from the HCA"
			case "ingress":
				dir = "to the HCA"
			}
			swName, swPort, _ := strings.Cut(sw, ":")
			peerName, peerPort, isSw := strings.Cut(peer, ":")
			if !isSw {
				peerPort = "1" // an HCA's port
			}
			row = []string{swName, swPort, peerName, peerPort, problem(s), dir, evidence(s), conf(s), s.Fix}
		default:
			continue
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// problem says what the part does to the traffic through it.
func problem(s *Suspect) string {
	if s.Drop > 0 {
		// Measured at the link by hop loss: the figure a technician
		// compares with the ports' counters.
		return fmt.Sprintf("drops %.1f %% of the packets through it (hop loss)", 100*s.Drop)
	}
	switch s.Verdict {
	case VerdictFailed:
		if s.Bad >= s.Total {
			return "down: every test through it failed"
		}
		return "drops packets: tests through it failed (" + string(s.Class) + ")"
	case VerdictLowBandwidth:
		if s.HardFailures > 0 {
			return "drops packets: low bandwidth and some failed tests"
		}
		return "low bandwidth"
	case VerdictSlowLatency:
		return "high latency"
	}
	return string(s.Verdict)
}

func evidence(s *Suspect) string {
	return fmt.Sprintf("%d of about %d tests through it bad; %d of about %d elsewhere", s.Bad, s.Total, s.BgBad, s.BgTotal)
}

func conf(s *Suspect) string { return strconv.FormatFloat(s.Confidence, 'f', 2, 64) }
