package coordinator

import (
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// Status reports this replica's raft view for GET /api/v1/status.
func (c *Coordinator) Status() api.Status {
	_, leader := c.raft.LeaderWithID()
	st := api.Status{Name: c.opts.Name, State: c.raft.State().String(), Leader: string(leader),
		LastIndex: c.raft.LastIndex(), AppliedIndex: c.raft.AppliedIndex(), LeaderChanges: c.leaderChanges.Load()}
	if f := c.raft.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			st.Voters = append(st.Voters, string(s.ID))
		}
	}
	for _, n := range c.reg.list() {
		if n.Role == "worker" && n.State == "alive" {
			st.Workers++
		}
	}
	return st
}

// RaftState is the raft role as a string, for metrics.
func (c *Coordinator) RaftState() string { return c.raft.State().String() }

// LeaderChanges counts leadership gains and losses seen by this replica.
func (c *Coordinator) LeaderChanges() uint64 { return c.leaderChanges.Load() }
