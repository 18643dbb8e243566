#!/bin/bash
# rdmamesh re-check after a job. In slurm.conf:
#   EpilogSlurmctld=/etc/slurm/rdmamesh-epilog.sh
#
# A job that died on a fabric error (NCCL timeouts, "retry exceeded") often
# leaves the broken link for the next job. With EPILOG_CHECK=failed this
# sweeps the job's nodes when the job failed and drains what it blames.
# It always exits 0: it cannot change the finished job, and Slurm only logs
# an EpilogSlurmctld failure.
set -u
# shellcheck source=rdmamesh-slurm.sh
. "$(dirname "$(readlink -f "$0")")/rdmamesh-slurm.sh"

case $EPILOG_CHECK in
never) exit 0 ;;
failed)
	# The job's exit status, "code:signal"; 0:0 is success.
	if [[ ${SLURM_JOB_EXIT_CODE2:-0:0} == 0:0 ]]; then
		exit 0
	fi
	;;
esac
nodes=$(job_nodes 2>/dev/null) || exit 0
if (($(grep -c . <<<"$nodes") < 2)); then
	exit 0
fi
mapfile -t local_problems < <(problems)
if ((${#local_problems[@]} > 0)); then
	why=$(printf '%s; ' "${local_problems[@]}")
	log "epilog re-check skipped: ${why%; } (see rdmamesh-slurm.sh check)"
	exit 0
fi
run_gate "$EPILOG_MODE" epilog
if [[ $? -eq 1 ]]; then
	drain_blamed "after job $job" >/dev/null
fi
exit 0
