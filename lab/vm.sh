# VM and network plumbing for the lab (sourced by lab.sh).
#
# Network: a namespace of our own ($LAB_NS) holds two bridges, each VM has a
# tap on both. br0 ($LAB_NET.1/24, the host's address) is the control
# network: gossip, worker APIs, the coordinator. br1 carries RDMA only (rxe0
# sits on each VM's eth1, $LAB_DNET.0/24), like a separate RoCE fabric, so a
# fault injected on the data path (link down, MTU, loss) never cuts the
# control plane that has to report it. qemu runs inside the namespace so it
# opens its taps there. Nothing leaves it.
#
# Control: the share $LAB_RUN/share is mounted at /lab in every guest; the
# guest's init runs queued command files (see guest-init.sh).

# The data bridge and taps pass jumbo frames, like a switch configured for
# RoCE: a smaller MTU here lets small RDMA writes through and silently drops
# the large ones (the lab's MTU fault case does exactly that to one tap).
LAB_SWITCH_MTU=${LAB_SWITCH_MTU:-9100}

net_up() {
	local n=$1 i
	ip netns del "$LAB_NS" 2>/dev/null || true
	ip netns add "$LAB_NS"
	nsx ip link set lo up
	nsx ip link add br0 type bridge
	nsx ip addr add "$LAB_NET.1/24" dev br0
	nsx ip link set br0 up
	nsx ip link add br1 type bridge
	nsx ip link set br1 mtu "$LAB_SWITCH_MTU"
	nsx ip link set br1 up
	for i in $(seq 1 "$n"); do
		nsx ip tuntap add "tap$i" mode tap
		nsx ip link set "tap$i" master br0 up
		nsx ip tuntap add "dtap$i" mode tap
		if clos_on; then
			nsx ip link set "dtap$i" mtu "$LAB_SWITCH_MTU" up # clos_up moves it onto its leaf
		else
			nsx ip link set "dtap$i" mtu "$LAB_SWITCH_MTU" master br1 up
		fi
	done
}

net_down() {
	clos_down
	ip netns del "$LAB_NS" 2>/dev/null || true
}

nsx() { ip netns exec "$LAB_NS" "$@"; }

# make_initrd appends the freshly built rdmamesh to the cached base archive;
# the kernel unpacks concatenated archives in order.
make_initrd() {
	local bin=$1 stage="$LAB_RUN/app"
	rm -rf "$stage"
	mkdir -p "$stage/usr/bin"
	cp "$bin" "$stage/usr/bin/rdmamesh"
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$LAB_RUN/app.cpio.gz"
	cat "$LAB_CACHE/base.cpio.gz" "$LAB_RUN/app.cpio.gz" > "$LAB_RUN/initrd"
}

