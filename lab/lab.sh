#!/usr/bin/env bash
# The Soft-RoCE lab driver.
#
#   lab.sh all [N]      setup, build, boot N VMs (default 4), probe, compare, sweep,
#                       fault cases and RDMA CM sweep, churn; then the VMs again on
#                       the routed 2x2 Clos: clos checks, link-down, link-loss,
#                       crossed-cable
#   lab.sh probe        2 VMs: `rdmamesh probe` between them (both connection modes)
#   lab.sh compare [R]  2 VMs: rdmamesh vs perftest, R interleaved repetitions
#   lab.sh sweep [N]    N VMs: workers + host coordinator + gate
#   lab.sh clean [R]    4 VMs: R clean sweeps in a row (default 10), each
#                       through the gate with the shipped thresholds: exit 0,
#                       nobody excluded
#   lab.sh faults       4 VMs: RDMA CM sweep and the built-in fault scenarios
#                       (LAB_FAULTS="loss-both ..." picks some; LAB_REUSE=1
#                       uses running VMs)
#   lab.sh scenario FILE|NAME...
#                       fault scenarios from files (format: README.md): reuses
#                       running VMs or boots them, injects, sweeps, heals, judges
#   lab.sh live         4 VMs: the always-on mesh (live.enabled), a port down
#                       and a netem loss flagged without a sweep (live.sh);
#                       reuses running VMs (lab.sh up 4) or boots them
#   lab.sh churn        1 VM: session churn, leak check
#   lab.sh smoke        the CI smoke from nothing (smoke.sh), one retry on an
#                       infrastructure failure (exit 75 of smoke-once)
#   lab.sh p7 [R]       4 VMs: rdmamesh sweep vs per-pair perftest wall time,
#                       R interleaved repetitions (p7.sh; LAB_P7_MODE=quick)
#   lab.sh clos-live [N]  N VMs on the routed Clos, live probing only: the
#                       link flows probe cleanly, then a lossy leaf1 -> spine1
#                       is named between sweeps (clos.sh, clos_live)
#   lab.sh clos [N]     N VMs (default 4) on a routed Clos (LAB_CLOS, default 2x2;
#                       clos.sh): a sweep whose reported flows must match the
#                       UDP source ports the spines forwarded
#   lab.sh up [N]       boot N VMs (default 2) and leave them running (debugging;
#                       LAB_CLOS=2x2 puts them on a routed Clos)
#   lab.sh shell VM CMD run one command in a running lab VM (debugging)
#   lab.sh down         stop VMs and delete the namespace
#
# Exits non-zero when any phase fails. Timings go to $LAB_RUN/timings.log.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$LAB_DIR/vm.sh"
. "$LAB_DIR/clos.sh"
. "$LAB_DIR/compare.sh"
. "$LAB_DIR/sweep.sh"
. "$LAB_DIR/faults.sh"
. "$LAB_DIR/scenario.sh"
. "$LAB_DIR/churn.sh"
. "$LAB_DIR/smoke.sh"
. "$LAB_DIR/p7.sh"
. "$LAB_DIR/live.sh"

[ "$(id -u)" -eq 0 ] || die "the lab needs root (network namespace, taps)"

T0=$SECONDS
mark() { printf '%-28s %4ds\n' "$1" $((SECONDS - T0)) | tee -a "$LAB_RUN/timings.log" >&2; }

build_bin() {
	mkdir -p "$LAB_RUN"
	if [ -n "$LAB_BIN" ]; then
		cp "$LAB_BIN" "$LAB_RUN/rdmamesh"
	else
		log "building rdmamesh with the verbs engine"
		(cd "$REPO_DIR" && CGO_ENABLED=1 go build -tags verbs -o "$LAB_RUN/rdmamesh" ./cmd/rdmamesh)
	fi
	make_initrd "$LAB_RUN/rdmamesh"
}

cleanup() {
	local rc=$?
	clos_capture_stop
	sweep_stop
	if [ -z "${LAB_KEEP:-}" ]; then
		vms_down
		net_down
	fi
	exit $rc
}

boot() {
	local n=$1
	vms_down
	clos_check
	net_up "$n"
	vms_up "$n"
	if clos_on; then
		clos_up "$n"
		mark "booted $n VMs on a $LAB_CLOS Clos"
	else
		mark "booted $n VMs"
	fi
}

