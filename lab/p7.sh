# P7 (sourced by lab.sh; `make lab-p7`): wall time of an rdmamesh sweep
# against the per-pair perftest approach of SuperBench's ib-traffic and
# ClusterKit-style runners, on the same VMs, the same directed pairs in
# the same circle-method rounds, the same sizes and iterations.
#
# The perftest side works like those runners: one long-lived agent per
# node (their mpirun rank; here one job per VM through the command queue)
# walks the rounds; in each round every pair runs at once, and within a
# pair A->B then B->A, each direction a fresh ib_write_lat (and in full
# mode ib_write_bw) server on the target and client on the initiator, on a
# port the orchestrator assigned to that test and told both sides (the
# server says "listening" through the shared directory, the client waits
# for it); a barrier closes every round. Every test's start and end are
# logged in the guest, every output parsed.
#
# The rdmamesh side: one sweep (retests 0, warm-up 0 like ib_write_lat)
# through the coordinator's API on workers already running, all ok.
# Repetitions interleave the two (odd: perftest first) so drift in the
# emulator's speed hits both alike.
P7_ITERS=${LAB_P7_ITERS:-1000}
P7_BW_ITERS=${LAB_P7_BW_ITERS:-200}
P7_BW_SIZE=65536
P7_TX=64
P7_INLINE=220
P7_BASE_PORT=18600

# p7_rounds N: the circle method of coordinator/scheduler.AllPairs, one
# line per round: "a:b c:d ..." (a initiates first).
p7_rounds() {
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++) ring[i] = "vm" (i + 1)
		m = n; if (n % 2) ring[m++] = ""
		for (r = 0; r < m - 1; r++) {
			line = ""
			for (i = 0; i < m / 2; i++) {
				a = ring[i]; b = ring[m - 1 - i]
				if (a == "" || b == "") continue
				if (r % 2 == 1 && i == 0) { t = a; a = b; b = t }
				line = line (line == "" ? "" : " ") a ":" b
			}
			print line
			last = ring[m - 1]
			for (i = m - 1; i > 1; i--) ring[i] = ring[i - 1]
			ring[1] = last
		}
	}'
}

# p7_agent_lib: the guest-side functions every agent script starts with.
p7_agent_lib() {
	cat <<'EOF'
up() { cut -d' ' -f1 /proc/uptime; }
# serve NAME PORT CMD...: a server; "ready" once its port listens.
serve() {
	name=$1 port=$2; shift 2
	t0=$(up)
	timeout 300 "$@" > "$D/$name.server" 2>&1 &
	pid=$!
	hex=$(printf %04X "$port") i=0
	until grep -q ":$hex [0-9A-F:]* 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 3000 ] && break; kill -0 $pid 2>/dev/null || break; usleep 10000
	done
	: > "$D/$name.ready"
	wait $pid; rc=$?
	echo "$name server $t0 $(up) $rc" >> "$D/times.$VM"
}
# client NAME CMD...: waits for NAME's server, then runs.
client() {
	name=$1; shift
	i=0; until [ -e "$D/$name.ready" ]; do i=$((i + 1)); [ $i -gt 30000 ] && break; usleep 10000; done
	t0=$(up)
	timeout 300 "$@" > "$D/$name.client" 2>&1; rc=$?
	echo "$name client $t0 $(up) $rc" >> "$D/times.$VM"
}
barrier() {
	t0=$(up)
	: > "$D/barrier.$1.$VM"
	until [ "$(ls "$D" | grep -c "^barrier\.$1\.")" -ge "$N" ]; do usleep 10000; done
	echo "barrier$1 wait $t0 $(up) 0" >> "$D/times.$VM"
}
EOF
}

