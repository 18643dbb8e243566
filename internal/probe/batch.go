package probe

import "time"

// SessionBatchRequest opens the responder halves of every rail of one task
// in one call: a task used to cost one request per rail to open and one to
// close, 16 round trips for an 8-rail pair; now it is two.
type SessionBatchRequest struct {
	Version  int           `json:"version"`
	SweepID  string        `json:"sweep_id"`
	Src      string        `json:"src"`
	Dst      string        `json:"dst"`
	Deadline time.Time     `json:"deadline"`
	Ticket   string        `json:"ticket,omitempty"`
	Params   TestParams    `json:"params"`
	Rails    []SessionRail `json:"rails"`
}

// SessionRail is one rail of a batch: the responder's endpoint and the
// initiator's QP.
type SessionRail struct {
	Rail      int      `json:"rail"`
	Local     Endpoint `json:"local"`
	Initiator QPInfo   `json:"initiator"`
}

// SessionBatchReply answers each rail of a batch, in request order: a
// session, or the classified reason this rail's responder could not open.
type SessionBatchReply struct {
	Version int               `json:"version"`
	Rails   []SessionRailOpen `json:"rails"`
}

// SessionRailOpen is one rail's answer.
type SessionRailOpen struct {
	Rail      int    `json:"rail"`
	SessionID string `json:"session_id,omitempty"`
	Responder QPInfo `json:"responder"`
	Error     *Error `json:"error,omitempty"`
}

// SessionClose ends several sessions at once.
type SessionClose struct {
	IDs []string `json:"ids"`
}