# boot_or_reuse N: reuse vm1..vmN when they already run (lab.sh up N, or
# an earlier run with LAB_KEEP=1; they then stay up afterwards), or set up,
# build and boot them.
boot_or_reuse() {
	if vms_running "$1"; then
		log "reusing the $1 running VMs (they stay up)"
		LAB_KEEP=1
	else
		bash "$LAB_DIR/setup.sh"
		build_bin
		boot "$1"
	fi
}

# LAB_PROBE_ITERS pings (1000) and 200 x 64 KiB writes, each measurement
# under a 120 s deadline (the smoke pings 300 times: at 88 ms per round
# trip on a starved host, 1100 round trips came close to it).
phase_probe() {
	log "rdmamesh probe vm1 <-> vm2"
	local srv it=${LAB_PROBE_ITERS:-1000}
	srv=$(vm_start vm1 "rdmamesh probe --listen")
	vm_run vm2 "rdmamesh probe --peer $(vm_ip 1) --iters $it --bw-size 65536 --bw-iters 200 --timeout 120s" \
		|| { vm_wait "$srv" 30; die "rdmamesh probe failed"; }
	vm_wait "$srv" 60 > "$LAB_RUN/probe-listener.out" || die "rdmamesh probe listener failed"
	log "rdmamesh probe vm1 <-> vm2 through RDMA CM"
	srv=$(vm_start vm1 "rdmamesh probe --listen")
	vm_run vm2 "rdmamesh probe --peer $(vm_ip 1) --connect rdmacm --iters $it --bw-size 65536 --bw-iters 200 --timeout 120s" \
		|| { vm_wait "$srv" 30; die "rdmamesh probe --connect rdmacm failed"; }
	vm_wait "$srv" 60 > "$LAB_RUN/probe-listener-rdmacm.out" || die "rdmamesh probe listener (RDMA CM) failed"
	grep -q "Connection     : RDMA CM" "$LAB_RUN/probe-listener-rdmacm.out" || die "the listener did not connect through RDMA CM"
	mark "probe"
}

