# The CI smoke (sourced by lab.sh; `make lab-smoke`, run by .ci/run): real
# RDMA on every CI run in a bounded time. From nothing (its own cache,
# wiped first: packages, kernel, initramfs as `make lab` builds them), on
# LAB_SMOKE_VMS (4) VMs:
#   doctor in vm1 (the IPv4 RoCE v2 GID, port ACTIVE, MTU 1024)
#   probe vm1 <-> vm2 through the exchange and through RDMA CM
#   the perftest ratio table (printed, not asserted)
#   one sweep through the gate, judged as an operator's gate judges it
#   (exit 0, nothing excluded), every cell ok over the chosen GID
#   three fault scenarios (lab/scenarios/port-down-before, mtu-mix,
#   loss-both) judged for suspect, class, cause, fix, warning and exclude list
#   the live phase (live.sh): workers and coordinator with live.enabled,
#   no sweep; a port down on vm2 and a netem loss on vm3 must each be the
#   live matrix's first suspect within 60 s (LAB_SMOKE_LIVE=0 skips it)
#   the routed Clos (clos.sh; LAB_SMOKE_CLOS=0 skips it): the VMs rebooted
#   on a 2x2 Clos, doctor's LLDP neighbour, a sweep whose reported flows
#   must be the ports on the wire, path truth for 20 flows a VM pair, and
#   scenario link-down (a cable down: cells pass, the traced paths report
#   it unused)
# Smaller than `make lab`: fewer repetitions, fewer iterations per cell,
# one confirmation pass per sweep where the gate's default has two
# (LAB_SMOKE_RETESTS, LAB_FAULT_RETESTS), three fault cases out of twelve.
#
# Flake discipline: a run that fails because the lab itself failed (a VM
# that does not boot, a command queue that stops answering; exit 75, see
# common.sh) is retried once and reported as infrastructure; any other
# failure is a wrong result and fails at once.

smoke_once() {
	local n=${LAB_SMOKE_VMS:-4}
	log "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	bash "$LAB_DIR/setup.sh" || die_infra "lab setup failed (packages, kernel or initramfs)"
	mark "setup"
	build_bin
	(cd "$REPO_DIR" && go build -o "$LAB_RUN/labcheck" ./lab/labcheck) || die "building labcheck"
	mark "build"
	boot "$n"
	phase_doctor
	LAB_PROBE_ITERS=${LAB_PROBE_ITERS:-300} phase_probe
	# compare.sh read LAB_LAT_ITERS/LAB_BW_ITERS when sourced; the smoke's
	# smaller defaults apply only where the caller set none.
	CMP_ITERS=${LAB_LAT_ITERS:-500} CMP_BW_ITERS=${LAB_BW_ITERS:-200} compare_run "${LAB_SMOKE_REPS:-2}"
	mark "compare"
	# One coordinator and one set of workers for the clean sweep and the
	# fault cases: a coordinator restarted under running workers re-admits
	# a restarted worker only after ~2 minutes of WAN gossip timers.
	# Deadlines and sizes for a starved emulator: at load 15-19 on the 2
	# cores a clean ping-pong took 88 ms per round trip, and the first
	# version (300 pings + 100 warm-up under a 30 s deadline) timed a clean
	# cell out. Now every sweep warms up 20 round trips, the clean sweep
	# pings 200 times (220 x 88 ms = 19 s) and the fault sweeps 100, under
	# a 45 s deadline. The deadline also bounds the loss case: a cell
	# whose responder's writes are lost waits it out, up to six of them.
	faults_prepare
	RDMAMESH_SWEEP_WARMUP=${LAB_SMOKE_WARMUP:-20} LAB_FAULT_TEST_TIMEOUT=${LAB_FAULT_TEST_TIMEOUT:-45s} \
		LAB_FAULT_PAIR_TIMEOUT=${LAB_FAULT_PAIR_TIMEOUT:-120s} faults_cluster "$n"
	printf 'latency_iters: %s\nbw_iters: %s\nretests: %s\n' "${LAB_SMOKE_ITERS:-200}" "${LAB_SMOKE_BW_ITERS:-50}" "${LAB_SMOKE_RETESTS:-1}" > "$LAB_RUN/smoke-spec.yaml"
	LAB_SWEEP_SPEC="$LAB_RUN/smoke-spec.yaml" gate_sweep "$n"
	mark "sweep"
	scenario_files ${LAB_FAULTS:-port-down-before mtu-mix loss-both}
	scenario_cases "${SCN_FILES[@]}"
	sweep_stop
	faults_table
	mark "faults"
	if [ "${LAB_SMOKE_LIVE:-1}" != 0 ]; then
		phase_live "$n"
	fi
	if [ "${LAB_SMOKE_CLOS:-1}" != 0 ]; then
		# The VMs again, their RDMA network a routed 2x2 Clos: doctor's LLDP
		# neighbour, every reported flow on the wire, and path truth
		# (clos.sh).
		sweep_stop
		vms_down
		net_down
		LAB_CLOS=2x2
		boot "$n"
		LAB_SWEEP_SPEC="$LAB_RUN/smoke-spec.yaml" clos_run "$n"
		# The cable leaf1 <-> spine1 down (scenario link-down): every cell
		# passes over spine2, and the sweep's traced paths report the
		# cable unused. clos_run left LAB_TOPOLOGY at the Clos's plan.
		faults_prepare
		RDMAMESH_SWEEP_WARMUP=${LAB_SMOKE_WARMUP:-20} LAB_FAULT_TEST_TIMEOUT=${LAB_FAULT_TEST_TIMEOUT:-45s} \
			LAB_FAULT_PAIR_TIMEOUT=${LAB_FAULT_PAIR_TIMEOUT:-120s} faults_cluster "$n"
		scenario_files link-down
		scenario_cases "${SCN_FILES[@]}"
		sweep_stop
		faults_table
		mark "clos link-down"
	fi
	log "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# smoke_run runs smoke_once in a child (so a failed attempt's VMs and
# namespace are torn down by its own trap) at most twice.
smoke_run() {
	local cache=${LAB_SMOKE_CACHE:-/var/tmp/rdmamesh-lab-smoke} attempt rc why="" t0=$SECONDS
	[ -n "${LAB_SMOKE_WARM:-}" ] || rm -rf "$cache"
	mkdir -p "$cache/run"
	for attempt in 1 2; do
		set +e
		LAB_CACHE=$cache LAB_RUN=$cache/run LAB_NS=${LAB_SMOKE_NS:-rdmamesh-smoke} \
			bash "$LAB_DIR/lab.sh" smoke-once 2>&1 | tee "$cache/attempt$attempt.log"
		rc=${PIPESTATUS[0]}
		set -e
		echo "--- smoke attempt $attempt: exit $rc, marks (cumulative seconds):"
		cat "$cache/run/timings.log"
		case $rc in
		0)
			echo "lab-smoke: PASS in $((SECONDS - t0))s (attempt $attempt${why:+; attempt 1 failed on infrastructure: $why})"
			return 0
			;;
		"$LAB_INFRA_RC")
			why=$(tail -1 "$cache/run/infra" 2>/dev/null || echo unknown)
			echo "lab-smoke: attempt $attempt failed on infrastructure ($why); load $(cut -d' ' -f1-3 /proc/loadavg)"
			;;
		*)
			echo "lab-smoke: FAIL in $((SECONDS - t0))s: a wrong result (log: $cache/attempt$attempt.log)"
			return 1
			;;
		esac
	done
	echo "lab-smoke: FAIL in $((SECONDS - t0))s: infrastructure failed twice ($why)"
	return 1
}
