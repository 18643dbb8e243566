package probe

import "time"

// RailPair is one rail of a pair task: which HCA port on each side.
type RailPair struct {
	Rail int      `json:"rail"`
	Src  Endpoint `json:"src"`
	Dst  Endpoint `json:"dst"`
}

// Task is what the coordinator hands an initiator worker: measure Src → Dst
// on every listed rail in parallel, and come back before Deadline.
type Task struct {
	Version  int        `json:"version"`
	SweepID  string     `json:"sweep_id"`
	Round    int        `json:"round"`
	Src      string     `json:"src"`
	Dst      string     `json:"dst"`
	DstAPI   string     `json:"dst_api"` // host:port of the target's worker API
	Rails    []RailPair `json:"rails"`
	Params   TestParams `json:"params"`
	Deadline time.Time  `json:"deadline"`
	Ticket   string     `json:"ticket,omitempty"` // SignTicket(token, SweepID, Src, Dst, Deadline)
}

// RailResult is one directional cell (Src → Dst on one rail).
type RailResult struct {
	Rail      int        `json:"rail"`
	SrcDevice string     `json:"src_device"`
	DstDevice string     `json:"dst_device"`
	Class     Class      `json:"class"`
	Error     *Error     `json:"error,omitempty"`
	Latency   *Latency   `json:"latency,omitempty"`
	Bandwidth *Bandwidth `json:"bandwidth,omitempty"`
	// ReadLatency is the RDMA READ round trip when the test asked for it
	// (TestParams.ReadIters) and the fabric can measure it.
	ReadLatency *Latency `json:"read_latency,omitempty"`
	SrcGID      int      `json:"src_gid_index"`
	DstGID      int      `json:"dst_gid_index"`
}

// TaskResult answers a Task.
type TaskResult struct {
	Version int           `json:"version"`
	SweepID string        `json:"sweep_id"`
	Round   int           `json:"round"`
	Src     string        `json:"src"`
	Dst     string        `json:"dst"`
	Rails   []RailResult  `json:"rails"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Tester is set when the worker's own resources failed while the task
	// ran (selffault): its figures, and its peers', cannot be trusted.
	Tester *Error `json:"tester,omitempty"`
}

// SessionRequest opens the responder half of a test on the target worker.
type SessionRequest struct {
	Version   int        `json:"version"`
	SweepID   string     `json:"sweep_id"`
	Src       string     `json:"src"`
	Dst       string     `json:"dst"`
	Deadline  time.Time  `json:"deadline"`
	Ticket    string     `json:"ticket,omitempty"`
	Local     Endpoint   `json:"local"` // the responder's endpoint to open
	Initiator QPInfo     `json:"initiator"`
	Params    TestParams `json:"params"`
}

// SessionReply carries the responder's QP info back.
type SessionReply struct {
	Version   int    `json:"version"`
	SessionID string `json:"session_id"`
	Responder QPInfo `json:"responder"`
}

// ErrorReply is the body of every non-2xx worker API answer, so a caller can
// keep the failure's class across the hop.
type ErrorReply struct {
	Error *Error `json:"error"`
}
