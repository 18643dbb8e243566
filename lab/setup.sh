#!/usr/bin/env bash
# Prepares everything the lab boots, from nothing, into $LAB_CACHE:
#   host packages (apt), Debian's kernel + modules (apt-get download, unpacked,
#   not installed), and base.cpio.gz: busybox, kmod, iproute2, rdma-core's
#   libibverbs with the rxe provider, perftest, rdmacm-utils and the kernel
#   modules rxe and 9p need, all taken from this host so host-built cgo
#   binaries run unchanged in the guests.
# Every step is skipped when its output is already cached.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# nftables: scenario host steps filter the switch (the bridges) with nft's
# bridge family; the host kernel may have no netem or gact for tc. lldpd
# runs in the routed Clos's leaves (clos.sh), tcpdump checks which UDP
# source port a QP's packets carry.
PKGS=(qemu-system-x86 busybox-static kmod iproute2 rdma-core ibverbs-providers ibverbs-utils
	libibverbs-dev perftest rdmacm-utils cpio gzip util-linux nftables lldpd tcpdump)

install_packages() {
	local missing=()
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing ${missing[*]}"
	[ "$(id -u)" -eq 0 ] || die "need root to apt-get install ${missing[*]}"
	apt-get update -qq
	# No package may start its service on the host: lldpd would advertise on
	# the host's own interfaces, and the lab sends nothing outside its
	# namespaces (policy-rc.d 101: invoke-rc.d starts nothing).
	local policy=/usr/sbin/policy-rc.d placed=
	if [ ! -e $policy ]; then
		printf '#!/bin/sh\nexit 101\n' > $policy && chmod +x $policy && placed=1
	fi
	local rc=0
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
	[ -z "$placed" ] || rm -f $policy
	[ $rc -eq 0 ] || die "apt-get install ${missing[*]} failed (exit $rc)"
}

