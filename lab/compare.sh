# rdmamesh vs perftest on the same two VMs, same sizes and iterations,
# interleaved (sourced by lab.sh). Prints per-repetition ratios and their
# median and spread; under emulation the absolute numbers mean nothing.
CMP_SIZE=${LAB_LAT_SIZE:-8}
CMP_ITERS=${LAB_LAT_ITERS:-1000}
CMP_BW_SIZE=${LAB_BW_SIZE:-65536}
CMP_BW_ITERS=${LAB_BW_ITERS:-500}
CMP_TX=${LAB_TX_DEPTH:-64}
# perftest picks no inline data on rxe, while our engine (and perftest on a
# ConnectX) sends small writes inline up to 220 bytes: give ib_write_lat the
# same inline size so both tools post the same work requests.
CMP_INLINE=${LAB_INLINE:-220}
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
	srv=$(vm_start vm1 "echo \$\$ > /tmp/server.pid; exec timeout 300 $1")
	wait_listen vm1 "$3" || {
		vm_wait "$srv" 5
		die "server did not listen: $1"
	}
	out=$(VM_TIMEOUT=330 vm_run vm2 "timeout 300 $2") || rc=$?
	# A server whose client failed may wait forever; stop it (by its pid)
	# so the next try can listen on the port again.
	[ $rc -eq 0 ] || VM_TIMEOUT=20 vm_run vm1 'kill $(cat /tmp/server.pid) 2>/dev/null; true' >/dev/null || true
	vm_wait "$srv" 60 > "$LAB_RUN/last-server.out" || rc=$((rc ? rc : 1))
	printf '%s\n' "$out"
	return $rc
}

# measure NAME OUTFILE PARSER SERVER_CMD CLIENT_CMD PORT: one test, retried
# when it fails or PARSER finds no positive figures in its output. Soft-RoCE
# under an overloaded emulator retransmits spuriously, and rxe occasionally
# NAKs a write resent from the middle of a message (REM_INV_REQ_ERR);
# perftest and rdmamesh both meet this, so each failed try is counted
# against the tool it hit and listed under the table.
measure() {
	local name=$1 out=$2 parse=$3 try val
	for try in $(seq 1 "${LAB_TRIES:-3}"); do
		if pair "$4" "$5" "$6" > "$out"; then
			val=$("$parse" "$out")
			if [ -n "$val" ] && awk -v v="$val" 'BEGIN { n = split(v, a, " "); for (i = 1; i <= n; i++) if (a[i] + 0 <= 0) exit 1 }'; then
				cat "$out" >> "$out.all"
				echo "$val"
				return 0
			fi
			log "$name printed no usable figures (try $try): '$val'"
		else
			log "$name failed (try $try): $(grep -iE 'error|fail|couldn' "$out" | head -3 | tr '\n' ' ')"
		fi
		echo "$name" >> "$LAB_RUN/failures"
		cat "$out" >> "$out.all"
	done
	cat "$out" >&2
	die "$name failed ${LAB_TRIES:-3} times"
}

# Parsers: t_typical and the 99% percentile (usec); BW average (Gb/s);
# our p50 and p99 (usec); our bandwidth (Gb/s).
parse_perf_lat() { awk -v s="$CMP_SIZE" '$1 == s && NF >= 8 {v = $5 " " $8} END {print v}' "$1"; }
parse_perf_bw() { awk -v s="$CMP_BW_SIZE" '$1 == s && NF >= 5 {v = $4} END {print v}' "$1"; }
parse_ours_lat() { awk -F'[:,]' '/"p50_ns"/ {p50 = $2 / 1000} /"p99_ns"/ {p99 = $2 / 1000} END {print p50, p99}' "$1"; }
parse_ours_bw() { awk -F'[:,]' '/"gbps"/ {v = $2 + 0} END {print v}' "$1"; }

perf_lat() {
	local o="-d rxe0 -x 1 -s $CMP_SIZE -n $CMP_ITERS -I $CMP_INLINE -F -p $PERF_PORT"
	measure ib_write_lat "$LAB_RUN/perf-lat.out" parse_perf_lat "ib_write_lat $o" "ib_write_lat $o $(vm_ip 1)" $PERF_PORT
}

perf_bw() {
	local o="-d rxe0 -x 1 -s $CMP_BW_SIZE -n $CMP_BW_ITERS -t $CMP_TX -F --report_gbits -p $PERF_PORT"
	measure ib_write_bw "$LAB_RUN/perf-bw.out" parse_perf_bw "ib_write_bw $o" "ib_write_bw $o $(vm_ip 1)" $PERF_PORT
}

# ours_lat / ours_bw run the two halves separately so each sits right next
# to its perftest counterpart in time.
ours_lat() { ours_run "--size $CMP_SIZE --iters $CMP_ITERS --bw-size 0" lat parse_ours_lat; }

ours_bw() {
	ours_run "--size $CMP_SIZE --iters 10 --warmup 0 --bw-size $CMP_BW_SIZE --bw-iters $CMP_BW_ITERS --tx-depth $CMP_TX" bw parse_ours_bw
}

ours_run() {
	local o="$1 --timeout 150s --json"
	measure "rdmamesh-$2" "$LAB_RUN/ours-$2.json" "$3" "rdmamesh probe --listen :$PROBE_PORT $o" \
		"rdmamesh probe --peer $(vm_ip 1):$PROBE_PORT $o" $PROBE_PORT
}

compare_run() {
	local reps=$1 r pl pb ol ob
	local table="$LAB_RUN/ratios.txt"
	: > "$LAB_RUN/failures"
	rm -f "$LAB_RUN"/*.all
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
	{ print; n++; a[n] = $8; b[n] = $9; c[n] = $10 }
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
	if [ -s "$LAB_RUN/failures" ]; then
		echo "failed tries (retried):"
		sort "$LAB_RUN/failures" | uniq -c
	else
		echo "failed tries: none"
	fi
}
