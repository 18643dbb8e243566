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
