# Resource hygiene under churn (sourced by lab.sh): LAB_CHURN (10000) test
# sessions set up and torn down, about one in eleven tests failing on
# purpose in different places, through one worker's own API: each test is
# two sessions in that worker (initiator and responder, RDMA over rxe
# loopback), so LAB_CHURN/2 tests. labcheck compares the worker's goroutines, open files
# and RSS before and after; this script compares the device's verbs objects
# (`rdma resource show`: PDs, CQs, QPs, MRs, CM ids, contexts).
rdma_counts() {
	# "0: rxe0: pd 2 cq 2 qp 2 cm_id 0 mr 1 ctx 1 srq 0" -> the counts only
	VM_TIMEOUT=30 vm_run vm1 "rdma resource show" | sed -n 's/^[0-9]*: [^:]*: //p'
}

churn_run() {
	local api n=$(( ${LAB_CHURN:-10000} / 2 )) before after
	api="$(vm_ip 1):7947"
	(cd "$REPO_DIR" && go build -o "$LAB_RUN/labcheck" ./lab/labcheck) || die "building labcheck"
	worker_stop vm1
	vm_start vm1 "echo \$\$ > /tmp/worker.pid; exec rdmamesh worker --name vm1 --gossip-bind $(vm_ip 1):7946 \
		--api-listen $api --fabric verbs --gid auto --insecure" > "$LAB_RUN/worker-vm1.job"
	local i=0
	until nsx curl -sf "http://$api/v1/health" >/dev/null; do
		i=$((i + 1))
		[ $i -gt 300 ] && die "churn: the worker in vm1 did not come up"
		sleep 0.2
	done
	# A short run first, so the objects counted are the steady ones (the
	# shared device context, the event watcher's), not first-use setup.
	nsx "$LAB_RUN/labcheck" churn "$api" vm1 200 2 "$LAB_RUN/churn-warmup.json" >/dev/null || die "churn warm-up failed"
	before=$(rdma_counts)
	log "churn: $n tests ($((2 * n)) sessions) through vm1's worker; rdma resources before: $before"
	nsx "$LAB_RUN/labcheck" churn "$api" vm1 "$n" "${LAB_CHURN_CONC:-4}" "$LAB_RUN/churn.json" | tee "$LAB_RUN/churn.txt" \
		|| die "churn: the worker leaked or sessions ended wrongly (see $LAB_RUN/churn.json)"
	after=$(rdma_counts)
	echo "labcheck: rdma resources before: $before" | tee -a "$LAB_RUN/churn.txt"
	echo "labcheck: rdma resources after:  $after" | tee -a "$LAB_RUN/churn.txt"
	[ -n "$before" ] && [ "$before" = "$after" ] || die "churn: verbs objects left behind ($before -> $after)"
	worker_stop vm1
}
