//go:build verbs && cgo

// The timed loops. Everything between the first and the last timestamp
// runs here, on the calling (locked) thread, so Go's scheduler and cgo
// transitions never land inside a measurement. Every wait is bounded by a
// deadline and by the session's cancel word.
#include <errno.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "engine.h"
#include "engine_int.h"
#include "session_int.h"

#define CTL_LEN 64
#define DONE_STAGING 8

static uint8_t next_seq(rm_sess *s)
{
	// 0 is what a fresh buffer holds, so it never counts as an answer.
	s->seq = s->seq == 255 ? 1 : s->seq + 1;
	return s->seq;
}

static int stopped(rm_sess *s, int64_t gen, int64_t deadline, unsigned *spins,
		   rm_status *st, int op, int64_t iter)
{
	int64_t c = __atomic_load_n(&s->cancel, __ATOMIC_ACQUIRE);
	if (c == gen || c == RM_CANCEL_ALL) {
		st->op = op;
		st->err = ECANCELED;
		st->iter = iter;
		return 1;
	}
	// Reading the clock on every spin would cost more than the poll itself
	// under emulation; a few hundred spins are microseconds.
	if ((++*spins & 255) != 0)
		return 0;
	int64_t now = rm_now_ns();
	if (iter != s->watch_iter) {
		s->watch_iter = iter;
		s->watch_ts = now;
	}
	if (now <= deadline)
		return 0;
	st->op = op;
	st->err = ETIMEDOUT;
	st->iter = iter;
	// A loop that was still advancing was merely slow; one that had stopped
	// lost its peer. The caller tells the two apart by this.
	st->idle_ns = now - s->watch_ts;
	return 1;
}

static void watch_start(rm_sess *s)
{
	s->watch_iter = -1;
	s->watch_ts = rm_now_ns();
}

static int post_write(rm_sess *s, size_t local_off, size_t remote_off, uint32_t len,
		      int signaled, uint64_t wr_id)
{
	struct ibv_sge sge;
	sge.addr = (uintptr_t)(s->buf + local_off);
	sge.length = len;
	sge.lkey = s->mr->lkey;
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	if ((int)len <= s->max_inline)
		wr.send_flags |= IBV_SEND_INLINE;
	wr.wr.rdma.remote_addr = s->remote_addr + remote_off;
	wr.wr.rdma.rkey = s->remote_rkey;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return ibv_post_send(s->qp, &wr, &bad);
}

static int wc_failed(const struct ibv_wc *wc, rm_status *st, int64_t iter)
{
	if (wc->status == IBV_WC_SUCCESS)
		return 0;
	st->op = RM_OP_COMPLETION;
	st->err = 0;
	st->wc_status = wc->status;
	st->iter = iter;
	return 1;
}

static int post_failed(rm_status *st, int rc, int64_t iter)
{
	st->op = RM_OP_POST_SEND;
	st->err = rc > 0 ? rc : (errno ? errno : EIO);
	st->iter = iter;
	return -1;
}

static int not_connected(rm_sess *s, rm_status *st)
{
	if (s->connected)
		return 0;
	rm_fail(st, RM_OP_POST_SEND, ENOTCONN);
	return 1;
}

int rm_sess_latency(rm_sess *s, int warmup, int iters, int64_t *rtt, int64_t timeout_ns,
		    int64_t gen, rm_status *st)
{
	if (not_connected(s, st))
		return -1;
	size_t recv_off = CTL_LEN, send_off = CTL_LEN + s->lat_area;
	volatile uint8_t *recv_last = s->buf + recv_off + s->lat_size - 1;
	volatile uint8_t *send_last = s->buf + send_off + s->lat_size - 1;
	int64_t deadline = rm_now_ns() + timeout_ns;
	watch_start(s);
	int total = warmup + iters;
	int64_t prev = 0;
	unsigned spins = 0;

	// Like ib_write_lat, a sample is the time between two consecutive
	// posts: our write, its completion, the peer's answering write.
	for (int i = 0; i < total; i++) {
		uint8_t v = next_seq(s);
		int64_t t = rm_now_ns();
		if (i > warmup)
			rtt[i - warmup - 1] = t - prev;
		prev = t;
		*send_last = v;
		int rc = post_write(s, send_off, recv_off, s->lat_size, 1, 1);
		if (rc)
			return post_failed(st, rc, i);
		int got_cqe = 0, got_pong = 0;
		while (!got_cqe || !got_pong) {
			if (!got_cqe) {
				struct ibv_wc wc;
				int ne = ibv_poll_cq(s->cq, 1, &wc);
				if (ne < 0) {
					rm_fail(st, RM_OP_POLL_CQ, EIO);
					st->iter = i;
					return -1;
				}
				if (ne > 0) {
					if (wc_failed(&wc, st, i))
						return -1;
					got_cqe = 1;
				}
			}
			if (!got_pong && *recv_last == v)
				got_pong = 1;
			if ((!got_cqe || !got_pong) &&
			    stopped(s, gen, deadline, &spins, st, got_cqe ? RM_OP_WAIT_PONG : RM_OP_WAIT_CQ, i))
				return -1;
		}
	}
	rtt[iters - 1] = rm_now_ns() - prev;
	return 0;
}