vms_up() {
	local n=$1 i kver
	kver=$(cat "$LAB_CACHE/kernel/version")
	mkdir -p "$LAB_RUN/share/state" "$LAB_RUN/share/q" "$LAB_RUN/logs"
	rm -f "$LAB_RUN"/share/state/* "$LAB_RUN"/logs/*
	for i in $(seq 1 "$n"); do
		rm -rf "$LAB_RUN/share/q/vm$i"
		nsx qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m "$LAB_MEM" -nodefaults -no-user-config \
			-display none -no-reboot -daemonize -pidfile "$LAB_RUN/vm$i.pid" \
			-kernel "$LAB_CACHE/kernel/root/boot/vmlinuz-$kver" -initrd "$LAB_RUN/initrd" \
			-append "console=ttyS0 quiet panic=-1 lab.name=vm$i lab.ip=$(vm_ip "$i")/24 lab.dip=$(vm_dip "$i")/24 lab.mtu=$LAB_MTU$(clos_on && echo " lab.dgw=$(clos_vm_gw "$i")")" \
			-serial "file:$LAB_RUN/logs/vm$i.console" \
			-netdev "tap,id=n0,ifname=tap$i,script=no,downscript=no" \
			-device "virtio-net-pci,netdev=n0,mac=52:54:00:77:00:$(printf %02x $((10 + i))),romfile=,addr=0x4" \
			-netdev "tap,id=n1,ifname=dtap$i,script=no,downscript=no" \
			-device "virtio-net-pci,netdev=n1,mac=52:54:00:78:00:$(printf %02x $((10 + i))),romfile=,addr=0x5" \
			-fsdev "local,id=fs0,path=$LAB_RUN/share,security_model=none" \
			-device "virtio-9p-pci,fsdev=fs0,mount_tag=lab" \
			|| die_infra "qemu for vm$i did not start"
	done
	local deadline=$((SECONDS + ${LAB_BOOT_TIMEOUT:-180}))
	for i in $(seq 1 "$n"); do
		until [ -e "$LAB_RUN/share/state/vm$i.ready" ]; do
			if grep -q "lab-init: FAILED" "$LAB_RUN/logs/vm$i.console" 2>/dev/null || [ $SECONDS -gt $deadline ] ||
				! kill -0 "$(cat "$LAB_RUN/vm$i.pid" 2>/dev/null)" 2>/dev/null; then
				tail -30 "$LAB_RUN/logs/vm$i.console" >&2
				die_infra "vm$i did not boot (console: $LAB_RUN/logs/vm$i.console)"
			fi
			sleep 0.2
		done
	done
}

# vm_alive VM: its qemu still runs.
vm_alive() { kill -0 "$(cat "$LAB_RUN/$1.pid" 2>/dev/null)" 2>/dev/null; }

# vms_running N: vm1..vmN are up and answered their boot.
vms_running() {
	local i
	for i in $(seq 1 "$1"); do
		vm_alive "vm$i" && [ -e "$LAB_RUN/share/state/vm$i.ready" ] || return 1
	done
}

vms_down() {
	local f pid i
	for f in "$LAB_RUN"/share/q/*/; do
		[ -d "$f" ] && : > "$f/poweroff"
	done
	for f in "$LAB_RUN"/vm*.pid; do
		[ -e "$f" ] || continue
		pid=$(cat "$f")
		for i in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		rm -f "$f"
	done
}

# vm_start VM CMD: queue CMD in VM, print the job id (VM/ID).
vm_start() {
	local vm=$1 id
	shift
	id=$(date +%s%N)$RANDOM
	printf '%s\n' "$*" > "$LAB_RUN/share/q/$vm/$id.tmp"
	mv "$LAB_RUN/share/q/$vm/$id.tmp" "$LAB_RUN/share/q/$vm/$id.cmd"
	echo "$vm/$id"
}

# vm_wait JOB [TIMEOUT_S]: wait for a job, print its output, return its rc.
# A command the guest never picked up (its .cmd still queued after
# LAB_QUEUE_TIMEOUT seconds) or a VM whose qemu is gone is the lab's
# infrastructure failing, not the command: that stops the run as such.
vm_wait() {
	local job=$1 limit=${2:-300} base="$LAB_RUN/share/q/$1"
	local deadline=$((SECONDS + limit)) pickup=$((SECONDS + ${LAB_QUEUE_TIMEOUT:-90}))
	until [ -e "$base.rc" ]; do
		if ! vm_alive "${job%%/*}"; then
			die_infra "${job%%/*}'s qemu exited (console: $LAB_RUN/logs/${job%%/*}.console)"
		fi
		if [ -e "$base.cmd" ] && [ $SECONDS -gt $pickup ]; then
			tail -5 "$LAB_RUN/logs/${job%%/*}.console" >&2
			die_infra "the 9p command queue of ${job%%/*} did not pick up a command in ${LAB_QUEUE_TIMEOUT:-90}s (load $(cut -d' ' -f1-3 /proc/loadavg))"
		fi
		if [ $SECONDS -gt $deadline ]; then
			cat "$base.out" 2>/dev/null
			log "timeout waiting for $job"
			return 124
		fi
		sleep 0.1
	done
	cat "$base.out"
	return "$(cat "$base.rc")"
}

vm_run() {
	local vm=$1
	shift
	vm_wait "$(vm_start "$vm" "$@")" "${VM_TIMEOUT:-300}"
}
