#!/bin/sh
# /init of every lab VM. Brings up eth0 (control: gossip, APIs) and eth1
# (RDMA data) with a Soft-RoCE device on eth1, mounts
# the host's share, then serves the host's command queue: the host drops
# ID.cmd files into /lab/q/NAME/ and reads back ID.out and ID.rc. Commands
# run in the background so a server can run while the host issues more.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /tmp /run /lab /var/run
mount -t tmpfs tmp /tmp

arg() { sed -n "s/.*lab\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
NAME=$(arg name)
IP=$(arg ip)
DIP=$(arg dip)
DGW=$(arg dgw)
MTU=$(arg mtu)
hostname "$NAME"

fail() { echo "lab-init: $*"; echo "lab-init: FAILED" ; sleep 2; poweroff -f; }

# rdma_rxe loads crc32 through the crypto API, which asks /sbin/modprobe for
# crc32_generic: without kmod's modprobe in place `rdma link add` fails with
# "No such file or directory".
for m in virtio_pci virtio_net 9pnet_virtio 9p crc32_generic ib_uverbs rdma_rxe rdma_ucm; do
	modprobe "$m" 2>/dev/null || echo "lab-init: modprobe $m failed (built in?)"
done

ip link set lo up
# The NICs probe in PCI slot order (control first); check by MAC anyway, a
# swapped pair would put RDMA on the control network without any error.
grep -qi '^52:54:00:77' /sys/class/net/eth0/address || fail "eth0 is not the control NIC"
grep -qi '^52:54:00:78' /sys/class/net/eth1/address || fail "eth1 is not the data NIC"
ip addr add "$IP" dev eth0 || fail "eth0 address"
ip link set eth0 up || fail "eth0 up"
ip link set eth1 mtu "$MTU" || fail "eth1 mtu"
ip addr add "$DIP" dev eth1 || fail "eth1 address"
ip link set eth1 up || fail "eth1 up"
# On the routed Clos (lab/clos.sh) the other leaves' subnets are behind this
# VM's leaf; rxe sends RoCE v2 through the routing table like any UDP.
if [ -n "$DGW" ]; then
	ip route add "${DIP%.*.*/*}.0.0/16" via "$DGW" dev eth1 || fail "eth1 route via $DGW"
fi
rdma link add rxe0 type rxe netdev eth1 || fail "rdma link add"

mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none lab /lab || fail "9p mount"
ulimit -l unlimited

Q=/lab/q/$NAME
mkdir -p "$Q"
echo "lab-init: $NAME ready (control $IP, data $DIP mtu $MTU)"
: > "/lab/state/$NAME.ready"

while :; do
	for f in "$Q"/*.cmd; do
		[ -e "$f" ] || continue
		id=${f%.cmd}
		mv "$f" "$id.run" || continue
		(
			sh "$id.run" > "$id.out" 2>&1
			echo $? > "$id.rc.tmp"
			mv "$id.rc.tmp" "$id.rc"
		) &
	done
	[ -e "$Q/poweroff" ] && break
	usleep 100000
done
sync
poweroff -f
