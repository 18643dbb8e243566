#!/bin/bash
# shellcheck disable=SC2034 # the settings and gate_said are read by the scripts that source this file
# Shared by rdmamesh-prolog.sh and rdmamesh-epilog.sh, which source it.
# Run it as SlurmUser to see what would stop the scripts before a job does:
#   runuser -u slurm -- /etc/slurm/rdmamesh-slurm.sh check
# Settings come from $RDMAMESH_SLURM_CONF (default /etc/rdmamesh/slurm.conf),
# a shell file of NAME=value lines; see slurm.conf.example.
#
# slurmctld runs PrologSlurmctld and EpilogSlurmctld as SlurmUser (not
# root), with only SLURM_* variables in the environment: no PATH, no HOME.
# Everything below must work for that user.

# Without an exported PATH the gate and the Slurm commands would depend on
# bash's built-in default; name the usual directories (after any PATH set).
export PATH=${PATH:+$PATH:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

RDMAMESH=/usr/local/bin/rdmamesh
COORDINATOR=http://rdmamesh:8080
MODE=full            # prolog sweep: quick (connectivity + latency) or full (+ bandwidth)
EPILOG_MODE=quick    # epilog re-check: short, it delays the nodes' release
TIMEOUT=10m          # keep below Slurm's PrologEpilogTimeout
BUDGET=8m            # the coordinator stops the sweep past this (gate exit 3); below TIMEOUT
SPEC=                # optional gate.yaml (pattern, rail_mode, retests, profile); flags here win
TOKEN_FILE=          # the API token when the coordinators have auth.token (readable by SlurmUser only)
ON_ERROR=pass        # rdmamesh could not judge: pass = let the job run, fail = requeue it
ON_ERROR_REQUEUES=3  # with ON_ERROR=fail: after this many requeues the job is held instead
DRAIN=yes            # drain the nodes an unhealthy sweep blames
EPILOG_CHECK=failed  # when the epilog re-checks: failed (the job failed), always, never
REPORT_DIR=/var/log/rdmamesh/slurm           # owned by SlurmUser
LOG_FILE=/var/log/slurm/rdmamesh-slurm.log   # every decision; Debian's /var/log/slurm belongs to SlurmUser

# A configuration that is missing or unreadable is not a reason to run with
# the defaults above: remember it, the prolog reports it as a local failure.
conf=${RDMAMESH_SLURM_CONF:-/etc/rdmamesh/slurm.conf}
conf_problem=
if [[ ! -e $conf ]]; then
	conf_problem="config $conf is missing"
elif [[ ! -r $conf ]]; then
	conf_problem="config $conf is not readable by $(id -un)"
else
	# shellcheck source=/dev/null
	. "$conf"
fi

job=${SLURM_JOB_ID:-?}

# log writes one line to stderr (slurmctld 22.05 drops it), syslog and
# LOG_FILE, so a decision leaves a trace even where one of them is missing.
log() {
	local line
	line="job $job: $*"
	echo "rdmamesh-slurm: $line" >&2
	if command -v logger >/dev/null 2>&1; then
		logger -t rdmamesh-slurm -- "$line" 2>/dev/null || true
	fi
	if [[ -n $LOG_FILE ]]; then
		{ echo "$(date '+%Y-%m-%dT%H:%M:%S') $line" >>"$LOG_FILE"; } 2>/dev/null || true
	fi
}

# job_comment puts MSG in the job's AdminComment, which scontrol show job
# and squeue -O AdminComment show to the job's owner: Slurm's own reason
# for a requeued job is only "BeginTime".
job_comment() {
	[[ -n ${SLURM_JOB_ID:-} ]] || return 0
	scontrol update JobId="$SLURM_JOB_ID" AdminComment="$1" >/dev/null 2>&1 ||
		log "could not set the job's AdminComment"
}

# job_nodes prints the job's nodes one a line. Worker names must equal
# Slurm node names.
job_nodes() {
	scontrol show hostnames "${SLURM_JOB_NODELIST:?SLURM_JOB_NODELIST is not set}"
}

# problems prints, one a line, every local reason the scripts cannot run a
# sweep as this user. Each is an infrastructure failure (as gate exit 3),
# never a verdict on the fabric.
problems() {
	local me probe
	me=$(id -un)
	[[ -z $conf_problem ]] || echo "$conf_problem"
	if [[ ! -x $RDMAMESH ]]; then
		echo "rdmamesh binary $RDMAMESH is missing or not executable by $me"
	fi
	command -v scontrol >/dev/null 2>&1 || echo "scontrol is not in PATH"
	command -v jq >/dev/null 2>&1 || echo "jq is not installed (it reads the report's suspects)"
	if [[ ! -d $REPORT_DIR ]]; then
		echo "report dir $REPORT_DIR is missing"
	elif probe=$(mktemp "$REPORT_DIR/.probe.XXXXXX" 2>/dev/null); then
		rm -f "$probe"
	else
		echo "report dir $REPORT_DIR is not writable by $me"
	fi
	if [[ -n $TOKEN_FILE && ! -r $TOKEN_FILE ]]; then
		echo "TOKEN_FILE $TOKEN_FILE is not readable by $me"
	fi
	if [[ -n $SPEC && ! -r $SPEC ]]; then
		echo "SPEC $SPEC is not readable by $me"
	fi
	return 0
}

# run_gate MODE TAG runs one sweep over the job's nodes and returns the
# gate's exit code: 0 healthy, 1 unhealthy, 2 usage (the coordinator refused
# the request, e.g. a node without a worker), 3 infrastructure (coordinator
# unreachable, not enough workers, sweep failed). The caller has checked
# problems(). The matrix is kept as $REPORT_DIR/<job>.<tag>.json (and .xml
# for JUnit, .txt for the gate's output); gate_said holds its last line.
run_gate() {
	local mode=$1 tag=$2 count rc
	count=$(job_nodes | grep -c .)
	report="$REPORT_DIR/${SLURM_JOB_ID:-job}.$tag"
	local extra=()
	[[ -n $SPEC ]] && extra=(--spec "$SPEC")
	[[ -n $TOKEN_FILE ]] && extra+=(--token-file "$TOKEN_FILE")
	"$RDMAMESH" gate --coordinator "$COORDINATOR" "${extra[@]}" --hosts "$SLURM_JOB_NODELIST" --mode "$mode" \
		--budget "$BUDGET" --timeout "$TIMEOUT" --json "$report.json" --junit "$report.xml" >"$report.txt" 2>&1
	rc=$?
	gate_said=$(grep . "$report.txt" 2>/dev/null | tail -n 1 | cut -c 1-160)
	log "gate over $count nodes ($mode): exit $rc, report $report.txt"
	return "$rc"
}

# blamed prints "node<TAB>what" for every node the report's suspects name
# as the culprit (kind node or hca), "what" naming the HCA first:
# "mlx5_1 port-down". A rail suspect is a switch, a pair suspect does not
# say which end is at fault; draining either would punish healthy nodes.
blamed() {
	jq -r '[.suspects[]? | select(.kind == "node" or .kind == "hca")] | group_by(.node)[] |
		[.[0].node, ([.[] | (if .kind == "hca" then .device else "node" end) + " " +
			(if (.class // "") != "" then .class else (.verdict // "bad") end)] | unique | join(", "))] | @tsv' \
		"$report.json" 2>/dev/null
}

# drain_blamed WHO drains every blamed node with a reason that names the
# HCA first, so that sinfo -R's 20 columns show it: "mlx5_1 port-down;
# rdmamesh job 42". It prints what it drained ("node-03 mlx5_1 port-down")
# for the job's comment, and tells pending jobs that asked for those nodes.
drain_blamed() {
	local who=$1 node what done=()
	[[ $DRAIN == yes ]] || return 0
	while IFS=$'\t' read -r node what; do
		[[ -n $node ]] || continue
		if scontrol update NodeName="$node" State=DRAIN Reason="$what; rdmamesh $who"; then
			log "drained $node: $what"
			done+=("$node $what")
		else
			log "could not drain $node ($what)"
		fi
	done < <(blamed)
	((${#done[@]} > 0)) || return 0
	local sep='' d
	for d in "${done[@]}"; do
		printf '%s%s' "$sep" "$d"
		sep='; '
	done
	echo
	tell_pinned_jobs "${done[@]}"
}

# tell_pinned_jobs "NODE WHAT"... comments pending jobs that asked for one
# of the drained nodes by name (sbatch -w): Slurm only says ReqNodeNotAvail.
tell_pinned_jobs() {
	command -v squeue >/dev/null 2>&1 || return 0
	local id req n entry
	while read -r id req; do
		[[ $id == "${SLURM_JOB_ID:-}" || -z $req || $req == "(null)" ]] && continue
		for n in $(scontrol show hostnames "$req" 2>/dev/null); do
			for entry in "$@"; do
				if [[ ${entry%% *} == "$n" ]]; then
					scontrol update JobId="$id" AdminComment="rdmamesh: requested node $n is drained (${entry#* }, found in job $job)" >/dev/null 2>&1 &&
						log "told pending job $id that $n is drained"
				fi
			done
		done
	done < <(squeue -h -t PENDING -o '%i %n' 2>/dev/null)
}

# to_seconds turns a Go duration of h, m and s (10m, 1m30s) into seconds.
to_seconds() {
	local d=$1 total=0 n u
	while [[ $d =~ ^([0-9]+)([hms])(.*)$ ]]; do
		n=${BASH_REMATCH[1]} u=${BASH_REMATCH[2]} d=${BASH_REMATCH[3]}
		case $u in h) total=$((total + n * 3600)) ;; m) total=$((total + n * 60)) ;; s) total=$((total + n)) ;; esac
	done
	[[ -z $d ]] && echo "$total"
}

# check prints what would make the prolog skip (or, with ON_ERROR=fail,
# requeue) every job, as the user running it; exit 1 when anything is wrong.
check() {
	local me bad=0 p slurm_user timeout_s pet_s rc out
	me=$(id -un)
	echo "rdmamesh-slurm check as $me, config $conf"
	slurm_user=$(scontrol show config 2>/dev/null | sed -n 's/^SlurmUser *= *\([^( ]*\).*/\1/p')
	if [[ -n $slurm_user && $slurm_user != "$me" ]]; then
		echo "WARN  slurmctld runs the scripts as $slurm_user, not $me: runuser -u $slurm_user -- $0 check"
	fi
	if [[ -n $slurm_user ]] && ! scontrol show config 2>/dev/null | grep -q '^PrologSlurmctld *= *.*rdmamesh-prolog.sh'; then
		echo "WARN  slurm.conf has no PrologSlurmctld=.../rdmamesh-prolog.sh: jobs are not gated"
	fi
	while read -r p; do
		[[ -n $p ]] || continue
		echo "FAIL  $p"
		bad=1
	done < <(problems)
	if [[ -n $LOG_FILE ]] && ! { : >>"$LOG_FILE"; } 2>/dev/null; then
		echo "WARN  LOG_FILE $LOG_FILE is not writable by $me: decisions reach only syslog and the job's AdminComment"
	fi
	if [[ -n $TOKEN_FILE && -r $TOKEN_FILE ]] && [[ -n $(find "$TOKEN_FILE" -perm /044 2>/dev/null) ]]; then
		echo "WARN  TOKEN_FILE $TOKEN_FILE is readable by others than its owner: chmod 0400"
	fi
	timeout_s=$(to_seconds "$TIMEOUT")
	pet_s=$(scontrol show config 2>/dev/null | sed -n 's/^PrologEpilogTimeout *= *\([0-9]*\).*/\1/p')
	if [[ -n $timeout_s && -n $pet_s ]] && ((pet_s > 0 && timeout_s >= pet_s)); then
		echo "FAIL  TIMEOUT=$TIMEOUT is not below Slurm's PrologEpilogTimeout=$pet_s s"
		bad=1
	fi
	if [[ -x $RDMAMESH ]]; then
		local extra=()
		[[ -n $TOKEN_FILE && -r $TOKEN_FILE ]] && extra=(--token-file "$TOKEN_FILE")
		out=$("$RDMAMESH" gate --coordinator "$COORDINATOR" "${extra[@]}" --latest --timeout 15s 2>&1 >/dev/null)
		rc=$?
		case $rc in
		0 | 1) echo "ok    coordinator $COORDINATOR answers" ;;
		*)
			echo "FAIL  coordinator $COORDINATOR: gate --latest exit $rc: $(grep . <<<"$out" | tail -n 1)"
			bad=1
			;;
		esac
	fi
	if ((bad)); then
		echo "rdmamesh-slurm check: problems found; with ON_ERROR=$ON_ERROR every multi-node job would $([[ $ON_ERROR == fail ]] && echo be requeued || echo run unchecked)"
		return 1
	fi
	echo "rdmamesh-slurm check: ok"
}

# Run directly (not sourced): the checker.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -u
	case ${1:-} in
	check) check ;;
	*)
		echo "usage: $0 check   (run it as SlurmUser: runuser -u slurm -- $0 check)" >&2
		exit 2
		;;
	esac
fi
