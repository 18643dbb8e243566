package metrics

// Coordinator metrics. "Live" ones come from membership and raft at scrape
// time; "current sweep" ones from the newest sweep, running or not; "result"
// ones from the newest sweep that finished (state done), so a sweep in
// progress never makes healthy nodes look untested.
var (
	// Live: membership and raft.
	defMembers = newDef(Spec{Name: "rdmamesh_members", Type: typeGauge, Role: "coordinator",
		Labels: []string{"role", "state"}, Series: "8 (2 roles x 4 states)",
		Help: "Gossip members this coordinator knows, by role (worker, coordinator) and state (alive, suspect, dead, left)."})
	defNodeAlive = newDef(Spec{Name: "rdmamesh_node_alive", Type: typeGauge, Role: "coordinator",
		Labels: []string{"node", "role"}, Series: "one per member",
		Help: "1 when the member's gossip state is alive, 0 when suspect, dead or left."})
	defNodeFailedChecks = newDef(Spec{Name: "rdmamesh_node_failed_checks", Type: typeGauge, Role: "coordinator",
		Labels: []string{"node"}, Series: "one per worker with an inventory",
		Help: "Host preflight checks failing on the worker (memlock, kernel modules, netns...); see `rdmamesh doctor` on that node."})
	defHCAUsable = newDef(Spec{Name: "rdmamesh_hca_port_usable", Type: typeGauge, Role: "coordinator",
		Labels: []string{"node", "device", "rail"}, Series: "one per HCA port (nodes x rails)",
		Help: "1 when the worker's discovery marks the port usable for tests, 0 when not (port down, no GID, failed check)."})
	defRaftState = newDef(Spec{Name: "rdmamesh_raft_state", Type: typeGauge, Role: "coordinator",
		Labels: []string{"state"}, Series: "4 (leader, follower, candidate, shutdown)",
		Help: "1 for this replica's current raft state, 0 for the others."})
	defLeaderChanges = newDef(Spec{Name: "rdmamesh_raft_leader_changes_total", Type: typeCounter, Role: "coordinator",
		Series: "1",
		Help:   "Leader changes this replica has observed since it started; a fast rise means an unstable control plane."})
	defSweeps = newDef(Spec{Name: "rdmamesh_sweeps", Type: typeGauge, Role: "coordinator",
		Labels: []string{"state"}, Series: "3 (running, done, failed)",
		Help: "Sweeps kept in the raft state, by state (old sweeps are dropped past the retention limit)."})

	// Current sweep: the newest one.
	defSweepInfo = newDef(Spec{Name: "rdmamesh_sweep_info", Type: typeGauge, Role: "coordinator",
		Labels: []string{"sweep_id", "mode", "state"}, Series: "1 (the id changes with every sweep)",
		Help: "Always 1; identifies the newest sweep, its mode (quick, full) and state (running, done, failed)."})
	defSweepRunning = newDef(Spec{Name: "rdmamesh_sweep_running", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "1 while the newest sweep is running."})
	defSweepNodes = newDef(Spec{Name: "rdmamesh_sweep_nodes", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "Nodes planned in the newest sweep."})
	defSweepRounds = newDef(Spec{Name: "rdmamesh_sweep_rounds", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "Rounds planned in the newest sweep."})
	defSweepRoundsDone = newDef(Spec{Name: "rdmamesh_sweep_rounds_done", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "Rounds of the newest sweep committed to raft."})
	defSweepCells = newDef(Spec{Name: "rdmamesh_sweep_cells", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "Directional cells (src, dst, rail) planned in the newest sweep."})
	defSweepCellsDone = newDef(Spec{Name: "rdmamesh_sweep_cells_done", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "Cells of the newest sweep with a result; progress = cells_done / cells."})
	defSweepStart = newDef(Spec{Name: "rdmamesh_sweep_start_timestamp_seconds", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "Unix time the newest sweep started."})
	defSweepDuration = newDef(Spec{Name: "rdmamesh_sweep_duration_seconds", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "Wall time of the newest sweep: so far while it runs, in total once it ended."})

	// Result: the newest finished sweep.
	defResultInfo = newDef(Spec{Name: "rdmamesh_result_info", Type: typeGauge, Role: "coordinator",
		Labels: []string{"sweep_id", "mode"}, Series: "1 (the id changes with every sweep)",
		Help: "Always 1; the finished sweep every result metric (fabric, cells, node, hca cells, rail, pair, suspect) describes."})
	defResultEnd = newDef(Spec{Name: "rdmamesh_result_end_timestamp_seconds", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "Unix time the result sweep finished; alert when it grows old."})
	defResultDuration = newDef(Spec{Name: "rdmamesh_result_duration_seconds", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "Wall time the result sweep took from start to finish."})
	defFabricHealthy = newDef(Spec{Name: "rdmamesh_fabric_healthy", Type: typeGauge, Role: "coordinator",
		Series: "1", Help: "1 when every cell of the result sweep passed (the gate's exit 0), else 0."})
	defCells = newDef(Spec{Name: "rdmamesh_cells", Type: typeGauge, Role: "coordinator",
		Labels: []string{"verdict"}, Series: "5 (ok, failed, slow-latency, low-bandwidth, untested)",
		Help: "Cells of the result sweep by verdict."})
	defFailedCells = newDef(Spec{Name: "rdmamesh_failed_cells", Type: typeGauge, Role: "coordinator",
		Labels: []string{"class"}, Series: "10 (one per failure class)",
		Help: "Failed cells of the result sweep by failure class (port-down, retry-exceeded, no-netdev, invalid-gid, resource...)."})
	defSuspects = newDef(Spec{Name: "rdmamesh_suspects", Type: typeGauge, Role: "coordinator",
		Labels: []string{"kind"}, Series: "4 (hca, node, rail, pair)",
		Help: "Components the result sweep blames, by kind."})
	defSuspect = newDef(Spec{Name: "rdmamesh_suspect_bad_cells", Type: typeGauge, Role: "coordinator",
		Labels: []string{"kind", "node", "device", "rail", "peer", "verdict"}, Series: "at most K (TopSuspects, default 20)",
		Help: "Bad cells implicating each of the K most implicated suspects; rail is \"all\" for a node suspect."})
	defNodeCells = newDef(Spec{Name: "rdmamesh_node_cells", Type: typeGauge, Role: "coordinator",
		Labels: []string{"node"}, Series: "one per node in the result sweep",
		Help: "Cells of the result sweep where the node is initiator or target."})
	defNodeBad = newDef(Spec{Name: "rdmamesh_node_bad_cells", Type: typeGauge, Role: "coordinator",
		Labels: []string{"node"}, Series: "one per node in the result sweep",
		Help: "Of those, cells that failed, were slow or had low bandwidth."})
	defNodeHealthy = newDef(Spec{Name: "rdmamesh_node_healthy", Type: typeGauge, Role: "coordinator",
		Labels: []string{"node"}, Series: "one per node in the result sweep",
		Help: "1 when every cell touching the node passed, 0 when any was bad or untested."})
	defNodeLatency = newDef(Spec{Name: "rdmamesh_node_latency_p50_seconds", Type: typeGauge, Role: "coordinator",
		Labels: []string{"node"}, Series: "one per node with a measured cell",
		Help: "Median of the p50 one-way latencies of the node's measured cells."})
	defNodeBandwidth = newDef(Spec{Name: "rdmamesh_node_bandwidth_min_bytes_per_second", Type: typeGauge, Role: "coordinator",
		Labels: []string{"node"}, Series: "one per node with a measured bandwidth",
		Help: "Lowest bandwidth among the node's cells (x8 for bit/s)."})
	defHCACells = newDef(Spec{Name: "rdmamesh_hca_cells", Type: typeGauge, Role: "coordinator",
		Labels: []string{"node", "device", "rail"}, Series: "one per HCA in the result sweep (nodes x rails)",
		Help: "Cells of the result sweep on this HCA, as initiator or target."})
	defHCABad = newDef(Spec{Name: "rdmamesh_hca_bad_cells", Type: typeGauge, Role: "coordinator",
		Labels: []string{"node", "device", "rail"}, Series: "one per HCA in the result sweep (nodes x rails)",
		Help: "Of those, cells that failed, were slow or had low bandwidth."})
	defRailCells = newDef(Spec{Name: "rdmamesh_rail_cells", Type: typeGauge, Role: "coordinator",
		Labels: []string{"rail"}, Series: "one per rail", Help: "Cells of the result sweep on the rail."})
	defRailBad = newDef(Spec{Name: "rdmamesh_rail_bad_cells", Type: typeGauge, Role: "coordinator",
		Labels: []string{"rail"}, Series: "one per rail", Help: "Of those, cells that failed, were slow or had low bandwidth."})
	defRailLatency = newDef(Spec{Name: "rdmamesh_rail_latency_p50_seconds", Type: typeGauge, Role: "coordinator",
		Labels: []string{"rail"}, Series: "one per rail", Help: "Median of the rail's cell p50 one-way latencies."})
	defRailBandwidth = newDef(Spec{Name: "rdmamesh_rail_bandwidth_min_bytes_per_second", Type: typeGauge, Role: "coordinator",
		Labels: []string{"rail"}, Series: "one per rail", Help: "Lowest bandwidth measured on the rail."})
	defPairLatency = newDef(Spec{Name: "rdmamesh_pair_latency_p50_seconds", Type: typeGauge, Role: "coordinator",
		Labels: []string{"src", "dst", "rail"}, Series: "at most K (WorstPairs, default 10)",
		Help: "p50 one-way latency of the K directional cells with the highest p50."})
	defPairLatencyP99 = newDef(Spec{Name: "rdmamesh_pair_latency_p99_seconds", Type: typeGauge, Role: "coordinator",
		Labels: []string{"src", "dst", "rail"}, Series: "at most K (the same cells as the p50)",
		Help: "p99 one-way latency of those same K cells."})
	defPairBandwidth = newDef(Spec{Name: "rdmamesh_pair_bandwidth_bytes_per_second", Type: typeGauge, Role: "coordinator",
		Labels: []string{"src", "dst", "rail"}, Series: "at most K (WorstPairs, default 10)",
		Help: "Bandwidth of the K directional cells with the lowest bandwidth (x8 for bit/s)."})

	coordDefs = []*def{defMembers, defNodeAlive, defNodeFailedChecks, defHCAUsable, defRaftState, defLeaderChanges,
		defSweeps, defSweepInfo, defSweepRunning, defSweepNodes, defSweepRounds, defSweepRoundsDone, defSweepCells,
		defSweepCellsDone, defSweepStart, defSweepDuration,
		defResultInfo, defResultEnd, defResultDuration, defFabricHealthy, defCells, defFailedCells, defSuspects,
		defSuspect, defNodeCells, defNodeBad, defNodeHealthy, defNodeLatency, defNodeBandwidth, defHCACells,
		defHCABad, defRailCells, defRailBad, defRailLatency, defRailBandwidth, defPairLatency, defPairLatencyP99,
		defPairBandwidth}
)
