# Phase 2: a real sweep over Soft-RoCE (sourced by lab.sh). A worker with
# the verbs engine in every VM, the coordinator on the host inside the lab
# namespace (so it also proves the coordinator role needs no RDMA), and the
# gate judging the sweep; labcheck then asserts every cell is ok and ran
# over the IPv4 RoCE v2 GID.
COORD_PID=

sweep_stop() {
	if [ -n "$COORD_PID" ]; then
		kill "$COORD_PID" 2>/dev/null || true
		wait "$COORD_PID" 2>/dev/null || true
		COORD_PID=
	fi
}

# coord_start TEST_TIMEOUT PAIR_TIMEOUT [PARALLELISM]: the coordinator on
# the host, inside the lab namespace (so it also proves the coordinator
# role needs no RDMA). PARALLELISM caps the pairs tested at once (0: all).
coord_start() {
	local c="$LAB_NET.1"
	sweep_stop
	rm -rf "$LAB_RUN/coord"
	mkdir -p "$LAB_RUN/coord"
	# WAN gossip timers everywhere: a VM's single emulated CPU busy-polling
	# a test misses LAN probes for seconds (gossip.profile). --insecure:
	# the lab's bridge lives in its own namespace and nothing leaves it.
	# The always-on mesh only where a phase asks for it (the live phase
	# exports RDMAMESH_LIVE_ENABLED=true): netem's Gilbert-Elliott loss
	# counts packets, so probes crossing a faulted link shorten the bursts
	# a sweep's RC retries meet, and the fault cases would test a
	# different fault from run to run.
	# LAB_TOPOLOGY: the cabling plan the coordinator routes cells over (the
	# routed Clos's, clos_plan); empty: none.
	RDMAMESH_COORDINATOR_TOPOLOGY=${LAB_TOPOLOGY:-} \
	RDMAMESH_LIVE_ENABLED=${RDMAMESH_LIVE_ENABLED:-false} RDMAMESH_SWEEP_TEST_TIMEOUT=$1 RDMAMESH_COORDINATOR_PARALLELISM=${3:-0} RDMAMESH_GOSSIP_PROFILE=${LAB_GOSSIP:-wan} \
		ip netns exec "$LAB_NS" "$LAB_RUN/rdmamesh" coordinator --name coord --gossip-bind "$c:7946" --insecure \
		--api-listen "$c:8080" --data-dir "$LAB_RUN/coord/data" --pair-timeout "$2" \
		>> "$LAB_RUN/logs/coordinator.log" 2>&1 &
	# ip netns exec execs the coordinator, so $! is the coordinator itself.
	COORD_PID=$!
}

