#!/bin/bash
# make slurm-test: the Slurm scripts against a real Slurm. Installs Debian's
# slurm-wlm and munge, runs slurmctld and four slurmd (node-01..node-04) on
# localhost, each slurmd on its own port with its own spool and pid file
# (Debian builds slurmd with multiple-slurmd support), installs the scripts
# by running the blocks of docs/operations.md marked "slurm-test:" as
# written, and drives jobs against rdmamesh demo coordinators with the same
# node names. The scripts run as Debian's SlurmUser, slurm.
#
# Needs root. Writes /etc/slurm/slurm.conf (refuses when one it did not
# write is there) and what the docs install, removes all of it and stops
# every daemon it started on exit. Daemons, logs and the demo's output stay
# in $STATE when a case fails.
set -uo pipefail
# Messages go to fd 3, the test's stdout, also from inside the commands
# whose output wait_for hides.
exec 3>&1

repo=$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)
STATE=${SLURM_TEST_STATE:-/tmp/rdmamesh-slurm-test}
DEMO_BIN=$repo/bin/rdmamesh
MARK="# written by rdmamesh deploy/slurm/test/slurm-test.sh"
NODES=(node-01 node-02 node-03 node-04)
DECISIONS=/var/log/slurm/rdmamesh-slurm.log
started=$(date +%s)
passed=0
pids=()    # daemons to stop, in start order
demo_pid=
made_token=

say() { echo "slurm-test [$(($(date +%s) - started))s]: $*" >&3; }

# fail REASON prints what the cluster looked like and ends the test.
fail() {
	say "FAIL: $*"
	{
		echo "--- squeue"
		squeue -a -t all -o '%.5i %.9T %.20r %N' 2>&1
		echo "--- sinfo -R"
		sinfo -R 2>&1
		echo "--- $DECISIONS"
		tail -n 20 "$DECISIONS" 2>&1
		echo "--- slurmctld.log (tail)"
		tail -n 20 "$STATE/ctld/slurmctld.log" 2>&1
	} 2>&1 | sed 's/^/    /' >&3
	echo "slurm-test: $passed passed, 1 failed" >&3
	keep_state=1
	exit 1
}

# wait_for SECONDS WHAT CMD... polls CMD until it succeeds; past the
# deadline the test fails saying what it waited for.
wait_for() {
	local secs=$1 what=$2 deadline
	shift 2
	deadline=$(($(date +%s) + secs))
	until "$@" >/dev/null 2>&1; do
		if (($(date +%s) >= deadline)); then
			fail "timed out after ${secs}s waiting for $what"
		fi
		sleep 0.2
	done
}

# --- cleanup --------------------------------------------------------------

keep_state=0
cleanup() {
	local pid
	if [[ -n $demo_pid ]]; then
		kill -CONT "$demo_pid" 2>/dev/null
		kill "$demo_pid" 2>/dev/null
		wait "$demo_pid" 2>/dev/null
	fi
	# slurmd before slurmctld before munged: stop in reverse start order.
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		pid=${pids[i]}
		kill "$pid" 2>/dev/null
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null
	done
	if ((keep_state)) && [[ -d $STATE ]]; then
		cp -a /var/log/rdmamesh/slurm "$STATE/reports" 2>/dev/null
		cp "$DECISIONS" "$STATE/" 2>/dev/null
		say "state, logs and reports kept in $STATE"
	else
		rm -rf "$STATE"
	fi
	if grep -qxF "$MARK" /etc/slurm/slurm.conf 2>/dev/null; then
		rm -f /etc/slurm/slurm.conf
	fi
	rm -f /etc/slurm/rdmamesh-prolog.sh /etc/slurm/rdmamesh-epilog.sh /etc/slurm/rdmamesh-slurm.sh \
		/etc/rdmamesh/slurm.conf /etc/rdmamesh/slurm-token "$DECISIONS"
	rm -rf /var/log/rdmamesh/slurm
	[[ -n $made_token ]] && rm -f /etc/rdmamesh/token
	rmdir /var/log/rdmamesh /etc/rdmamesh 2>/dev/null # only when nothing else is in them
	if [[ -e $STATE.rdmamesh.saved ]]; then
		mv -f "$STATE.rdmamesh.saved" /usr/local/bin/rdmamesh
	else
		rm -f /usr/local/bin/rdmamesh
	fi
}

