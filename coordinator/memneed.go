package coordinator

import (
	"fmt"
	"math"
	"runtime/debug"

	"github.com/rdmamesh/rdmamesh/internal/selffault"
)

// bytesPerCell is what a kept sweep costs every replica: the FSM's grid,
// 18 bytes a directed cell from 1,024 to 4,096 nodes, and the leader's
// compact analysis, about one (docs/scale.md).
const bytesPerCell = 19

// heldShare is how much of the memory limit the kept sweeps may take: the
// rest is the running sweep's garbage between collections, the web views
// and the raft library's buffers.
const heldShare = 0.7

// memoryAdvice says whether sweeps of these cell counts (the kept ones,
// the newest first: the one starting) fit under limit, and if not what
// to change: fewer kept sweeps, or a larger limit.
func memoryAdvice(kept []int, limit uint64) (need uint64, fix string) {
	for _, n := range kept {
		need += uint64(n) * bytesPerCell
	}
	if limit == 0 || len(kept) == 0 || float64(need) <= heldShare*float64(limit) {
		return need, ""
	}
	newest := uint64(kept[0]) * bytesPerCell
	fits := int(heldShare * float64(limit) / float64(newest))
	// "auto" gives the heap this share of the container's limit.
	want := float64(need) / heldShare / selffault.AutoShare
	if fits >= 1 {
		return need, fmt.Sprintf("lower coordinator.keep_sweeps to %d (sweeps this size each hold %s), or raise the container's memory limit to about %s",
			fits, gb(float64(newest)), gb(want))
	}
	return need, fmt.Sprintf("raise the container's memory limit to about %s (or coordinator.memory_limit); one sweep this size holds %s",
		gb(want), gb(float64(newest)))
}

func gb(b float64) string { return fmt.Sprintf("%.1f GB", b/1e9) }

// memoryCheck warns when the sweeps kept after a start would crowd the
// runtime's memory limit: the collector would then run all the time, and
// the container's hard limit would end the coordinator mid-sweep. A warning,
// not a refusal: the limit is soft, and the operator knows the host.
func (c *Coordinator) memoryCheck(id string) {
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 {
		return
	}
	infos := c.fsm.Infos()
	cells := make([]int, len(infos))
	for i, s := range infos {
		cells[i] = s.Cells
	}
	if need, fix := memoryAdvice(cells, uint64(limit)); fix != "" {
		c.log.Warn("the kept sweeps will hold most of the memory limit", "sweep", id, "kept_sweeps", len(cells),
			"held_bytes", need, "memory_limit_bytes", limit, "fix", fix)
	}
}
