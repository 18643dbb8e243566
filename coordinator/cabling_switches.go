package coordinator

import (
	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// CablingWithSwitches is Cabling with switches as the switches' own
// neighbour tables, which an operator collected (lldpcli on each switch)
// and sent with the request: they judge the cables between switches by
// port, where traced paths name only the switches. The report is not
// kept: the tables are the caller's, and the next request may bring
// others. ok is false when sweep names no sweep.
func (c *Coordinator) CablingWithSwitches(sweep string, switches []cabling.SwitchPort) (*cabling.Report, api.CablingSource, bool) {
	in, ok := c.cablingInputs(sweep)
	if !ok {
		return nil, api.CablingSource{}, false
	}
	rep, src := in.judge(sweep, switches)
	return rep, src, true
}
