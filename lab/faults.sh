# Fault cases on the real engine (sourced by lab.sh): each case breaks one
# thing on one VM, runs a sweep, and `labcheck expect` judges the matrix:
# the right verdict (that node's cells failed, nobody else's), the right
# suspect (the matrix's first suspect is that node) and a diagnosis naming
# the real problem (dominant class, cause and fix). Every case heals what
# it broke and waits until the worker reports the port usable again, so
# the cases are independent. The table at the end fails the lab on any miss.
#
# Sweeps here are small (LAB_FAULT_ITERS pings, LAB_FAULT_BW_ITERS 64 KiB
# writes): a fault shows in the first packets, and a dozen sweeps must fit.
FAULT_COORD="http://$LAB_NET.1:8080"
FAULT_TABLE=
FAULT_ARGS=

fault_check() { nsx "$LAB_RUN/labcheck" "$@"; }

# fault_sweep CASE [CELLS HOOK...]: run a sweep into $LAB_RUN/fault-CASE.json;
# with CELLS, run HOOK once that many cells are measured (a fault that
# strikes during the sweep).
fault_sweep() {
	local name=$1 id
	shift
	id=$(fault_check start "$FAULT_COORD" $FAULT_ARGS) || die "$name: cannot start a sweep"
	if [ $# -gt 0 ]; then
		local cells=$1
		shift
		fault_check wait "$FAULT_COORD" "$id" 300s "$cells" || die "$name: sweep did not reach $cells cells"
		log "$name: $cells cells measured, injecting: $*"
		"$@"
	fi
	fault_check wait "$FAULT_COORD" "$id" "${LAB_FAULT_SWEEP_TIMEOUT:-600s}" "$LAB_RUN/fault-$name.json" \
		|| die "$name: sweep did not finish"
}

fault_expect() {
	local name=$1
	shift
	fault_check expect "$LAB_RUN/fault-$name.json" "$name" -table "$FAULT_TABLE" "$@" || true
}

node_wait() { fault_check node "$FAULT_COORD" "$1" "$2" "${3:-120s}" >/dev/null || die "$1 did not become $2"; }

vmx() { VM_TIMEOUT=60 vm_run "$@" >/dev/null || die "command failed in $1: ${*:2}"; }

# Restart a worker with other settings (and back): the fault lives in how
# it runs, not in the fabric.
worker_restart() {
	local vm=$1
	shift
	worker_stop "$vm"
	worker_start "$vm" "$@"
}

case_port_down_before() {
	vmx vm2 "/usr/bin/ip link set eth1 down"
	node_wait vm2 unusable
	fault_sweep port-down-before
	vmx vm2 "/usr/bin/ip link set eth1 up"
	node_wait vm2 usable
	fault_expect port-down-before -node vm2 -suspect-kind hca,node -class port-down -cause 'eth1|down' -fix 'eth1|link|cable' -min-bad 6
}

case_port_down_during() {
	fault_sweep port-down-during 2 vmx vm3 "/usr/bin/ip link set eth1 down"
	vmx vm3 "/usr/bin/ip link set eth1 up"
	node_wait vm3 usable
	fault_expect port-down-during -node vm3 -class port-down,retry-exceeded -cause 'went down|DOWN|eth1' -fix 'eth1|cable'
}

case_device_removed() {
	fault_sweep device-removed-during 2 vmx vm4 "rdma link del rxe0"
	vmx vm4 "rdma link add rxe0 type rxe netdev eth1"
	node_wait vm4 usable
	fault_expect device-removed-during -node vm4 -class port-down,retry-exceeded -cause 'removed' -fix 'rdma link|ibv_devices'
}

case_mtu_netdev() {
	vmx vm2 "/usr/bin/ip link set eth1 mtu 1000"
	fault_sweep mtu-netdev
	vmx vm2 "/usr/bin/ip link set eth1 mtu $LAB_MTU"
	node_wait vm2 usable
	fault_expect mtu-netdev -node vm2 -suspect-kind hca,node -class mtu-mismatch -cause 'MTU differs.*eth1' -fix 'ip link set eth1 mtu' -min-bad 6
}

case_mtu_path() {
	# The switch port towards vm3 carries 1000-byte frames only: pings and
	# small writes reach vm3, full 1024-byte RoCE packets never do.
	nsx ip link set dtap3 mtu 1000
	fault_sweep mtu-path
	nsx ip link set dtap3 mtu "$LAB_SWITCH_MTU"
	fault_expect mtu-path -node vm3 -class mtu-mismatch -cause 'small writes passed|full-size' -fix 'MTU' -min-bad 3
}

# netem in the guest: egress on eth1, ingress through an ifb redirect.
# Bursty loss (Gilbert-Elliott: bursts of ~10 frames) makes retries run out
# the way a flapping link does, where uniform loss would only slow things.
LOSS=${LAB_LOSS:-"loss gemodel 2% 10% 100% 0%"}
loss_on() {
	vmx "$1" "modprobe sch_netem; /usr/sbin/tc qdisc add dev eth1 root netem $LOSS"
	[ "$2" = both ] && vmx "$1" "modprobe ifb numifbs=1; modprobe sch_ingress; modprobe act_mirred; modprobe cls_matchall;
		/usr/bin/ip link set ifb0 up; /usr/sbin/tc qdisc add dev eth1 handle ffff: ingress;
		/usr/sbin/tc filter add dev eth1 parent ffff: matchall action mirred egress redirect dev ifb0;
		/usr/sbin/tc qdisc add dev ifb0 root netem $LOSS"
	return 0
}
loss_off() {
	vmx "$1" "/usr/sbin/tc qdisc del dev eth1 root; /usr/sbin/tc qdisc del dev eth1 ingress 2>/dev/null; true"
}

# Loss shows as exhausted retries on the data path, and as ARP requests
# or replies lost before the QP could reach RTR (a timeout whose cause
# says the peer's IP did not answer): both name the lossy link.
case_loss_both() {
	loss_on vm4 both
	fault_sweep loss-both
	loss_off vm4
	fault_expect loss-both -node vm4 -class retry-exceeded,timeout -cause 'lost|never acknowledged' -fix 'counters|PFC|link' -min-bad 4
}

case_loss_one() {
	loss_on vm2 egress
	fault_sweep loss-one-way
	loss_off vm2
	fault_expect loss-one-way -node vm2 -class retry-exceeded,timeout -cause 'lost|never acknowledged' -fix 'counters|PFC|link' -min-bad 4
}

case_gid_linklocal() {
	worker_restart vm3 --gid index=0
	node_wait vm3 gid0
	fault_sweep gid-link-local
	worker_restart vm3
	node_wait vm3 gid1
	fault_expect gid-link-local -node vm3 -class invalid-gid,retry-exceeded,timeout -cause 'GID|RoCE|unreachable' -fix 'gid|GID' -min-bad 6
}

case_gid_missing() {
	worker_restart vm3 --gid index=7
	node_wait vm3 unusable
	fault_sweep gid-missing
	worker_restart vm3
	node_wait vm3 usable
	fault_expect gid-missing -node vm3 -suspect-kind hca,node -class invalid-gid,skipped -cause 'index 7' -fix 'gid' -min-bad 6
}

# memlock: as root the limit alone does not bite (CAP_IPC_LOCK overrides
# it), so the worker also runs without that capability, like an
# unprivileged pod. Two ways it shows: a limit below what discovery knows a
# test needs is caught before any test (the port is unusable, its cells
# skipped with the check's cause); a limit that passes that check but not
# the sweep's buffer size fails at ibv_reg_mr with ENOMEM, class resource.
# (The full path: busybox's shell would run its own, smaller setpriv.)
NOCAP="/usr/bin/setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock"

case_memlock_preflight() {
	WORKER_PREFIX="ulimit -l 64;" WORKER_WRAP="$NOCAP" worker_restart vm4
	node_wait vm4 unusable
	fault_sweep memlock-preflight
	worker_restart vm4
	node_wait vm4 usable
	fault_expect memlock-preflight -node vm4 -suspect-kind hca,node -class skipped,resource -cause 'memlock' -fix 'ulimit -l' -min-bad 6
}

case_memlock_regmr() {
	WORKER_PREFIX="ulimit -l 8192;" WORKER_WRAP="$NOCAP" worker_restart vm4
	node_wait vm4 usable
	# 12 MiB bandwidth buffers: more than the 8 MiB vm4 may pin.
	FAULT_ARGS="$FAULT_ARGS bw_size=12582912 bw_iters=1" fault_sweep memlock-reg-mr
	worker_restart vm4
	node_wait vm4 usable
	fault_expect memlock-reg-mr -node vm4 -suspect-kind hca,node -class resource -cause 'ibv_reg_mr|memlock|pin' -fix 'ulimit -l' -min-bad 6
}

case_worker_killed() {
	fault_sweep worker-killed 2 worker_stop vm2 KILL
	worker_start vm2
	node_wait vm2 usable 180s
	fault_expect worker-killed -node vm2 -class peer-lost -cause 'vm2' -fix 'vm2'
}

# Clean sweep through RDMA CM: every cell ok, and the workers' counters
# prove the responders accepted through the CM, not the exchange.
case_rdmacm_sweep() {
	local before after apis="" i
	for i in $(seq 1 "$1"); do apis="$apis $(vm_ip "$i"):7947"; done
	before=$(fault_check served rdmacm $apis)
	local id
	id=$(fault_check start "$FAULT_COORD" $FAULT_ARGS connect=rdmacm) || die "cannot start the RDMA CM sweep"
	fault_check wait "$FAULT_COORD" "$id" 600s "$LAB_RUN/sweep-rdmacm.json" || die "RDMA CM sweep did not finish"
	after=$(fault_check served rdmacm $apis)
	"$LAB_RUN/labcheck" sweep "$LAB_RUN/sweep-rdmacm.json" "$1" "$LAB_DNET" || die "RDMA CM sweep not all ok"
	[ $((after - before)) -ge $(($1 * ($1 - 1))) ] \
		|| die "RDMA CM sweep: workers served $((after - before)) RDMA CM sessions, want >= $(($1 * ($1 - 1))) (does the coordinator pass SweepRequest.connect on?)"
	log "RDMA CM sweep: all cells ok, $((after - before)) responder sessions connected through RDMA CM"
}

# faults_prepare: labcheck, an empty table and the fault sweeps' request.
faults_prepare() {
	(cd "$REPO_DIR" && go build -o "$LAB_RUN/labcheck" ./lab/labcheck) || die "building labcheck"
	FAULT_TABLE="$LAB_RUN/faults.tsv"
	: > "$FAULT_TABLE"
	FAULT_ARGS="latency_iters=${LAB_FAULT_ITERS:-100} bw_iters=${LAB_FAULT_BW_ITERS:-10} bw_size=65536 nodes=$(seq -s, -f 'vm%g' 1 4)"
}

# faults_cluster N: the coordinator with the fault cases' deadlines, short
# enough that a dead path is declared within a minute, long enough for
# emulated RDMA on a loaded host. One pair at a time: two VMs busy-polling
# per host core starve the others' gossip, and a member declared dead by
# mistake would fail cells the fault never touched.
faults_cluster() {
	cluster_up "$1" "${LAB_FAULT_TEST_TIMEOUT:-60s}" "${LAB_FAULT_PAIR_TIMEOUT:-150s}" "${LAB_FAULT_PARALLELISM:-1}" >/dev/null
}

# faults_cases CASE...: run the cases on the running cluster.
faults_cases() {
	local i
	for i in "$@"; do
		log "fault case $i"
		"case_$i"
		mark "fault $i"
	done
}

faults_table() {
	"$LAB_RUN/labcheck" table "$FAULT_TABLE" | tee "$LAB_RUN/faults.txt" || die "fault cases missed (see $LAB_RUN/faults.txt)"
}

faults_run() {
	local n=$1
	[ "$n" -ge 4 ] || die "the fault cases need 4 VMs"
	faults_prepare
	faults_cluster "$n"
	case_rdmacm_sweep 4
	mark "sweep over RDMA CM"
	faults_cases ${LAB_FAULTS:-port_down_before port_down_during device_removed mtu_netdev mtu_path loss_both loss_one gid_linklocal gid_missing memlock_preflight memlock_regmr worker_killed}
	sweep_stop
	faults_table
}
