# shellcheck shell=bash
# Shared by rdmamesh-prolog.sh and rdmamesh-epilog.sh (sourced, not run).
# Settings come from $RDMAMESH_SLURM_CONF (default /etc/rdmamesh/slurm.conf),
# a shell file of NAME=value lines; see slurm.conf.example.

RDMAMESH=/usr/local/bin/rdmamesh
COORDINATOR=http://rdmamesh:8080
MODE=full            # prolog sweep: quick (connectivity + latency) or full (+ bandwidth)
EPILOG_MODE=quick    # epilog re-check: short, it delays the nodes' release
TIMEOUT=10m          # keep below Slurm's PrologEpilogTimeout
BUDGET=8m            # the coordinator stops the sweep past this (gate exit 3); below TIMEOUT
SPEC=                # optional gate.yaml (pattern, rail_mode, retests, profile); flags here win
TOKEN_FILE=          # the API token when the coordinators have auth.token (root-only file)
ON_ERROR=pass        # the gate could not judge (exit 2 or 3): pass = let the job run, fail = requeue it
DRAIN=yes            # drain the nodes an unhealthy sweep blames
EPILOG_CHECK=failed  # when the epilog re-checks: failed (the job failed), always, never
REPORT_DIR=/var/log/rdmamesh/slurm

conf=${RDMAMESH_SLURM_CONF:-/etc/rdmamesh/slurm.conf}
if [[ -r $conf ]]; then
	# shellcheck source=/dev/null
	. "$conf"
fi

log() {
	echo "rdmamesh-slurm[job ${SLURM_JOB_ID:-?}]: $*" >&2
	if command -v logger >/dev/null 2>&1; then
		logger -t rdmamesh-slurm -- "job ${SLURM_JOB_ID:-?}: $*" || true
	fi
}

# job_nodes prints the job's nodes comma-separated, to count them; the gate
# itself takes the hostlist expression. Worker names must equal Slurm node
# names.
job_nodes() {
	scontrol show hostnames "${SLURM_JOB_NODELIST:?SLURM_JOB_NODELIST is not set}" | paste -sd, -
}

# run_gate MODE TAG runs one sweep over the job's nodes and returns the
# gate's exit code: 0 healthy, 1 unhealthy, 2 usage (the coordinator refused
# the request, e.g. a node without a worker), 3 infrastructure (coordinator
# unreachable, not enough workers, sweep failed).
# The matrix is kept as $REPORT_DIR/<job>.<tag>.json (and .xml for JUnit).
run_gate() {
	local mode=$1 tag=$2 nodes count
	nodes=$(job_nodes) || return 2
	count=$(tr ',' '\n' <<<"$nodes" | grep -c .)
	if ((count < 2)); then
		log "$count node(s): nothing to test between nodes"
		return 0
	fi
	mkdir -p "$REPORT_DIR" 2>/dev/null || true
	report="$REPORT_DIR/${SLURM_JOB_ID:-job}.$tag"
	local spec=()
	[[ -n $SPEC ]] && spec=(--spec "$SPEC")
	[[ -n $TOKEN_FILE ]] && spec+=(--token-file "$TOKEN_FILE")
	"$RDMAMESH" gate --coordinator "$COORDINATOR" "${spec[@]}" --hosts "$SLURM_JOB_NODELIST" --mode "$mode" \
		--budget "$BUDGET" --timeout "$TIMEOUT" --json "$report.json" --junit "$report.xml" >"$report.txt" 2>&1
	local rc=$?
	log "gate over $count nodes ($mode): exit $rc, report $report.txt"
	return "$rc"
}

# blamed_nodes prints the nodes the report's suspects name as the culprit:
# kind node or hca. A rail suspect is a switch, a pair suspect does not say
# which end is at fault; draining either would punish healthy nodes.
blamed_nodes() {
	if ! command -v jq >/dev/null 2>&1; then
		log "jq is not installed: cannot read the suspects, draining nothing"
		return 0
	fi
	jq -r '[.suspects[]? | select(.kind == "node" or .kind == "hca") | .node] | unique | .[]' "$report.json" 2>/dev/null
}

# drain_blamed drains every blamed node with the suspects' reasons.
drain_blamed() {
	[[ $DRAIN == yes ]] || return 0
	local nodes
	nodes=$(blamed_nodes | paste -sd, -)
	if [[ -z $nodes ]]; then
		log "unhealthy, but no node or HCA is blamed (rail or pair suspects): see $report.txt"
		return 0
	fi
	log "draining $nodes"
	scontrol update NodeName="$nodes" State=DRAIN Reason="rdmamesh: unhealthy fabric in job ${SLURM_JOB_ID:-?}, see $report.txt"
}