# --- setup ------------------------------------------------------------------

[[ $(id -u) == 0 ]] || {
	echo "slurm-test: needs root (it installs packages and runs slurmctld)" >&2
	exit 1
}
if [[ -e /etc/slurm/slurm.conf ]] && ! grep -qxF "$MARK" /etc/slurm/slurm.conf; then
	echo "slurm-test: /etc/slurm/slurm.conf exists and was not written by this test; refusing to replace it" >&2
	exit 1
fi
[[ -x $DEMO_BIN ]] || {
	echo "slurm-test: $DEMO_BIN is missing: make build-noverbs" >&2
	exit 1
}
# One run at a time: the test owns /etc/slurm/slurm.conf.
exec 9>/run/rdmamesh-slurm-test.lock
flock -n 9 || {
	echo "slurm-test: another run holds /run/rdmamesh-slurm-test.lock" >&2
	exit 1
}

pkgs=(slurmctld slurmd slurm-client munge jq shellcheck)
installed=$(dpkg-query -W -f '${Status}\n' "${pkgs[@]}" 2>/dev/null | grep -c '^install ok installed$')
if ((installed < ${#pkgs[@]})); then
	say "installing ${pkgs[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null; }; then
		echo "slurm-test: apt-get install ${pkgs[*]} failed" >&2
		exit 1
	fi
fi
getent passwd slurm >/dev/null || {
	echo "slurm-test: Debian's slurm packages did not create the slurm user" >&2
	exit 1
}

say "shellcheck of the scripts and this test"
(cd "$repo/deploy/slurm" && shellcheck -x ./*.sh test/slurm-test.sh) || {
	echo "slurm-test: shellcheck found problems" >&2
	exit 1
}

trap cleanup EXIT
trap 'exit 1' INT TERM
# A run killed before its cleanup leaves state behind; start from nothing.
rm -rf "$STATE" /var/log/rdmamesh/slurm "$DECISIONS"
mkdir -p "$STATE"
chmod 0755 "$STATE"
if [[ -e /usr/local/bin/rdmamesh ]]; then
	cp -a /usr/local/bin/rdmamesh "$STATE.rdmamesh.saved"
fi

# free_port prints a TCP port nothing uses, not yet handed out, below the
# kernel's ephemeral range (where any outgoing connection could take it
# between this check and the daemon's bind).
taken=" "
read -r eph_low _ </proc/sys/net/ipv4/ip_local_port_range
free_port() {
	local p
	for _ in $(seq 200); do
		p=$((10000 + RANDOM % (eph_low - 10000)))
		if [[ $taken != *" $p "* ]] && ! ss -Htan | awk '{print $4}' | grep -q ":$p\$"; then
			taken+="$p "
			echo "$p"
			return 0
		fi
	done
	return 1
}

# munged on a socket of its own, so a system munged (if any) is left alone.
install -d -m 0755 -o munge -g munge "$STATE/munge"
setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F \
	--socket="$STATE/munge/munge.socket" --pid-file="$STATE/munge/munged.pid" \
	--log-file="$STATE/munge/munged.log" --seed-file="$STATE/munge/munged.seed" \
	--key-file=/etc/munge/munge.key >"$STATE/munge/stderr" 2>&1 &
pids+=($!)
wait_for 20 "munged's socket" test -S "$STATE/munge/munge.socket"

ctld_port=$(free_port) || fail "no free port"
install -d -m 0755 -o slurm -g slurm "$STATE/ctld"
{
	echo "$MARK"
	cat <<EOF
ClusterName=rdmameshtest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmUser=slurm
AuthType=auth/munge
AuthInfo=socket=$STATE/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$STATE/ctld
SlurmctldPidFile=$STATE/ctld/slurmctld.pid
SlurmctldLogFile=$STATE/ctld/slurmctld.log
SlurmdSpoolDir=$STATE/%n/spool
SlurmdPidFile=$STATE/%n/slurmd.pid
SlurmdLogFile=$STATE/%n/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
ReturnToService=2
EOF
	# The lines the docs tell operators to add, as written there.
	awk '/^<!-- slurm-test: slurm.conf/ {f = 1; next} f && /^```/ {n++; if (n == 2) exit; next} f && n == 1' \
		"$repo/docs/operations.md"
	for n in "${NODES[@]}"; do
		p=$(free_port) || fail "no free port"
		echo "NodeName=$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$p CPUs=1 State=UNKNOWN"
	done
	echo "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
} >/etc/slurm/slurm.conf
grep -q '^PrologSlurmctld=/etc/slurm/rdmamesh-prolog.sh$' /etc/slurm/slurm.conf ||
	fail "docs/operations.md has no slurm-test: slurm.conf block with PrologSlurmctld"

# docs_block NAME [OUT] runs the sh block the docs mark "slurm-test: NAME",
# from the repository root, as written; its output goes to OUT if given.
docs_block() {
	local code out=${2:-}
	code=$(awk -v m="<!-- slurm-test: $1" 'index($0, m) == 1 {f = 1; next} f && /^```/ {n++; if (n == 2) exit; next} f && n == 1' \
		"$repo/docs/operations.md")
	[[ -n $code ]] || fail "docs/operations.md has no block marked slurm-test: $1"
	say "docs block '$1':"
	while IFS= read -r line; do echo "    \$ $line"; done <<<"$code"
	if [[ -n $out ]]; then
		(cd "$repo" && bash -e -c "$code") >"$out" 2>&1
	else
		(cd "$repo" && bash -e -c "$code") 2>&1
	fi
}

# set_conf NAME VALUE edits /etc/rdmamesh/slurm.conf, as an operator would.
set_conf() {
	if grep -q "^$1=" /etc/rdmamesh/slurm.conf; then
		sed -i "s|^$1=.*|$1=$2|" /etc/rdmamesh/slurm.conf
	else
		echo "$1=$2" >>/etc/rdmamesh/slurm.conf
	fi
}

docs_block install "$STATE/install.log" || {
	cat "$STATE/install.log"
	fail "the docs' install block failed"
}
if [[ ! -e /etc/rdmamesh/token ]]; then
	# The fleet's token as "Install on a node" creates it, root-only.
	head -c 32 /dev/urandom | base64 >/etc/rdmamesh/token
	chmod 0600 /etc/rdmamesh/token
	made_token=1
fi
docs_block token || fail "the docs' token block failed"
set_conf TOKEN_FILE /etc/rdmamesh/slurm-token
# Short limits so that a hung coordinator costs seconds, not minutes.
set_conf TIMEOUT 12s
set_conf BUDGET 10s

say "starting slurmctld and ${#NODES[@]} slurmd"
# In the foreground (-D) as children of this script, so the trap can stop
# them by pid; with -D they also log to stderr, kept next to their logs.
slurmctld -D >"$STATE/ctld/stderr" 2>&1 &
pids+=($!)
# A slurmd registers once at start; one that finds no slurmctld waits for
# its next ping (minutes), so slurmctld must answer first.
ctld_up() {
	if ! kill -0 "${pids[-1]}" 2>/dev/null; then
		fail "slurmctld exited: $(tail -n 3 "$STATE/ctld/stderr")"
	fi
	scontrol ping | grep -q 'is UP'
}
wait_for 30 "slurmctld to answer" ctld_up
for n in "${NODES[@]}"; do
	mkdir -p "$STATE/$n/spool"
	slurmd -D -N "$n" >"$STATE/$n/stderr" 2>&1 &
	pids+=($!)
done
# A slurmd whose registration slurmctld did not take (seen when both start
# within the same second) waits for slurmctld's next ping, up to 100 s away;
# scontrol reconfigure makes every slurmd register again now.
last_poke=$(date +%s)
all_idle() {
	[[ $(sinfo -h -N -t idle -o '%N' | sort -u | grep -c .) == "${#NODES[@]}" ]] && return 0
	if (($(date +%s) - last_poke >= 5)); then
		say "not all nodes registered yet: scontrol reconfigure"
		scontrol reconfigure
		last_poke=$(date +%s)
	fi
	return 1
}
wait_for 60 "four idle nodes in sinfo" all_idle

# --- the demo coordinator ---------------------------------------------------

# start_demo [FAULT]: a demo coordinator whose workers are node-01..node-04,
# on a port of its own; COORDINATOR points at it. Waits for its first sweep.
start_demo() {
	stop_demo
	local args=(demo --nodes "${#NODES[@]}" --listen 127.0.0.1:0)
	[[ -n ${1:-} ]] && args+=(--fault "$1")
	: >"$STATE/demo.out"
	"$DEMO_BIN" "${args[@]}" >"$STATE/demo.out" 2>&1 &
	demo_pid=$!
	wait_for 60 "the demo's first sweep" grep -q '^sweep wall time' "$STATE/demo.out"
	url=$(sed -n 's|^web UI: \(http://[^ ]*\)/$|\1|p' "$STATE/demo.out")
	[[ -n $url ]] || fail "the demo printed no URL: $(cat "$STATE/demo.out")"
	set_conf COORDINATOR "$url"
	say "demo coordinator at $url${1:+ with fault $1}"
}
stop_demo() {
	[[ -n $demo_pid ]] || return 0
	kill -CONT "$demo_pid" 2>/dev/null
	kill "$demo_pid" 2>/dev/null
	wait "$demo_pid" 2>/dev/null
	demo_pid=
}

# --- job helpers ------------------------------------------------------------

submit() { sbatch --parsable -o "$STATE/job-%j.out" "$@" --wrap 'srun hostname'; }
field() { scontrol show job "$1" | sed -n "s/^ *$2=//p" | sed 's/ *$//'; }
state() { scontrol show job "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
is_state() { [[ $(state "$1") == "$2" ]]; }
restarts() { scontrol show job "$1" | grep -o 'Restarts=[0-9]*' | cut -d= -f2; }
is_held() { scontrol show job "$1" | grep -q 'JobState=PENDING Reason=JobHeldAdmin'; }
is_requeued() { [[ $(state "$1") == PENDING && $(restarts "$1") -ge ${2:-1} ]]; }
drained() { sinfo -h -R -o '%N' | grep -c .; }
none_drained() { (($(drained) == 0)); }
node_drained() { [[ -n $(sinfo -h -R -n "$1" -o '%N') ]]; }
no_drain() { (($(drained) == 0)) || fail "$1: nodes drained: $(sinfo -R -h -o '%N: %E')"; }
expect_comment() { # JOB TEXT
	local c
	c=$(field "$1" AdminComment)
	[[ $c == *"$2"* ]] || fail "job $1: AdminComment '$c', want it to contain '$2'"
	say "job $1 AdminComment: $c"
}
# release JOB skips Slurm's two-minute delay before a requeued job may start.
release() { scontrol update JobId="$1" StartTime=now; }
ok() {
	passed=$((passed + 1))
	say "ok: $*"
}

# --- cases ------------------------------------------------------------------

start_demo

say "case: the checker, as SlurmUser, after the docs' steps"
docs_block check "$STATE/check.out" || {
	cat "$STATE/check.out"
	fail "rdmamesh-slurm.sh check failed after the docs' steps"
}
sed 's/^/    /' "$STATE/check.out"
ok "check passes as slurm"

say "case: healthy fabric, a four-node job"
j=$(submit -N4) || fail "sbatch"
wait_for 60 "healthy job $j to complete" is_state "$j" COMPLETED
[[ $(restarts "$j") == 0 ]] || fail "healthy job $j was requeued"
[[ -z $(field "$j" AdminComment) ]] || fail "healthy job $j has a comment: $(field "$j" AdminComment)"
jq -e '.healthy == true' "/var/log/rdmamesh/slurm/$j.prolog.json" >/dev/null ||
	fail "no healthy report /var/log/rdmamesh/slurm/$j.prolog.json"
[[ $(stat -c %U "/var/log/rdmamesh/slurm/$j.prolog.json") == slurm ]] || fail "the report is not written by slurm"
no_drain "healthy"
s=$(submit -N1) || fail "sbatch"
wait_for 30 "one-node job $s to complete" is_state "$s" COMPLETED
[[ ! -e /var/log/rdmamesh/slurm/$s.prolog.txt ]] || fail "one-node job $s was swept"
ok "healthy job $j ran on $(field "$j" NodeList) unrequeued; one-node job $s ran unswept"

say "case: node-03's mlx5_1 down"
start_demo node-03/mlx5_1:down
# A job pinned to node-03 that waits (BeginTime) while node-03 is drained.
pinned=$(submit -N1 -w node-03 --begin=now+3600) || fail "sbatch"
j=$(submit -N3) || fail "sbatch"
wait_for 60 "node-03 to be drained" node_drained node-03
wait_for 30 "job $j to be requeued" is_requeued "$j"
reason=$(sinfo -h -R -n node-03 -o '%E')
say "sinfo -R:"
sinfo -R | sed 's/^/    /'
[[ $reason == "mlx5_1 port-down; rdmamesh job $j" ]] || fail "node-03's drain reason is '$reason'"
[[ $(sinfo -h -R -o '%N') == node-03 ]] || fail "drained: $(sinfo -h -R -o '%N'), want node-03 only"
say "job $j: $(scontrol show job "$j" | grep -o 'JobState=.* Reason=[^ ]*')"
expect_comment "$j" "rdmamesh: requeued: drained node-03 mlx5_1 port-down; report /var/log/rdmamesh/slurm/$j.prolog.txt"
expect_comment "$pinned" "rdmamesh: requested node node-03 is drained (mlx5_1 port-down, found in job $j)"
# A job pinned to node-03 after the drain: Slurm's own reason.
late=$(submit -N1 -w node-03) || fail "sbatch"
pending_reason() { [[ $(squeue -h -j "$1" -o '%r') == *"$2"* ]]; }
wait_for 30 "job $late to pend on ReqNodeNotAvail" pending_reason "$late" ReqNodeNotAvail
say "job $late pinned to node-03 after the drain: $(squeue -h -j "$late" -o '%T %r')"
scancel "$late"
release "$j"
wait_for 60 "requeued job $j to complete" is_state "$j" COMPLETED
[[ $(field "$j" NodeList) == "node-[01-02,04]" ]] || fail "requeued job $j ran on $(field "$j" NodeList)"
scancel "$pinned"
scontrol update NodeName=node-03 State=RESUME
wait_for 30 "node-03 to resume" none_drained
ok "node-03 drained with the HCA first, job $j requeued and ran on $(field "$j" NodeList)"

say "case: a job fails after node-03's mlx5_1 went down under it (the epilog)"
start_demo
j=$(sbatch --parsable -N3 -o "$STATE/job-%j.out" --wrap "
	for _ in \$(seq 300); do [ -e $STATE/epilog-go ] && exit 1; sleep 0.2; done; exit 2") || fail "sbatch"
wait_for 30 "job $j to run" is_state "$j" RUNNING
start_demo node-03/mlx5_1:down
touch "$STATE/epilog-go"
wait_for 30 "job $j to fail" is_state "$j" FAILED
wait_for 30 "the epilog to drain node-03" node_drained node-03
reason=$(sinfo -h -R -n node-03 -o '%E')
[[ $reason == "mlx5_1 port-down; rdmamesh after job $j" ]] || fail "node-03's drain reason is '$reason'"
scontrol update NodeName=node-03 State=RESUME
wait_for 30 "node-03 to resume" none_drained
ok "the epilog of failed job $j drained node-03: $reason"

say "case: coordinator down, ON_ERROR=pass"
stop_demo
j=$(submit -N3) || fail "sbatch"
wait_for 60 "job $j to complete" is_state "$j" COMPLETED
expect_comment "$j" "rdmamesh: ran unchecked: gate exit 3"
no_drain "coordinator down"
ok "job $j ran unchecked and says so; no drain"

say "case: coordinator down for good, ON_ERROR=fail, ON_ERROR_REQUEUES=1"
set_conf ON_ERROR fail
set_conf ON_ERROR_REQUEUES 1
j=$(submit -N3) || fail "sbatch"
wait_for 30 "job $j to be requeued" is_requeued "$j"
expect_comment "$j" "rdmamesh: requeued 1/1, fabric not checked: gate exit 3"
release "$j"
wait_for 30 "job $j to be held" is_held "$j"
expect_comment "$j" "rdmamesh: held after 1 requeues, fabric not checked: gate exit 3"
say "job $j: $(scontrol show job "$j" | grep -o 'JobState=.* Reason=[^ ]*')"
no_drain "ON_ERROR=fail"
scancel "$j"
set_conf ON_ERROR pass
ok "job $j requeued once, then held with a reason; no drain"

say "case: coordinator hung (SIGSTOP), node-03 faulted behind it"
start_demo node-03/mlx5_1:down
kill -STOP "$demo_pid"
j=$(submit -N3) || fail "sbatch"
wait_for 60 "job $j to complete" is_state "$j" COMPLETED
expect_comment "$j" "rdmamesh: ran unchecked: gate exit 3"
no_drain "coordinator hung"
kill -CONT "$demo_pid"
ok "job $j ran after the gate's TIMEOUT; no drain"
# A fresh coordinator for the rest: the resumed one still has the hung
# gate's sweep request queued, which the checker's gate --latest would wait on.
start_demo node-03/mlx5_1:down

# The issue's setup: no report dir, and slurm cannot create one under the
# root-owned /var/log/rdmamesh; then one that root created (mkdir -p).
for how in missing root-owned; do
	say "case: report dir $how, node-03 faulted"
	rm -rf /var/log/rdmamesh/slurm
	if [[ $how == root-owned ]]; then
		mkdir -p /var/log/rdmamesh/slurm
		want="report dir /var/log/rdmamesh/slurm is not writable by slurm"
	else
		want="report dir /var/log/rdmamesh/slurm is missing"
	fi
	if out=$(runuser -u slurm -- /etc/slurm/rdmamesh-slurm.sh check 2>&1); then
		fail "check passed with the report dir $how"
	fi
	grep -q "FAIL  $want" <<<"$out" || fail "check said: $out"
	j=$(submit -N3) || fail "sbatch"
	wait_for 60 "job $j to complete" is_state "$j" COMPLETED
	expect_comment "$j" "rdmamesh: ran unchecked: $want"
	no_drain "report dir $how"
	grep -q "job $j: ran unchecked (ON_ERROR=pass): $want" "$DECISIONS" || fail "$DECISIONS does not tell about job $j"
	ok "report dir $how: job $j ran unchecked and says why, check names it, $DECISIONS has it; no drain"
done
# The docs' step for the report dir, again.
install -d -m 0750 -o slurm -g slurm /var/log/rdmamesh/slurm

say "case: a root-only token, node-03 faulted"
chown root:root /etc/rdmamesh/slurm-token
if out=$(runuser -u slurm -- /etc/slurm/rdmamesh-slurm.sh check 2>&1); then
	fail "check passed with a root-only token"
fi
grep -q "FAIL  TOKEN_FILE /etc/rdmamesh/slurm-token is not readable by slurm" <<<"$out" || fail "check said: $out"
j=$(submit -N3) || fail "sbatch"
wait_for 60 "job $j to complete" is_state "$j" COMPLETED
expect_comment "$j" "rdmamesh: ran unchecked: TOKEN_FILE /etc/rdmamesh/slurm-token is not readable by slurm"
no_drain "token"
ok "job $j ran unchecked and says why; no drain"

say "done in $(($(date +%s) - started))s"
echo "slurm-test: $passed passed, 0 failed"
