#!/bin/bash
# rdmamesh fabric gate for Slurm. In slurm.conf:
#   PrologSlurmctld=/etc/slurm/rdmamesh-prolog.sh
#
# PrologSlurmctld runs once per job on the slurmctld host, as SlurmUser, so
# one sweep covers the whole allocation (a per-node Prolog would start one
# sweep per node, and a failing Prolog drains the node it ran on, not the
# culprit). Exit 0 lets the job start. Exit non-zero makes Slurm requeue a
# batch job (and cancel an interactive one); the blamed nodes are drained
# first, so the requeued job lands elsewhere.
#
# Only an unhealthy verdict blames the fabric. Anything else that goes wrong,
# here or in the gate, is an infrastructure failure that ON_ERROR decides;
# every outcome but a healthy sweep is written into the job's AdminComment.
set -u
# shellcheck source=rdmamesh-slurm.sh
. "$(dirname "$(readlink -f "$0")")/rdmamesh-slurm.sh"

# could_not_judge WHY: rdmamesh did not judge the fabric. ON_ERROR=pass lets
# the job run; ON_ERROR=fail requeues it, but only ON_ERROR_REQUEUES times
# (a coordinator down for good would otherwise requeue it every two minutes
# forever): then the job is held until someone releases it.
could_not_judge() {
	local why=$1 restarts=${SLURM_JOB_RESTART_COUNT:-0}
	if [[ $ON_ERROR != fail ]]; then
		log "ran unchecked (ON_ERROR=pass): $why"
		job_comment "rdmamesh: ran unchecked: $why"
		exit 0
	fi
	if ((restarts < ON_ERROR_REQUEUES)); then
		log "requeued ($((restarts + 1))/$ON_ERROR_REQUEUES, ON_ERROR=fail): $why"
		job_comment "rdmamesh: requeued $((restarts + 1))/$ON_ERROR_REQUEUES, fabric not checked: $why"
		exit 1
	fi
	# A hold taken now survives the requeue that exit 1 causes.
	scontrol hold "$job" >/dev/null 2>&1 || log "could not hold the job"
	log "held after $restarts requeues (ON_ERROR=fail): $why"
	job_comment "rdmamesh: held after $restarts requeues, fabric not checked: $why; scontrol release $job when fixed"
	exit 1
}

# One node has no pair to test: such jobs run unchecked and unlogged (see
# the docs for the node-local check).
if ! nodes=$(job_nodes 2>/dev/null); then
	could_not_judge "cannot expand the job's nodes ${SLURM_JOB_NODELIST:-(unset)}"
fi
if (($(grep -c . <<<"$nodes") < 2)); then
	exit 0
fi

mapfile -t local_problems < <(problems)
if ((${#local_problems[@]} > 0)); then
	why=$(printf '%s; ' "${local_problems[@]}")
	could_not_judge "${why%; } (see rdmamesh-slurm.sh check)"
fi

run_gate "$MODE" prolog
rc=$?
case $rc in
0)
	exit 0
	;;
1 | 4)
	# 1: cells failed outright; 4: nothing failed, but a confident suspect
	# is slower than its peers. Both take its nodes out of the job.
	what="unhealthy fabric"
	((rc == 4)) && what="fabric below its performance threshold"
	if [[ $DRAIN != yes ]]; then
		job_comment "rdmamesh: requeued: $what (DRAIN=no); report $report.txt"
		exit 1
	fi
	drained=$(drain_blamed "job $job")
	if [[ -n $drained ]]; then
		job_comment "rdmamesh: requeued: drained $drained; report $report.txt"
	else
		log "$what, but no node or HCA is blamed (rail or pair suspects): see $report.txt"
		job_comment "rdmamesh: requeued: $what, no single node to blame; report $report.txt"
	fi
	exit 1
	;;
*)
	could_not_judge "gate exit $rc: ${gate_said:-no output}; report $report.txt"
	;;
esac
