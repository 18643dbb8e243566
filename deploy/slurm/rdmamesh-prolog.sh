#!/bin/bash
# rdmamesh fabric gate for Slurm. In slurm.conf:
#   PrologSlurmctld=/etc/slurm/rdmamesh-prolog.sh
#
# PrologSlurmctld runs once per job on the slurmctld host, so one sweep
# covers the whole allocation (a per-node Prolog would start one sweep per
# node, and a failing Prolog drains the node it ran on, not the culprit).
# Exit 0 lets the job start. Exit non-zero makes Slurm requeue a batch job
# (and cancel an interactive one); the blamed nodes are drained first, so
# the requeued job lands elsewhere.
set -u
# shellcheck source=rdmamesh-slurm.sh
. "$(dirname "$(readlink -f "$0")")/rdmamesh-slurm.sh"

run_gate "$MODE" prolog
rc=$?
case $rc in
0)
	exit 0
	;;
1)
	drain_blamed
	exit 1
	;;
*)
	if [[ $ON_ERROR == fail ]]; then
		log "rdmamesh could not judge the fabric (exit $rc); ON_ERROR=fail: requeueing the job"
		exit 1
	fi
	log "rdmamesh could not judge the fabric (exit $rc); ON_ERROR=pass: letting the job run"
	exit 0
	;;
esac
