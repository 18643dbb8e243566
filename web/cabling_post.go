package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// SwitchCablingBackend judges the cables with the switches' own
// neighbour tables given by the caller; optional, as CablingBackend.
type SwitchCablingBackend interface {
	// CablingWithSwitches is Cabling with switches as the tables; the
	// report is the caller's alone (not kept for GET).
	CablingWithSwitches(sweep string, switches []cabling.SwitchPort) (*cabling.Report, api.CablingSource, bool)
}

// CablingRequest is POST /api/v1/cabling's body: every switch's
// neighbour table, one entry a line of one switch's table.
type CablingRequest struct {
	Switches []cabling.SwitchPort `json:"switches"`
}

// maxCablingBody bounds the tables: 64 ports x 8,192 switches at about
// 250 bytes an entry fits, a runaway client does not.
const maxCablingBody = 128 << 20

// postCabling is POST /api/v1/cabling: GET's report (same ?format=,
// ?sweep=, ?download=) judged with the switches' tables in the body, so
// a cable between switches on the wrong port, or gone, is found. The
// bearer token is wanted as for every write.
func (s *Server) postCabling(c *gin.Context) {
	cb, ok := s.b.(SwitchCablingBackend)
	if !ok {
		abortError(c, http.StatusNotFound, "this coordinator does not judge cabling with switch tables", "")
		return
	}
	var req CablingRequest
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, maxCablingBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			abortError(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("the switch tables exceed %d MiB, more than 8,192 switches of 64 ports send: check what the files hold", maxCablingBody>>20), "switches")
			return
		}
		s.reply(c, badField("switches", `the body is not {"switches": [{"switch", "port", "neighbor": {...}}]}: `+err.Error()))
		return
	}
	if err := checkSwitchPorts(req.Switches); err != nil {
		s.reply(c, err)
		return
	}
	s.answerCabling(c, func(sweep string) (*cabling.Report, api.CablingSource, bool) {
		return cb.CablingWithSwitches(sweep, req.Switches)
	})
}

// checkSwitchPorts refuses an entry that cannot be placed: without its
// switch or its port it is nobody's, and without any neighbour string
// it says nothing.
func checkSwitchPorts(sws []cabling.SwitchPort) error {
	if len(sws) == 0 {
		return badField("switches", "no switch table: send at least one entry, or GET /api/v1/cabling for the report without tables")
	}
	for i, sp := range sws {
		nb := sp.Neighbor
		switch {
		case sp.Switch == "":
			return badField(fmt.Sprintf("switches[%d].switch", i), "name the switch whose table this entry is")
		case sp.Port == "":
			return badField(fmt.Sprintf("switches[%d].port", i), "name the switch's own port the neighbour was heard on")
		case nb.SystemName == "" && nb.PortID == "" && nb.ChassisID == "" && nb.PortDescription == "":
			return badField(fmt.Sprintf("switches[%d].neighbor", i), "give the neighbour's system_name, port_id or chassis_id")
		}
	}
	return nil
}
