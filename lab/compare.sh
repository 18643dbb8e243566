# rdmamesh vs perftest on the same two VMs, same sizes and iterations,
# interleaved (sourced by lab.sh). Prints per-repetition ratios and their
# median and spread; under emulation the absolute numbers mean nothing.
CMP_SIZE=${LAB_LAT_SIZE:-8}
CMP_ITERS=${LAB_LAT_ITERS:-1000}
CMP_BW_SIZE=${LAB_BW_SIZE:-65536}
CMP_BW_ITERS=${LAB_BW_ITERS:-500}
CMP_TX=${LAB_TX_DEPTH:-64}
PERF_PORT=18515
PROBE_PORT=18516

# wait_listen VM PORT: until something listens on PORT in VM (tcp or tcp6).
wait_listen() {
	local hex
	hex=$(printf '%04X' "$2")
	VM_TIMEOUT=30 vm_run "$1" "i=0; until grep -q ':$hex [0-9A-F:]* 0A' /proc/net/tcp /proc/net/tcp6; do i=\$((i+1)); [ \$i -gt 300 ] && exit 1; usleep 50000; done" >/dev/null
}

# pair SERVER_CMD CLIENT_CMD PORT: run one server/client test vm1 <- vm2,
# print the client's output.
pair() {
	local srv out rc=0
	srv=$(vm_start vm1 "timeout 300 $1")
	wait_listen vm1 "$3" || {
		vm_wait "$srv" 5
		die "server did not listen: $1"
	}
	out=$(VM_TIMEOUT=330 vm_run vm2 "timeout 300 $2") || rc=$?
	vm_wait "$srv" 60 > "$LAB_RUN/last-server.out" || rc=$((rc ? rc : 1))
	printf '%s\n' "$out"
	return $rc
}

perf_lat() {
	local o="-d rxe0 -x 1 -s $CMP_SIZE -n $CMP_ITERS -F -p $PERF_PORT"
	pair "ib_write_lat $o" "ib_write_lat $o $(vm_ip 1)" $PERF_PORT > "$LAB_RUN/perf-lat.out" || {
		cat "$LAB_RUN/perf-lat.out" >&2
		die "ib_write_lat failed"
	}
	# t_typical and the 99% percentile, in usec.
	awk -v s="$CMP_SIZE" '$1 == s && NF >= 8 {print $5, $8}' "$LAB_RUN/perf-lat.out" | tail -1
}

perf_bw() {
	local o="-d rxe0 -x 1 -s $CMP_BW_SIZE -n $CMP_BW_ITERS -t $CMP_TX -F --report_gbits -p $PERF_PORT"
	pair "ib_write_bw $o" "ib_write_bw $o $(vm_ip 1)" $PERF_PORT > "$LAB_RUN/perf-bw.out" || {
		cat "$LAB_RUN/perf-bw.out" >&2
		die "ib_write_bw failed"
	}
	awk -v s="$CMP_BW_SIZE" '$1 == s && NF >= 5 {print $4}' "$LAB_RUN/perf-bw.out" | tail -1
}

# ours_lat / ours_bw run the two halves separately so each sits right next
# to its perftest counterpart in time.
ours_lat() {
	ours_run "--size $CMP_SIZE --iters $CMP_ITERS --bw-size 0" lat
	awk -F'[:,]' '/"p50_ns"/ {p50=$2/1000} /"p99_ns"/ {p99=$2/1000} END {print p50, p99}' "$LAB_RUN/ours-lat.json"
}

ours_bw() {
	ours_run "--size $CMP_SIZE --iters 10 --warmup 0 --bw-size $CMP_BW_SIZE --bw-iters $CMP_BW_ITERS --tx-depth $CMP_TX" bw
	awk -F'[:,]' '/"gbps"/ {print $2}' "$LAB_RUN/ours-bw.json"
}

ours_run() {
	local o="$1 --timeout 150s --json"
	pair "rdmamesh probe --listen :$PROBE_PORT $o" "rdmamesh probe --peer $(vm_ip 1):$PROBE_PORT $o" $PROBE_PORT \
		> "$LAB_RUN/ours-$2.json" || {
		cat "$LAB_RUN/ours-$2.json" >&2
		die "rdmamesh probe failed"
	}
}

compare_run() {
	local reps=$1 r pl pb ol ob
	local table="$LAB_RUN/ratios.txt"
	log "rdmamesh vs perftest: lat ${CMP_SIZE}B x$CMP_ITERS, bw ${CMP_BW_SIZE}B x$CMP_BW_ITERS tx-depth $CMP_TX, $reps repetitions"
	{
		echo "# rep  ours_p50 perf_typ  ours_p99 perf_p99  ours_bw perf_bw   p50/typ  p99/p99  bw/bw"
	} > "$table.raw"
	for r in $(seq 1 "$reps"); do
		# Each measurement sits next to its counterpart, and the order flips
		# every repetition, so drift in the emulator's speed (the host is
		# shared) hits both tools alike.
		if [ $((r % 2)) -eq 1 ]; then
			pl=$(perf_lat); ol=$(ours_lat); ob=$(ours_bw); pb=$(perf_bw)
		else
			ol=$(ours_lat); pl=$(perf_lat); pb=$(perf_bw); ob=$(ours_bw)
		fi
		set -- $ol $ob $pl $pb
		[ $# -eq 6 ] || die "could not parse results (ours: '$ol' '$ob', ib_write_lat: '$pl', ib_write_bw: '$pb')"
		awk -v r="$r" -v o50="$1" -v o99="$2" -v obw="$3" -v p50="$4" -v p99="$5" -v pbw="$6" 'BEGIN {
			printf "%5d  %8.2f %8.2f  %8.2f %8.2f  %7.3f %7.3f   %6.3f   %6.3f   %6.3f\n",
				r, o50, p50, o99, p99, obw, pbw, o50/p50, o99/p99, obw/pbw }' >> "$table.raw"
		log "repetition $r: $(tail -1 "$table.raw")"
	done
	awk '
	function med(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
	}
	/^#/ {print; next}
	{ print; n++; a[n] = $9; b[n] = $10; c[n] = $11 }
	END {
		for (i = 1; i <= n; i++) { x[i] = a[i] } ; m1 = med(x, n); lo1 = x[1]; hi1 = x[n]
		for (i = 1; i <= n; i++) { x[i] = b[i] } ; m2 = med(x, n); lo2 = x[1]; hi2 = x[n]
		for (i = 1; i <= n; i++) { x[i] = c[i] } ; m3 = med(x, n); lo3 = x[1]; hi3 = x[n]
		printf "\nratio                         median   spread (min..max)   target\n"
		printf "latency p50 / t_typical       %6.3f   %.3f..%.3f         <= 1.05\n", m1, lo1, hi1
		printf "latency p99 / 99%%             %6.3f   %.3f..%.3f         <= 1.10\n", m2, lo2, hi2
		printf "bandwidth / BW average        %6.3f   %.3f..%.3f         >= 0.97\n", m3, lo3, hi3
	}' "$table.raw" > "$table"
	echo
	echo "rdmamesh vs perftest (latency in usec one-way, bandwidth in Gb/s; Soft-RoCE under TCG emulation)"
	cat "$table"
}
