# Fault scenarios (sourced by lab.sh): `lab.sh scenario FILE...` and the
# built-in cases of `lab.sh faults` and the smoke. A scenario file
# (lab/scenarios/*.yaml, format in lab/README.md) is checked and turned
# into a plan by `labcheck scenario`: one call of the scn_* functions below
# a line, every argument quoted. The runner sources the plan on a running
# cluster (coordinator + a worker per VM): inject, sweep, heal, wait until
# every worker is usable again, judge (`labcheck expect`, a row of the
# fault table). A step that fails stops the run; a wrong diagnosis is a
# FAIL row, and the table at the end fails the run on any.
SCN_NAME=
SCN_VMS=
SCN_ID=
SCN_T0=
SCN_SECS=

# dur_s 90s|2m|30: seconds.
dur_s() {
	case $1 in
	*m) echo $((${1%m} * 60)) ;;
	*s) echo "${1%s}" ;;
	*) echo "$1" ;;
	esac
}

scn_begin() {
	SCN_NAME=$1 SCN_VMS=$2
	log "scenario $1 ($2 VMs): $3"
}

# scn_vm PHASE VM CMD [TIMEOUT]: CMD in the VM's shell, with VM, LAB_MTU
# and LAB_SWITCH_MTU set.
scn_vm() {
	local out rc=0
	out=$(VM_TIMEOUT=$(dur_s "${4:-60s}") vm_run "$2" "VM=$2 LAB_MTU=$LAB_MTU LAB_SWITCH_MTU=$LAB_SWITCH_MTU
$3") || rc=$?
	[ $rc -eq 0 ] || die "scenario $SCN_NAME: $1 command in $2 exited $rc: $3
$out"
}

# scn_host PHASE VM CMD [TIMEOUT]: CMD on the host, inside the lab
# namespace, with TAP (the VM's data tap, its switch port on the RDMA
# network), CTAP (its control tap) and NS (the lab namespace's name; a
# routed Clos's leaf L is $NS-lL) set.
scn_host() {
	local i=${2#vm} rc=0
	timeout "$(dur_s "${4:-60s}")" ip netns exec "$LAB_NS" env VM="$2" TAP="dtap$i" CTAP="tap$i" NS="$LAB_NS" \
		LAB_MTU="$LAB_MTU" LAB_SWITCH_MTU="$LAB_SWITCH_MTU" sh -c "$3" || rc=$?
	[ $rc -eq 0 ] || die "scenario $SCN_NAME: $1 host command for $2 exited $rc: $3"
}

# scn_link PHASE LINK CMD [TIMEOUT]: CMD in the router a routed Clos link
# leaves (leaf1-spine2: leaf1's veth to spine2), with LINK, DEV (that
# veth), PEER_NS and PEER_DEV (its other end) set; the scenario needs
# LAB_CLOS.
scn_link() {
	local ns dev peer pdev rc=0
	clos_on || die "scenario $SCN_NAME: link $2 is a link of the routed Clos: run with LAB_CLOS=2x2"
	read -r ns dev peer pdev <<<"$(clos_link "$2")"
	[ -n "$dev" ] || die "scenario $SCN_NAME: the ${LAB_CLOS} Clos has no link $2"
	timeout "$(dur_s "${4:-60s}")" ip netns exec "$ns" env LINK="$2" DEV="$dev" PEER_NS="$peer" PEER_DEV="$pdev" sh -c "$3" || rc=$?
	[ $rc -eq 0 ] || die "scenario $SCN_NAME: $1 command on link $2 exited $rc: $3"
}

# scn_worker PHASE VM ACTION FLAGS PREFIX WRAP
scn_worker() {
	local vm=$2 flags=$4
	log "scenario $SCN_NAME: $1: $3 $vm's worker${flags:+ with $flags}${5:+ after '$5'}${6:+ under '$6'}"
	case $3 in
	stop) worker_stop "$vm" ;;
	kill) worker_stop "$vm" KILL ;;
	# A hung worker: its process stops answering (gossip too), nothing
	# exits; resume continues it where it stood.
	pause) VM_TIMEOUT=30 vm_run "$vm" "kill -STOP \$(cat /tmp/worker.pid)" >/dev/null || die "scenario $SCN_NAME: cannot pause $vm's worker" ;;
	resume) VM_TIMEOUT=30 vm_run "$vm" "kill -CONT \$(cat /tmp/worker.pid)" >/dev/null || die "scenario $SCN_NAME: cannot resume $vm's worker" ;;
	start) WORKER_PREFIX=$5 WORKER_WRAP=$6 worker_start "$vm" $flags ;;
	restart)
		worker_stop "$vm"
		WORKER_PREFIX=$5 WORKER_WRAP=$6 worker_start "$vm" $flags
		;;
	esac
}

scn_wait() {
	nsx "$LAB_RUN/labcheck" node "$FAULT_COORD" "$1" "$2" "$3" >/dev/null ||
		die "scenario $SCN_NAME: $1 did not become $2 within $3"
}