static int reap(rm_sess *s, int *outstanding, rm_status *st, int64_t iter)
{
	struct ibv_wc wc[8];
	int ne = ibv_poll_cq(s->cq, 8, wc);
	if (ne < 0) {
		rm_fail(st, RM_OP_POLL_CQ, EIO);
		st->iter = iter;
		return -1;
	}
	for (int i = 0; i < ne; i++)
		if (wc_failed(&wc[i], st, iter))
			return -1;
	*outstanding -= ne;
	return 0;
}

int rm_sess_respond(rm_sess *s, int warmup, int iters, int wait_done, int64_t timeout_ns,
		    int64_t gen, rm_status *st)
{
	if (not_connected(s, st))
		return -1;
	size_t recv_off = CTL_LEN, send_off = CTL_LEN + s->lat_area;
	volatile uint8_t *recv_last = s->buf + recv_off + s->lat_size - 1;
	volatile uint8_t *send_last = s->buf + send_off + s->lat_size - 1;
	int64_t deadline = rm_now_ns() + timeout_ns;
	watch_start(s);
	int total = warmup + iters;
	int outstanding = 0;
	unsigned spins = 0;

	for (int i = 0; i < total; i++) {
		uint8_t v = next_seq(s);
		while (*recv_last != v) {
			if (outstanding && reap(s, &outstanding, st, i))
				return -1;
			if (stopped(s, gen, deadline, &spins, st, RM_OP_WAIT_PING, i))
				return -1;
		}
		*send_last = v;
		while (outstanding >= s->sq_depth - 1) {
			if (reap(s, &outstanding, st, i))
				return -1;
			if (stopped(s, gen, deadline, &spins, st, RM_OP_WAIT_CQ, i))
				return -1;
		}
		int rc = post_write(s, send_off, recv_off, s->lat_size, 1, 1);
		if (rc)
			return post_failed(st, rc, i);
		outstanding++;
	}
	while (outstanding > 0) {
		if (reap(s, &outstanding, st, total))
			return -1;
		if (outstanding > 0 && stopped(s, gen, deadline, &spins, st, RM_OP_WAIT_CQ, total))
			return -1;
	}
	if (!wait_done)
		return 0;

	// The bandwidth stream is one-sided: nothing to do but keep the QP
	// alive until the initiator says it is finished.
	deadline = rm_now_ns() + timeout_ns;
	watch_start(s);
	volatile uint64_t *done = (volatile uint64_t *)s->buf;
	long nap_ns = 50 * 1000;
	while (*done <= s->done_seen) {
		// Nothing in this wait is timed, and a spinning (or often waking)
		// responder would take CPU from the very receive path the stream
		// measures: rxe's tasks on Soft-RoCE, interrupts on a busy host.
		// Back off to 2 ms naps; the marker is seen at most that late.
		struct timespec ts = {0, nap_ns};
		nanosleep(&ts, NULL);
		if (nap_ns < 2 * 1000 * 1000)
			nap_ns *= 2;
		spins |= 255; // every check reads the clock: naps are long
		if (stopped(s, gen, deadline, &spins, st, RM_OP_WAIT_DONE, 0))
			return -1;
	}
	s->done_seen = *done;
	return 0;
}