# phase_doctor checks discovery on a real rxe device: the auto policy must
# pick the IPv4-mapped RoCE v2 entry (index 1 on rxe), port ACTIVE, MTU 1024,
# and the port's LLDP neighbour: on the routed Clos, vm1's leaf and port as
# its lldpd announces them; on the flat bridge, which sends no LLDP,
# "unknown" with the reason.
phase_doctor() {
	log "rdmamesh doctor in vm1"
	local out ip want wait=3s
	ip=$(vm_dip 1)
	want='rxe0/1 \(eth1\) neighbour: unknown: .*LLDP'
	if clos_on; then
		wait=30s want='rxe0/1 \(eth1\) neighbour: leaf1 port dtap1 "port 1"'
		clos_lldp_sending 1 dtap1
	fi
	out=$(VM_TIMEOUT=120 vm_run vm1 "rdmamesh doctor --lldp-wait $wait") || die "rdmamesh doctor failed in vm1"
	printf '%s\n' "$out" > "$LAB_RUN/doctor.out"
	printf '%s\n' "$out" | grep -Eq "^0 +rxe0/1 +1 +::ffff:${ip//./\\.} +RoCE v2 +eth1 .* 1024 +yes" \
		|| die "doctor did not pick rxe0's IPv4 RoCE v2 GID (index 1) with MTU 1024: see $LAB_RUN/doctor.out"
	printf '%s\n' "$out" | grep -Eq '^ok +port_state:rxe0/1 +state 4: ACTIVE' \
		|| die "doctor does not report rxe0 port 1 ACTIVE: see $LAB_RUN/doctor.out"
	printf '%s\n' "$out" | grep -Eq "$want" \
		|| die "doctor does not show rxe0's LLDP neighbour as /$want/: see $LAB_RUN/doctor.out$(clos_on && echo " (leaf1's lldpd has sent $(clos_lldp_tx 1 dtap1) frames on dtap1)")"
	mark "doctor"
}

main() {
	local cmd=${1:-all}
	shift || true
	mkdir -p "$LAB_RUN"
	case $cmd in
	shell | down | smoke) ;;
	*) : > "$LAB_RUN/timings.log"; rm -f "$LAB_RUN/infra" ;;
	esac
	case $cmd in
	smoke)
		smoke_run
		return
		;;
	smoke-once)
		trap cleanup EXIT
		smoke_once
		;;
	all)
		local n=${1:-4}
		[ "$n" -ge 4 ] || die "the full lab needs at least 4 VMs"
		trap cleanup EXIT
		bash "$LAB_DIR/setup.sh"
		mark "setup"
		build_bin
		mark "build"
		boot "$n"
		phase_doctor
		phase_probe
		compare_run "${LAB_REPS:-3}"
		mark "compare"
		sweep_run "$n"
		mark "sweep"
		faults_run "$n"
		mark "faults"
		churn_run
		mark "churn"
		# The VMs again on the routed 2x2 Clos: doctor's LLDP neighbour,
		# the flows on the wire, path truth, then the link scenarios and
		# the crossed cable (LAB_CLOS_FAULTS picks others; none skips).
		sweep_stop
		vms_down
		net_down
		LAB_CLOS=2x2
		boot "$n"
		clos_run "$n"
		faults_prepare
		faults_cluster "$n"
		scenario_files ${LAB_CLOS_FAULTS-link-down link-loss crossed-cable}
		[ ${#SCN_FILES[@]} -eq 0 ] || scenario_cases "${SCN_FILES[@]}"
		sweep_stop
		faults_table
		mark "clos"
		;;
	faults)
		trap cleanup EXIT
		if [ -z "${LAB_REUSE:-}" ]; then
			bash "$LAB_DIR/setup.sh"
			build_bin
			boot 4
		fi
		faults_run 4
		mark "faults"
		;;
	p7)
		trap cleanup EXIT
		p7_run "$@"
		;;
	scenario)
		trap cleanup EXIT
		scenario_run "$@"
		;;
	clean)
		trap cleanup EXIT
		boot_or_reuse 4
		clean_run 4 "${1:-${LAB_CLEAN_RUNS:-10}}"
		;;
	live)
		trap cleanup EXIT
		(cd "$REPO_DIR" && go build -o "$LAB_RUN/labcheck" ./lab/labcheck) || die "building labcheck"
		boot_or_reuse 4
		phase_live 4
		;;
	churn)
		trap cleanup EXIT
		if [ -z "${LAB_REUSE:-}" ]; then
			bash "$LAB_DIR/setup.sh"
			build_bin
			boot 1
		fi
		churn_run
		mark "churn"
		;;
	probe)
		trap cleanup EXIT
		bash "$LAB_DIR/setup.sh"
		build_bin
		boot 2
		phase_doctor
		phase_probe
		;;
	compare)
		trap cleanup EXIT
		bash "$LAB_DIR/setup.sh"
		build_bin
		boot 2
		phase_probe
		compare_run "${1:-${LAB_REPS:-3}}"
		mark "compare"
		;;
	sweep)
		local n=${1:-4}
		trap cleanup EXIT
		bash "$LAB_DIR/setup.sh"
		build_bin
		boot "$n"
		sweep_run "$n"
		mark "sweep"
		;;
	clos | clos-live)
		# The routed Clos (default 2x2), reusing VMs that run on one
		# (LAB_CLOS=2x2 lab.sh up 4). clos: a sweep whose reported flows
		# are checked against what the spines forwarded (clos_run).
		# clos-live: the live mesh's link flows, clean, then a lossy
		# leaf1 -> spine1 named between sweeps (clos_live).
		local n=${1:-4}
		LAB_CLOS=${LAB_CLOS:-2x2}
		clos_check
		trap cleanup EXIT
		boot_or_reuse "$n"
		if [ "$cmd" = clos ]; then clos_run "$n"; else clos_live "$n"; fi
		;;
	up)
		bash "$LAB_DIR/setup.sh"
		build_bin
		boot "${1:-2}"
		log "VMs up: lab/lab.sh shell vmN 'CMD'; lab/lab.sh down when done"
		;;
	shell)
		local vm=$1
		shift
		vm_run "$vm" "$*"
		;;
	down)
		vms_down
		net_down
		;;
	*) die "unknown command $cmd (all|probe|compare|sweep|clean|faults|scenario|p7|live|clos|clos-live|churn|smoke|up|shell|down)" ;;
	esac
	log "done in $((SECONDS - T0))s"
}

main "$@"