# worker_start VM [FLAGS...]: `rdmamesh worker` in VM, its pid in the
# guest's /tmp/worker.pid; FLAGS are appended (e.g. --gid index=0).
# WORKER_PREFIX runs first in the same shell (e.g. a ulimit) and
# WORKER_WRAP is exec'd with the worker as its command (e.g. setpriv).
worker_start() {
	local vm=$1 i=${1#vm}
	shift
	vm_start "$vm" "${WORKER_PREFIX:-} echo \$\$ > /tmp/worker.pid; export RDMAMESH_GOSSIP_PROFILE=${LAB_GOSSIP:-wan}; exec ${WORKER_WRAP:-} rdmamesh worker --name $vm \
		--gossip-bind $(vm_ip "$i"):7946 --api-listen $(vm_ip "$i"):7947 --join $LAB_NET.1:7946 \
		--fabric verbs --gid auto --insecure $*" > "$LAB_RUN/worker-$vm.job"
}

# worker_stop VM [SIGNAL]: stop VM's worker and wait until it is gone.
worker_stop() {
	VM_TIMEOUT=30 vm_run "$1" "p=\$(cat /tmp/worker.pid 2>/dev/null) || exit 0; kill -${2:-TERM} \$p 2>/dev/null;
		i=0; while kill -0 \$p 2>/dev/null; do i=\$((i+1)); [ \$i -gt 200 ] && exit 1; usleep 50000; done; rm -f /tmp/worker.pid" >/dev/null
}

# cluster_up N TEST_TIMEOUT PAIR_TIMEOUT [PARALLELISM]: the coordinator and
# a fresh worker in each of N VMs, until all have joined with a usable port.
#
# Old workers stop before the new coordinator starts: a coordinator that
# meets the old ones first (same names, same addresses) keeps their
# restarted successors out as "dead" for about two minutes under WAN gossip
# timers (seen: 93 s and 110 s); in this order they join in seconds.
cluster_up() {
	local n=$1 i
	sweep_stop
	for i in $(seq 1 "$n"); do
		worker_stop "vm$i"
	done
	coord_start "$2" "$3" "${4:-0}"
	for i in $(seq 1 "$n"); do
		worker_start "vm$i"
	done
	nsx "$LAB_RUN/labcheck" nodes "http://$LAB_NET.1:8080" "$n" "${LAB_JOIN_TIMEOUT:-180s}" || {
		tail -20 "$LAB_RUN/logs/coordinator.log" >&2
		die "workers did not join"
	}
	mark "workers joined"
}

sweep_run() {
	local n=$1
	(cd "$REPO_DIR" && go build -o "$LAB_RUN/labcheck" ./lab/labcheck) || die "building labcheck"
	# Emulated RDMA is ~1000x slower than hardware: the per-measurement and
	# per-pair deadlines are raised accordingly; the sizes stay the defaults.
	# One pair at a time: with every VM busy-polling on a loaded 2-core host,
	# gossip declared busy workers dead mid-test (their probes went
	# unanswered for seconds) and the coordinator ended those tests.
	cluster_up "$n" "${LAB_TEST_TIMEOUT:-90s}" "${LAB_PAIR_TIMEOUT:-240s}" "${LAB_SWEEP_PARALLELISM:-1}"
	gate_sweep "$n"
	sweep_stop
}

# clean_run N RUNS: RUNS clean sweeps in a row on N VMs, each through the
# gate with the shipped thresholds; every one must exit 0 and exclude
# nobody. A table of the runs (wall time, exit, noise the matrix measured)
# goes to $LAB_RUN/clean.txt.
clean_run() {
	local n=$1 runs=$2 i t0 out="$LAB_RUN/clean.txt"
	(cd "$REPO_DIR" && go build -o "$LAB_RUN/labcheck" ./lab/labcheck) || die "building labcheck"
	cluster_up "$n" "${LAB_TEST_TIMEOUT:-90s}" "${LAB_PAIR_TIMEOUT:-240s}" "${LAB_SWEEP_PARALLELISM:-1}"
	printf '| run | wall | gate exit | excluded | noise |\n|---|---|---|---|---|\n' > "$out"
	for i in $(seq 1 "$runs"); do
		t0=$SECONDS
		gate_sweep "$n"
		printf '| %d | %ds | 0 | - | %s |\n' "$i" $((SECONDS - t0)) \
			"$(nsx "$LAB_RUN/rdmamesh" gate --coordinator "http://$LAB_NET.1:8080" --latest 2>/dev/null | grep '^noise:' | sed 's/^noise: //' | paste -sd ';' -)" >> "$out"
	done
	sweep_stop
	log "$runs clean sweeps in a row passed the gate and excluded nobody:"
	cat "$out"
}

# gate_sweep N: one sweep through `rdmamesh gate` on the running cluster,
# judged as an operator's gate judges it (the shipped thresholds): exit 0
# and nothing excluded on a clean lab, however noisy emulation makes it;
# labcheck asserts every cell of the N nodes ok over the IPv4 RoCE v2 GID.
gate_sweep() {
	local n=$1 i c="$LAB_NET.1" check="$LAB_RUN/labcheck"
	local rc=0 spec=() ex="$LAB_RUN/sweep.exclude"
	# LAB_SWEEP_SPEC: a gate spec file (the sweep request's fields), e.g.
	# the smoke's smaller iteration counts.
	[ -n "${LAB_SWEEP_SPEC:-}" ] && spec=(--spec "$LAB_SWEEP_SPEC")
	rm -f "$ex"
	nsx "$LAB_RUN/rdmamesh" gate --coordinator "http://$c:8080" --json "$LAB_RUN/sweep.json" "${spec[@]}" \
		--junit "$LAB_RUN/sweep.junit.xml" --exclude "$ex" --timeout "${LAB_SWEEP_TIMEOUT:-30m}" || rc=$?
	mark "sweep (gate exit $rc)"
	if ! "$check" sweep "$LAB_RUN/sweep.json" "$n" "$(if clos_on; then echo "$LAB_CNET"; else echo "$LAB_DNET"; fi)"; then
		rc=$((rc ? rc : 1))
	elif [ -s "$ex" ]; then
		log "the clean sweep excluded $(cat "$ex")"
		rc=$((rc ? rc : 1))
	fi
	[ "$rc" -eq 0 ] || {
		tail -30 "$LAB_RUN/logs/coordinator.log" >&2
		for i in $(seq 1 "$n"); do
			echo "--- worker vm$i" >&2
			tail -15 "$LAB_RUN/share/q/$(cat "$LAB_RUN/worker-vm$i.job").out" >&2 || true
		done
		sweep_stop
		die "sweep failed (gate exit $rc)"
	}
}
