# The always-on mesh on the real engine (sourced by lab.sh; part of the
# smoke, or alone: `lab.sh live`): a coordinator and workers with
# live.enabled, no sweep started. Every worker opens a UD probe QP on rxe0
# (internal/fabric/verbs, ud.c) and probes the others at the plan's rate;
# the coordinator folds their window summaries into the live matrix. The
# phase waits for a clean live matrix, then injects two faults on data
# links, one at a time, and requires the live matrix to name the right
# node its first suspect within LAB_LIVE_DEADLINE (60 s) of the injection,
# healing and waiting for a clean matrix in between:
#   port down   vm2's data link administratively down (IBV_EVENT_PORT_ERR)
#   netem loss  LAB_LIVE_LOSS (25%) random loss on vm3's data egress
# `rdmamesh gate --live` then judges the lossy window too (exit 1).
#
# Windows of 5 s and 4 probes a second to each peer (12 probes/s per HCA,
# under the 50/s cap): 20 probes per cell per window, enough to tell loss
# from one drop, and a fault shows in the first window that ends after it;
# cells age out after 3 windows, so a healed fault leaves within ~15 s.
LIVE_COORD="http://$LAB_NET.1:8080"

live_check() { nsx "$LAB_RUN/labcheck" live "$LIVE_COORD" "$@"; }

# live_fault NAME VM INJECT HEAL: inject in VM, wait for VM as the first
# suspect, heal, wait for a clean matrix. The seconds to the suspect go to
# $LAB_RUN/live.tsv.
live_fault() {
	local name=$1 vm=$2 inject=$3 heal=$4 n=$5 t0 out
	log "live: $name on $vm"
	t0=$SECONDS
	VM_TIMEOUT=60 vm_run "$vm" "$inject" >/dev/null || die "live: injecting $name in $vm failed"
	out=$(live_check "$vm" "${LAB_LIVE_DEADLINE:-60}s") || {
		printf '%s\n' "$out" >&2
		VM_TIMEOUT=60 vm_run "$vm" "$heal" >/dev/null || true
		die "live: $name on $vm: the live matrix did not name $vm within ${LAB_LIVE_DEADLINE:-60}s"
	}
	printf '%s\n' "$out" | tail -1 >&2
	printf '%s\t%s\t%s\n' "$name" "$vm" "$((SECONDS - t0))" >> "$LAB_RUN/live.tsv"
	if [ -n "${LIVE_GATE:-}" ]; then
		local rc=0
		nsx "$LAB_RUN/rdmamesh" gate --live --coordinator "$LIVE_COORD" --json "$LAB_RUN/live-$name.json" \
			> "$LAB_RUN/live-gate-$name.out" 2>&1 || rc=$?
		[ "$rc" -eq 1 ] || die "live: rdmamesh gate --live exited $rc during $name, want 1 (unhealthy): $(tail -3 "$LAB_RUN/live-gate-$name.out")"
		grep -q "$vm" "$LAB_RUN/live-gate-$name.out" || die "live: rdmamesh gate --live does not name $vm: see $LAB_RUN/live-gate-$name.out"
		log "live: rdmamesh gate --live exits 1 and names $vm"
	fi
	VM_TIMEOUT=60 vm_run "$vm" "$heal" >/dev/null || die "live: healing $name in $vm failed"
	live_check "clean:$n" "${LAB_LIVE_HEAL:-120}s" >/dev/null || die "live: the live matrix stayed unhealthy after healing $name"
	mark "live $name"
}

phase_live() {
	local n=$1
	: > "$LAB_RUN/live.tsv"
	RDMAMESH_LIVE_ENABLED=true RDMAMESH_LIVE_WINDOW=${LAB_LIVE_WINDOW:-5s} RDMAMESH_LIVE_GROUP_RATE=${LAB_LIVE_RATE:-4} \
		WORKER_PREFIX="export RDMAMESH_LIVE_ENABLED=true;" cluster_up "$n" 60s 150s 1 >/dev/null
	live_check "clean:$n" "${LAB_LIVE_START:-120}s" || die "live: no clean live matrix with $n workers probing"
	mark "live clean"
	live_fault port-down vm2 "/usr/bin/ip link set eth1 down" "/usr/bin/ip link set eth1 up" "$n"
	LIVE_GATE=1 live_fault netem-loss vm3 "modprobe sch_netem; /usr/sbin/tc qdisc add dev eth1 root netem loss ${LAB_LIVE_LOSS:-25%}" \
		"/usr/sbin/tc qdisc del dev eth1 root" "$n"
	sweep_stop
	log "live: suspect named after (s): $(tr '\t\n' ' ;' < "$LAB_RUN/live.tsv")"
}