# p7_agents DIR N MODE: write one agent script per VM into DIR.
p7_agents() {
	local dir=$1 n=$2 mode=$3 r=0 line pair a b k=0 vm i
	local lat="ib_write_lat -d rxe0 -x 1 -F -s 8 -n $P7_ITERS -I $P7_INLINE"
	local bw="ib_write_bw -d rxe0 -x 1 -F --report_gbits -s $P7_BW_SIZE -n $P7_BW_ITERS -t $P7_TX"
	for i in $(seq 1 "$n"); do
		{ echo "D=/lab/p7/$(basename "$dir") VM=vm$i N=$n"; p7_agent_lib; } > "$dir/vm$i.sh"
	done
	while read -r line; do
		for pair in $line; do
			a=${pair%:*} b=${pair#*:}
			# Both directions, one after the other, each test on its own port.
			for dirn in "$a $b" "$b $a"; do
				set -- $dirn
				local tests="lat"
				[ "$mode" = full ] && tests="lat bw"
				for t in $tests; do
					local port=$((P7_BASE_PORT + k)) name="r$r.$t.$1-$2" cmd=$lat
					[ "$t" = bw ] && cmd=$bw
					k=$((k + 1))
					echo "serve $name $port $cmd -p $port" >> "$dir/$2.sh"
					echo "client $name $cmd -p $port $(vm_ip "${2#vm}")" >> "$dir/$1.sh"
				done
			done
		done
		for i in $(seq 1 "$n"); do echo "barrier $r" >> "$dir/vm$i.sh"; done
		r=$((r + 1))
	done < <(p7_rounds "$n")
}

# p7_perftest REP N MODE: one per-pair perftest validation; prints its
# wall seconds and the number of failed tests.
p7_perftest() {
	local rep=$1 n=$2 mode=$3 dir="$LAB_RUN/share/p7/$1" i jobs=() t0 t1 fails
	rm -rf "$dir"
	mkdir -p "$dir"
	p7_agents "$dir" "$n" "$mode"
	t0=$(date +%s.%N)
	for i in $(seq 1 "$n"); do jobs+=("$(vm_start "vm$i" "sh /lab/p7/$rep/vm$i.sh")"); done
	for i in "${jobs[@]}"; do VM_TIMEOUT=1800 vm_wait "$i" 1800 > /dev/null || die "P7: perftest agent $i failed"; done
	t1=$(date +%s.%N)
	fails=$(cat "$dir"/times.* | awk '$2 != "wait" && $5 != 0' | wc -l)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') $fails"
}

# p7_sweep REP N MODE: one rdmamesh sweep of the same pairs; prints its
# wall seconds and the cells not ok.
p7_sweep() {
	local rep=$1 n=$2 mode=$3 id t0 t1 out="$LAB_RUN/p7-sweep-$1.json"
	t0=$(date +%s.%N)
	id=$(nsx "$LAB_RUN/labcheck" start "http://$LAB_NET.1:8080" "mode=$mode" "latency_iters=$P7_ITERS" \
		"bw_iters=$P7_BW_ITERS" "bw_size=$P7_BW_SIZE" "nodes=$(seq -s, -f 'vm%g' 1 "$n")") || die "P7: cannot start a sweep"
	nsx "$LAB_RUN/labcheck" wait "http://$LAB_NET.1:8080" "$id" 1800s "$out" > /dev/null || die "P7: sweep $id did not finish"
	t1=$(date +%s.%N)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') $("$LAB_RUN/labcheck" cellstats "$out" | cut -d' ' -f2)"
}

# p7_perf_stats: per test kind over every repetition, from the agents'
# logs and outputs: tests, mean client process wall, mean measuring time
# (ib_write_lat: iterations x 2 x t_avg, its round trips; ib_write_bw:
# bytes / BW average), and the mean barrier wait per round and VM.
p7_perf_stats() {
	local dir="$LAB_RUN/share/p7" f
	for f in "$dir"/*/*.client; do
		case $f in
		*.lat.*) awk -v it="$P7_ITERS" '$1 == 8 && NF >= 9 { printf "lat %.4f\n", it * 2 * $6 / 1e6 }' "$f" ;;
		*.bw.*) awk -v b=$((P7_BW_SIZE * P7_BW_ITERS)) -v s=$P7_BW_SIZE '$1 == s && NF >= 5 && $4 > 0 { printf "bw %.4f\n", b * 8 / ($4 * 1e9) }' "$f" ;;
		esac
	done > "$LAB_RUN/p7-measure.txt"
	cat "$dir"/*/times.* > "$LAB_RUN/p7-times.txt"
	awk 'FNR == NR { m[$1] += $2; mn[$1]++; next }
		$2 == "client" { split($1, p, "."); k = p[2]; w[k] += $4 - $3; n[k]++ }
		$2 == "wait" { bw += $4 - $3; bn++ }
		END {
			for (k in n) printf "  ib_write_%s: %d tests, %.2f s per process (start to exit) of which ~%.2f s measuring\n",
				k, n[k], w[k] / n[k], mn[k] ? m[k] / mn[k] : 0
			if (bn) printf "  barrier: %.2f s waited per round and VM on average\n", bw / bn
		}' "$LAB_RUN/p7-measure.txt" "$LAB_RUN/p7-times.txt"
}

# p7_run [REPS]: boot (or reuse) the VMs, start the workers, run REPS
# interleaved repetitions of both, print the table and the breakdown.
p7_run() {
	local reps=${1:-3} n=${LAB_P7_VMS:-4} mode=${LAB_P7_MODE:-full} rep p s rounds table="$LAB_RUN/p7.txt"
	[ "$P7_ITERS" -ge 5 ] && [ "$P7_BW_ITERS" -ge 5 ] ||
		die "LAB_P7_ITERS and LAB_P7_BW_ITERS must be at least 5: perftest refuses fewer iterations"
	(cd "$REPO_DIR" && go build -o "$LAB_RUN/labcheck" ./lab/labcheck) || die "building labcheck"
	boot_or_reuse "$n"
	# Warm-up 0 like ib_write_lat; a round's pairs at once, as the
	# per-pair runner runs them.
	RDMAMESH_SWEEP_WARMUP=0 cluster_up "$n" 120s 600s 0 > /dev/null
	rounds=$(p7_rounds "$n" | wc -l)
	rm -rf "$LAB_RUN/share/p7" "$LAB_RUN"/p7-sweep-*.json
	log "P7: $n VMs, $rounds rounds, $((n * (n - 1))) directed pairs, mode $mode: latency 8 B x $P7_ITERS$([ "$mode" = full ] && echo ", bandwidth $P7_BW_SIZE B x $P7_BW_ITERS tx-depth $P7_TX"), $reps repetitions"
	printf '| rep | order | per-pair perftest (s) | failed tests | rdmamesh sweep (s) | cells not ok | rdmamesh / perftest |\n|---|---|---|---|---|---|---|\n' > "$table"
	for rep in $(seq 1 "$reps"); do
		if [ $((rep % 2)) -eq 1 ]; then
			p=$(p7_perftest "$rep" "$n" "$mode") s=$(p7_sweep "$rep" "$n" "$mode") order="perftest first"
		else
			s=$(p7_sweep "$rep" "$n" "$mode") p=$(p7_perftest "$rep" "$n" "$mode") order="rdmamesh first"
		fi
		set -- $p $s
		awk -v r="$rep" -v o="$order" -v pw="$1" -v pf="$2" -v sw="$3" -v sb="$4" \
			'BEGIN { printf "| %d | %s | %.1f | %d | %.1f | %d | %.3f |\n", r, o, pw, pf, sw, sb, sw / pw }' >> "$table"
		log "P7 repetition $rep: $(tail -1 "$table")"
	done
	echo
	echo "P7: rdmamesh sweep vs per-pair perftest, $n VMs ($((n * (n - 1))) directed pairs, $rounds rounds), mode $mode, load $(cut -d' ' -f1-3 /proc/loadavg)"
	cat "$table"
	awk -F'|' 'NR > 2 { pw += $4; sw += $6; r[++n] = $8 + 0 }
		END {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && r[j-1] > r[j]; j--) { t = r[j]; r[j] = r[j-1]; r[j-1] = t }
			printf "\nratio rdmamesh / perftest: median %.3f (%.3f..%.3f), on summed wall time %.3f (target <= 0.2)\n",
				n % 2 ? r[(n+1)/2] : (r[n/2] + r[n/2+1]) / 2, r[1], r[n], sw / pw
			printf "per direction on the critical path (%d rounds x 2 directions): perftest %.2f s, rdmamesh %.2f s\n",
				'"$rounds"', pw / n / ('"$rounds"' * 2), sw / n / ('"$rounds"' * 2)
		}' "$table" | tee -a "$table"
	echo "where the per-pair perftest spends its time:" | tee -a "$table"
	p7_perf_stats | tee -a "$table"
	echo "where rdmamesh spends its time (per cell, mean of every repetition):" | tee -a "$table"
	for f in "$LAB_RUN"/p7-sweep-*.json; do "$LAB_RUN/labcheck" cellstats "$f"; done |
		awk '{ c += $1; l += $3 * $1; b += $4 * $1 } END { printf "  %d cells: ~%.2f s measuring latency and %.2f s bandwidth per cell\n", c, l / c, b / c }' | tee -a "$table"
	sweep_stop
}
