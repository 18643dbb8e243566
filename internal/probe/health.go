package probe

import "time"

// Device health states.
const (
	HealthOK       = "ok"
	HealthPortDown = "port-down" // at least one port is not ACTIVE
	HealthRemoved  = "removed"   // the device went away (unregistered, fatal error)
)

// DeviceHealth is a worker's live view of one HCA, kept by the fabric's
// event watcher (port up/down, device removal or fatal error). Tests on an
// unhealthy endpoint fail at once with ClassPortDown and this Cause.
type DeviceHealth struct {
	Device    string    `json:"device"`
	State     string    `json:"state"` // HealthOK | HealthPortDown | HealthRemoved
	Ports     int       `json:"ports,omitempty"`
	DownPorts []int     `json:"down_ports,omitempty"`
	Cause     string    `json:"cause,omitempty"`
	Fix       string    `json:"fix,omitempty"`
	Since     time.Time `json:"since,omitzero"` // when the current state began
	LastEvent string    `json:"last_event,omitempty"`
	LastAt    time.Time `json:"last_event_at,omitzero"`
	Events    uint64    `json:"events"`             // async events seen
	Reopened  int       `json:"reopened,omitempty"` // times the device came back after a removal
}

// ProbePortStats is what one always-on probe port counted besides the
// answers it hands the prober (GET /v1/health): the worker's own view of
// its probing, for an operator asking why a port's live cells look the
// way they do.
type ProbePortStats struct {
	Device    string `json:"device"`
	Port      int    `json:"port"`
	Answers   uint64 `json:"answers"`                // answers to this port's probes
	Answered  uint64 `json:"answered"`               // peers' probes it answered
	Dropped   uint64 `json:"dropped,omitempty"`      // answers lost because the prober fell behind
	Foreign   uint64 `json:"foreign,omitempty"`      // answers for an earlier port on the same QP number
	Unknown   uint64 `json:"unknown,omitempty"`      // answers from an address it never probed
	Malformed uint64 `json:"malformed,omitempty"`    // messages that are not probes of this version
	ReplyErr  uint64 `json:"reply_errors,omitempty"` // peers' probes it could not answer
	WCErr     uint64 `json:"completion_errors,omitempty"`
	Resets    uint64 `json:"qp_resets,omitempty"` // times its QP left RTS and was brought back
	// LastError is the newest failure of the port's completion channel or
	// a completion, with when it happened.
	LastError string    `json:"last_error,omitempty"`
	LastAt    time.Time `json:"last_error_at,omitzero"`
}
