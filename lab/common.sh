# Shared settings for the lab scripts (sourced, not run).
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$LAB_DIR/.." && pwd)
LAB_CACHE=${LAB_CACHE:-/var/cache/rdmamesh-lab}
LAB_RUN=${LAB_RUN:-$LAB_CACHE/run}
LAB_NS=${LAB_NS:-rdmamesh-lab}
LAB_NET=${LAB_NET:-10.77.0}      # control /24 (gossip, APIs) inside the namespace; .1 is the host
LAB_DNET=${LAB_DNET:-10.78.0}    # RDMA data /24: rxe0 sits on each VM's eth1 here
LAB_MTU=${LAB_MTU:-1500}         # guest data netdev MTU; RoCE active MTU follows (1500 -> 1024)
LAB_MEM=${LAB_MEM:-320}
LAB_BIN=${LAB_BIN:-}             # prebuilt rdmamesh (built with -tags verbs); empty: build it

log() { printf '[lab %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Exit codes: 1 a wrong result (a verdict, a measurement, a check), 75 the
# lab's own infrastructure failed (a VM that did not boot, a command queue
# that stopped answering). The smoke retries the latter once; see smoke.sh.
LAB_INFRA_RC=75

# die stops the run. When the lab's infrastructure was seen failing earlier
# in the run (the marker survives subshells), the failure is reported as
# infrastructure, not as a result: a check that ran against a dead VM
# proves nothing about the product.
die() {
	log "FAIL: $*"
	if [ -s "$LAB_RUN/infra" ]; then
		log "infrastructure failure behind it: $(tail -1 "$LAB_RUN/infra")"
		exit $LAB_INFRA_RC
	fi
	exit 1
}

die_infra() {
	mkdir -p "$LAB_RUN"
	echo "$*" >> "$LAB_RUN/infra"
	log "INFRASTRUCTURE: $*"
	exit $LAB_INFRA_RC
}

vm_ip() { echo "$LAB_NET.$((10 + $1))"; }
vm_dip() {
	if [ -n "${LAB_CLOS:-}" ]; then
		clos_vm_dip "$1"
	else
		echo "$LAB_DNET.$((10 + $1))"
	fi
}