fetch_kernel() {
	if [ -f "$LAB_CACHE/kernel/version" ] && [ -d "$LAB_CACHE/kernel/root/lib/modules/$(cat "$LAB_CACHE/kernel/version")" ]; then
		return 0
	fi
	local pkg
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)
	if [ -z "$pkg" ]; then
		apt-get update -qq
		pkg=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)
	fi
	[ -n "$pkg" ] || die "cannot find Debian's linux-image package"
	log "downloading $pkg"
	rm -rf "$LAB_CACHE/kernel"
	mkdir -p "$LAB_CACHE/kernel/root"
	(cd "$LAB_CACHE/kernel" && apt-get download -qq -o APT::Sandbox::User=root "$pkg")
	dpkg-deb -x "$LAB_CACHE"/kernel/*.deb "$LAB_CACHE/kernel/root"
	rm -f "$LAB_CACHE"/kernel/*.deb
	basename "$(ls -d "$LAB_CACHE"/kernel/root/lib/modules/*)" > "$LAB_CACHE/kernel/version"
}

# copy_bin copies a program and every library it links into the staging root.
copy_bin() {
	local root=$1 f
	shift
	for f in "$@"; do
		copy_file "$root" "$f"
		ldd "$f" 2>/dev/null | awk '/=>/ {print $3} /^\t\// {print $1}' | while read -r lib; do
			[ -n "$lib" ] && [ -e "$lib" ] && copy_file "$root" "$lib"
		done
	done
}

copy_file() {
	local root=$1 f=$2 real
	[ -e "$root$f" ] && return 0
	mkdir -p "$root$(dirname "$f")"
	real=$(readlink -f "$f")
	cp -a "$real" "$root$f" 2>/dev/null || cp "$real" "$root$f"
}

build_base() {
	local kver key
	kver=$(cat "$LAB_CACHE/kernel/version")
	key=$( (echo "$kver"; dpkg-query -W "${PKGS[@]}" 2>/dev/null; cat "$LAB_DIR/guest-init.sh" "$LAB_DIR/setup.sh") | sha256sum | cut -c1-16)
	if [ -f "$LAB_CACHE/base-$key.cpio.gz" ]; then
		ln -sf "base-$key.cpio.gz" "$LAB_CACHE/base.cpio.gz"
		return 0
	fi
	log "building base initramfs ($kver)"
	local root="$LAB_CACHE/stage"
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,lab,root,lib/modules}
	cp /bin/busybox "$root/bin/busybox"
	for a in sh mount mkdir sed cat echo ls sleep usleep mv rm poweroff hostname sync ps kill grep awk \
		ip ping cp ln head tail wc date tr cut env timeout seq nc dmesg uname true false test chmod \
		pidof sort uniq xargs find stat; do
		ln -sf busybox "$root/bin/$a"
	done
	# kmod's modprobe and iproute2's ip/rdma replace busybox's: rxe needs the
	# real modprobe, and busybox ip lacks what rdma link needs. tc (netem
	# loss) and setpriv (dropping CAP_IPC_LOCK, so a memlock limit bites as
	# root) serve the fault cases and scenarios (netem, ingress + ifb,
	# prio, u32/flower filters with drop); ibv_asyncwatch shows device events.
	copy_bin "$root" /usr/bin/kmod /usr/bin/ip /usr/bin/rdma /usr/sbin/tc /usr/bin/setpriv \
		/usr/bin/ib_write_lat /usr/bin/ib_write_bw /usr/bin/ib_send_lat /usr/bin/rping \
		/usr/bin/ibv_devinfo /usr/bin/ibv_devices /usr/bin/ibv_asyncwatch
	rm -f "$root/bin/ip"
	for a in modprobe insmod lsmod depmod; do ln -sf /usr/bin/kmod "$root/sbin/$a"; done
	ln -sf /usr/bin/ip "$root/sbin/ip"
	# libibverbs finds providers through /etc/libibverbs.d and dlopens them.
	mkdir -p "$root/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
	copy_bin "$root" /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so \
		/usr/lib/x86_64-linux-gnu/libibverbs.so.1 /usr/lib/x86_64-linux-gnu/librdmacm.so.1
	for f in /lib/x86_64-linux-gnu/libgcc_s.so.1 /lib/x86_64-linux-gnu/libnss_files.so.2; do
		[ -e "$f" ] && copy_file "$root" "$f"
	done
	echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
	echo "root:x:0:" > "$root/etc/group"
	printf '127.0.0.1 localhost\n' > "$root/etc/hosts"
	printf 'hosts: files\n' > "$root/etc/nsswitch.conf"

	local kroot="$LAB_CACHE/kernel/root" mods
	# The package's postinst never ran, so the module index must be built.
	[ -f "$kroot/lib/modules/$kver/modules.dep" ] || depmod -b "$kroot" "$kver"
	mods=$(for m in virtio_pci virtio_net 9pnet_virtio 9p crc32_generic ib_uverbs rdma_rxe rdma_ucm \
		sch_netem sch_tbf sch_ingress sch_prio ifb act_mirred act_gact cls_matchall cls_u32 cls_flower; do
		modprobe -d "$kroot" -S "$kver" --show-depends "$m" 2>/dev/null | awk '$1 == "insmod" {print $2}'
	done | sort -u)
	for m in $mods; do
		mkdir -p "$root$(dirname "${m#"$kroot"}")"
		cp "$m" "$root${m#"$kroot"}"
	done
	cp "$kroot/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kver/" 2>/dev/null || true
	depmod -b "$root" "$kver"
	install -m 0755 "$LAB_DIR/guest-init.sh" "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$LAB_CACHE/base-$key.cpio.gz.tmp"
	mv "$LAB_CACHE/base-$key.cpio.gz.tmp" "$LAB_CACHE/base-$key.cpio.gz"
	ln -sf "base-$key.cpio.gz" "$LAB_CACHE/base.cpio.gz"
	rm -rf "$root"
}

mkdir -p "$LAB_CACHE"
install_packages
fetch_kernel
build_base
log "setup done: kernel $(cat "$LAB_CACHE/kernel/version"), $(du -hL "$LAB_CACHE/base.cpio.gz" | cut -f1) base initramfs"
