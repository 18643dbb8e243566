# Fault cases on the real engine (sourced by lab.sh): the twelve built-in
# scenarios (lab/scenarios/*.yaml, run by scenario.sh), each breaking one
# thing on one VM; `labcheck expect` judges every sweep's matrix: the right
# verdict (that node's cells failed, nobody else's), the right suspect (the
# matrix's first suspect is that node) and a diagnosis naming the real
# problem (dominant class, cause and fix). Every scenario heals what it
# broke and waits until the workers are usable again, so they are
# independent. The table at the end fails the lab on any miss.
#
# Sweeps here are small (LAB_FAULT_ITERS pings, LAB_FAULT_BW_ITERS 64 KiB
# writes): a fault shows in the first packets, and a dozen sweeps must fit.
# Each has one confirmation pass (LAB_FAULT_RETESTS), as the gate's default
# has two: on the emulator a node's three cells can all land on a starved
# moment, and without a retest that noise excludes a healthy node.
FAULT_COORD="http://$LAB_NET.1:8080"
FAULT_TABLE=
FAULT_ARGS=
FAULT_BUILTIN="port-down-before port-down-during device-removed-before device-removed-during mtu-netdev mtu-path loss-both loss-one-way
	gid-link-local gid-missing memlock-preflight memlock-reg-mr worker-killed mtu-mix rate-limit-egress wrong-network port-flap
	worker-hung worker-unreachable"

fault_check() { nsx "$LAB_RUN/labcheck" "$@"; }

# Clean sweep through RDMA CM: every cell ok, and the workers' counters
# prove the responders accepted through the CM, not the exchange.
case_rdmacm_sweep() {
	local before after apis="" i
	for i in $(seq 1 "$1"); do apis="$apis $(vm_ip "$i"):7947"; done
	before=$(fault_check served rdmacm $apis)
	local id
	id=$(fault_check start "$FAULT_COORD" $FAULT_ARGS "nodes=$(seq -s, -f 'vm%g' 1 "$1")" connect=rdmacm) || die "cannot start the RDMA CM sweep"
	fault_check wait "$FAULT_COORD" "$id" 600s "$LAB_RUN/sweep-rdmacm.json" || die "RDMA CM sweep did not finish"
	after=$(fault_check served rdmacm $apis)
	"$LAB_RUN/labcheck" sweep "$LAB_RUN/sweep-rdmacm.json" "$1" "$LAB_DNET" || die "RDMA CM sweep not all ok"
	[ $((after - before)) -ge $(($1 * ($1 - 1))) ] \
		|| die "RDMA CM sweep: workers served $((after - before)) RDMA CM sessions, want >= $(($1 * ($1 - 1))) (does the coordinator pass SweepRequest.connect on?)"
	log "RDMA CM sweep: all cells ok, $((after - before)) responder sessions connected through RDMA CM"
}

# faults_prepare: labcheck, an empty table and the fault sweeps' sizes.
faults_prepare() {
	(cd "$REPO_DIR" && go build -o "$LAB_RUN/labcheck" ./lab/labcheck) || die "building labcheck"
	FAULT_TABLE="$LAB_RUN/faults.tsv"
	: > "$FAULT_TABLE"
	FAULT_ARGS="latency_iters=${LAB_FAULT_ITERS:-100} bw_iters=${LAB_FAULT_BW_ITERS:-10} bw_size=65536 retests=${LAB_FAULT_RETESTS:-1}"
}

# faults_cluster N: the coordinator with the fault cases' deadlines, short
# enough that a dead path is declared within a minute, long enough for
# emulated RDMA on a loaded host. One pair at a time: two VMs busy-polling
# per host core starve the others' gossip, and a member declared dead by
# mistake would fail cells the fault never touched.
faults_cluster() {
	cluster_up "$1" "${LAB_FAULT_TEST_TIMEOUT:-60s}" "${LAB_FAULT_PAIR_TIMEOUT:-150s}" "${LAB_FAULT_PARALLELISM:-1}" >/dev/null
}

faults_table() {
	"$LAB_RUN/labcheck" table "$FAULT_TABLE" | tee "$LAB_RUN/faults.txt" || die "fault cases missed (see $LAB_RUN/faults.txt)"
}

# faults_run N: the RDMA CM sweep, then the built-in scenarios
# (LAB_FAULTS="loss-both mtu-path" picks some).
faults_run() {
	local n=$1
	[ "$n" -ge 4 ] || die "the fault cases need 4 VMs"
	scenario_files ${LAB_FAULTS:-$FAULT_BUILTIN}
	faults_prepare
	faults_cluster "$n"
	case_rdmacm_sweep "$n"
	mark "sweep over RDMA CM"
	scenario_cases "${SCN_FILES[@]}"
	sweep_stop
	faults_table
}