int rm_sess_bandwidth(rm_sess *s, int iters, int tx_depth, int64_t timeout_ns, int64_t gen,
		      rm_bw_out *out, rm_status *st)
{
	if (not_connected(s, st))
		return -1;
	if (tx_depth > s->sq_depth - 2)
		tx_depth = s->sq_depth - 2;
	if (tx_depth < 1)
		tx_depth = 1;
	// One completion per window (at most per 100 writes), as ib_write_bw
	// does: on Soft-RoCE, refilling half windows measured ~10% below
	// perftest, so the window is refilled whole.
	int mod = tx_depth < 100 ? tx_depth : 100;
	size_t off = CTL_LEN + 2 * s->lat_area;
	int64_t deadline = rm_now_ns() + timeout_ns;
	watch_start(s);
	int64_t posted = 0, completed = 0;
	int since = 0;
	unsigned spins = 0;
	struct ibv_wc wc[16];

	int64_t t0 = rm_now_ns();
	while (completed < iters) {
		while (posted < iters && posted - completed < tx_depth) {
			since++;
			posted++;
			int sig = since == mod || posted == iters;
			int rc = post_write(s, off, off, s->bw_size, sig, sig ? (uint64_t)since : 0);
			if (rc) {
				st->done = completed;
				return post_failed(st, rc, posted - 1);
			}
			if (sig)
				since = 0;
		}
		int ne = ibv_poll_cq(s->cq, 16, wc);
		if (ne < 0) {
			rm_fail(st, RM_OP_POLL_CQ, EIO);
			st->done = completed;
			return -1;
		}
		for (int i = 0; i < ne; i++) {
			if (wc_failed(&wc[i], st, completed)) {
				st->done = completed;
				return -1;
			}
			completed += (int64_t)wc[i].wr_id;
		}
		if (ne == 0 && stopped(s, gen, deadline, &spins, st, RM_OP_WAIT_CQ, completed)) {
			st->done = completed;
			return -1;
		}
	}
	int64_t t1 = rm_now_ns();
	out->ns = t1 - t0;
	out->bytes = (int64_t)iters * s->bw_size;
	out->msgs = iters;

	s->done_sent++;
	memcpy(s->buf + DONE_STAGING, &s->done_sent, sizeof(s->done_sent));
	int rc = post_write(s, DONE_STAGING, 0, sizeof(s->done_sent), 1, 0);
	if (rc)
		return post_failed(st, rc, iters);
	for (;;) {
		int ne = ibv_poll_cq(s->cq, 1, wc);
		if (ne < 0) {
			rm_fail(st, RM_OP_POLL_CQ, EIO);
			return -1;
		}
		if (ne > 0) {
			if (wc_failed(&wc[0], st, iters))
				return -1;
			return 0;
		}
		if (stopped(s, gen, deadline, &spins, st, RM_OP_WAIT_CQ, iters))
			return -1;
	}
}

// RDMA READ latency, like ib_read_lat: read lat_size bytes of the peer's
// latency send area into ours, one at a time; a sample is the time between
// two consecutive posts (request out, data back, completion), not halved:
// a read is one round trip by nature. The peer does nothing but keep its
// QP alive. Runs after the ping-pong, so both areas are free.
int rm_sess_read_latency(rm_sess *s, int warmup, int iters, int64_t *rtt, int64_t timeout_ns,
			 int64_t gen, rm_status *st)
{
	if (not_connected(s, st))
		return -1;
	size_t off = CTL_LEN + s->lat_area;
	int64_t deadline = rm_now_ns() + timeout_ns;
	watch_start(s);
	int total = warmup + iters;
	int64_t prev = 0;
	unsigned spins = 0;
	for (int i = 0; i < total; i++) {
		int64_t t = rm_now_ns();
		if (i > warmup)
			rtt[i - warmup - 1] = t - prev;
		prev = t;
		struct ibv_sge sge;
		sge.addr = (uintptr_t)(s->buf + off);
		sge.length = s->lat_size;
		sge.lkey = s->mr->lkey;
		struct ibv_send_wr wr, *bad = NULL;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 2;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = s->remote_addr + off;
		wr.wr.rdma.rkey = s->remote_rkey;
		int rc = ibv_post_send(s->qp, &wr, &bad);
		if (rc)
			return post_failed(st, rc, i);
		for (;;) {
			struct ibv_wc wc;
			int ne = ibv_poll_cq(s->cq, 1, &wc);
			if (ne < 0) {
				rm_fail(st, RM_OP_POLL_CQ, EIO);
				st->iter = i;
				return -1;
			}
			if (ne > 0) {
				if (wc_failed(&wc, st, i))
					return -1;
				break;
			}
			if (stopped(s, gen, deadline, &spins, st, RM_OP_WAIT_CQ, i))
				return -1;
		}
	}
	rtt[iters - 1] = rm_now_ns() - prev;
	return 0;
}