# scn_sweep_start NAME [KEY=VALUE...]: the sweep over the scenario's VMs,
# with the fault sweeps' sizes (FAULT_ARGS) and the scenario's overrides.
scn_sweep_start() {
	local name=$1
	shift
	SCN_T0=$SECONDS
	SCN_ID=$(nsx "$LAB_RUN/labcheck" start "$FAULT_COORD" $FAULT_ARGS "nodes=$(seq -s, -f 'vm%g' 1 "$SCN_VMS")" "$@") ||
		die "scenario $name: cannot start a sweep"
}

scn_sweep_cells() {
	nsx "$LAB_RUN/labcheck" wait "$FAULT_COORD" "$SCN_ID" 300s "$2" || die "scenario $1: the sweep did not reach $2 cells"
	log "scenario $1: $2 cells measured, injecting"
}

scn_sweep_end() {
	nsx "$LAB_RUN/labcheck" wait "$FAULT_COORD" "$SCN_ID" "${LAB_FAULT_SWEEP_TIMEOUT:-600s}" "$LAB_RUN/fault-$1.json" ||
		die "scenario $1: the sweep did not finish"
	SCN_SECS=$((SECONDS - SCN_T0))
	if clos_on; then
		# The plan against what the ports' LLDP and the traced paths say,
		# while the fault is still in (the heal would put it right).
		nsx "$LAB_RUN/rdmamesh" cabling --coordinator "$FAULT_COORD" --json "$LAB_RUN/fault-$1.cabling.json" \
			>"$LAB_RUN/fault-$1.cabling.txt" 2>&1 || true
	fi
}

# scn_healed NAME: every worker of the scenario back with a usable port, so
# the next scenario starts from a healthy lab.
scn_healed() {
	nsx "$LAB_RUN/labcheck" nodes "$FAULT_COORD" "$SCN_VMS" "${LAB_JOIN_TIMEOUT:-180s}" >/dev/null ||
		die "scenario $1: after the heal steps not every worker is back with a usable port"
}

# scn_expect NAME FLAGS...: the gate on the scenario's sweep, run as an
# operator runs it (the newest sweep, the shipped thresholds, an exclude
# file), then labcheck expect judges the matrix and what the gate said.
scn_expect() {
	local name=$1 rc=0 ex="$LAB_RUN/fault-$1.exclude"
	shift
	rm -f "$ex"
	nsx "$LAB_RUN/rdmamesh" gate --coordinator "$FAULT_COORD" --latest --exclude "$ex" >"$LAB_RUN/fault-$name.gate.txt" 2>&1 || rc=$?
	log "scenario $name: gate exit $rc, exclude '$(cat "$ex" 2>/dev/null)'"
	case " $* " in *" -cabling "*) set -- "$@" -cabling-file "$LAB_RUN/fault-$name.cabling.json" ;; esac
	nsx "$LAB_RUN/labcheck" expect "$LAB_RUN/fault-$name.json" "$name" -table "$FAULT_TABLE" \
		-gate-said "$rc" -exclude-file "$ex" -sweep-seconds "$SCN_SECS" "$@" || true
}

# scenario_cases FILE...: run scenario files on the running cluster.
scenario_cases() {
	local f plan
	for f in "$@"; do
		plan="$LAB_RUN/scenario-$(basename "$f" .yaml).plan"
		"$LAB_RUN/labcheck" scenario "$f" > "$plan" || die "scenario file $f is not valid"
		. "$plan"
		mark "scenario $SCN_NAME"
	done
}

# scenario_files NAME|FILE...: SCN_FILES, built-in names
# (lab/scenarios/NAME.yaml) or paths.
SCN_FILES=()
scenario_files() {
	local a
	SCN_FILES=()
	for a in "$@"; do
		if [ -f "$a" ]; then
			SCN_FILES+=("$a")
		elif [ -f "$LAB_DIR/scenarios/$a.yaml" ]; then
			SCN_FILES+=("$LAB_DIR/scenarios/$a.yaml")
		else
			die "no scenario $a: neither a file nor lab/scenarios/$a.yaml ($(cd "$LAB_DIR/scenarios" && ls | sed 's/\.yaml$//' | tr '\n' ' '))"
		fi
	done
}

# scenario_run FILE...: reuse running VMs (lab.sh up N, or LAB_KEEP=1 of
# an earlier run; they stay up afterwards) or boot them, start the
# coordinator and workers, run the scenarios, print the table.
scenario_run() {
	[ $# -gt 0 ] || die "usage: lab.sh scenario FILE|NAME..."
	local n
	scenario_files "$@"
	(cd "$REPO_DIR" && go build -o "$LAB_RUN/labcheck" ./lab/labcheck) || die "building labcheck"
	n=$("$LAB_RUN/labcheck" scenario -vms "${SCN_FILES[@]}") || die "a scenario file is not valid"
	boot_or_reuse "$n"
	faults_prepare
	if clos_on; then
		# The coordinator routes the cells over the Clos's plan, and its
		# switch addresses map the traced hops.
		clos_plan "$n" >"$LAB_RUN/clos-plan.yaml"
		LAB_TOPOLOGY="$LAB_RUN/clos-plan.yaml"
	fi
	faults_cluster "$n"
	scenario_cases "${SCN_FILES[@]}"
	sweep_stop
	faults_table
}
