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
die() {
	log "FAIL: $*"
	exit 1
}

vm_ip() { echo "$LAB_NET.$((10 + $1))"; }
vm_dip() { echo "$LAB_DNET.$((10 + $1))"; }
