//go:build verbs && cgo

// The always-on mesh's probe port: one unreliable-datagram QP per HCA
// port that sends small probes to any peer through an address handle and
// answers the peers' probes, so one QP reaches every target without a
// connection each (R-Pingmesh's design).
//
// The C side owns only the data path: buffers, posting, completions. Go
// (ud_cgo.go, udcore.go) decides what to send and to whom, keeps the
// address handles and decodes the messages. One Go goroutine per port
// calls rm_ud_wait in a loop: it blocks on the completion channel (and a
// wake pipe Close writes to), copies each received message out, reposts
// its receive buffer at once and recycles send slots. Sends come from
// other threads; a mutex guards the send slots and the posting.
//
// Buffer layout (one MR): UD_RECV_SLOTS receive slots of UD_RECV_STRIDE
// bytes (the 40-byte GRH area a UD receive always writes first, then the
// message), then UD_SEND_SLOTS send slots of UD_MSG bytes.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "engine.h"
#include "engine_int.h"

#define UD_GRH 40
#define UD_MSG 64
#define UD_RECV_STRIDE 128
#define UD_RECV_SLOTS 256
#define UD_SEND_SLOTS 128
// Room for every receive and send to complete, flushed ones included,
// twice over: a QP reset flushes them all at once.
#define UD_CQE (2 * (UD_RECV_SLOTS + UD_SEND_SLOTS))
#define UD_WANT_INLINE UD_MSG

struct rm_ud {
	rm_dev *dev;
	int port;
	int sgid_index;
	uint32_t qkey;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buf_len;
	int max_inline;
	pthread_mutex_t mu; // send slots, posting, and the QP's state changes
	int free_send[UD_SEND_SLOTS];
	int nfree;
	// Bumped by a reset: work requests carry it in the top half of wr_id,
	// so completions flushed from before the reset are ignored instead of
	// freeing a slot twice.
	uint32_t gen;
	int need_reset; // a receive buffer could not be reposted
};

static uint8_t *recv_slot(rm_ud *u, int i) { return u->buf + (size_t)i * UD_RECV_STRIDE; }

static uint8_t *send_slot(rm_ud *u, int i)
{
	return u->buf + (size_t)UD_RECV_SLOTS * UD_RECV_STRIDE + (size_t)i * UD_MSG;
}

static uint64_t wr_id(rm_ud *u, int slot) { return ((uint64_t)u->gen << 32) | (uint32_t)slot; }

// UD_SEND_BIT marks a send's work request: a completion in error carries
// only wr_id, status and qp_num (rxe zeroes the rest of a flushed receive,
// so its opcode reads as a send), so the kind must come from wr_id.
#define UD_SEND_BIT 0x40000000u

static int post_recv(rm_ud *u, int slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)recv_slot(u, slot), .length = UD_RECV_STRIDE, .lkey = u->mr->lkey};
	struct ibv_recv_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id(u, slot);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(u->qp, &wr, &bad);
}

// bring_up moves a fresh (or reset) QP to RTS, frees every send slot and
// posts every receive buffer. Called with mu held, or before the port is
// shared.
static int bring_up(rm_ud *u, rm_status *st)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = u->port;
	a.qkey = u->qkey;
	int rc = rm_fn.modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	if (rc) {
		rm_fail(st, RM_OP_MODIFY_INIT, rc > 0 ? rc : errno);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	rc = rm_fn.modify_qp(u->qp, &a, IBV_QP_STATE);
	if (rc) {
		rm_fail(st, RM_OP_MODIFY_RTR, rc > 0 ? rc : errno);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	rc = rm_fn.modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (rc) {
		rm_fail(st, RM_OP_MODIFY_RTS, rc > 0 ? rc : errno);
		return -1;
	}
	u->nfree = UD_SEND_SLOTS;
	for (int i = 0; i < UD_SEND_SLOTS; i++)
		u->free_send[i] = i;
	for (int i = 0; i < UD_RECV_SLOTS; i++) {
		rc = post_recv(u, i);
		if (rc) {
			rm_fail(st, RM_OP_POST_SEND, rc);
			return -1;
		}
	}
	return 0;
}

void rm_ud_close(rm_ud *u)
{
	if (!u)
		return;
	if (u->qp)
		rm_fn.destroy_qp(u->qp);
	if (u->cq)
		rm_fn.destroy_cq(u->cq); // every event was acked as it was read
	if (u->ch)
		rm_fn.destroy_comp_channel(u->ch);
	if (u->mr)
		rm_fn.dereg_mr(u->mr);
	free(u->buf);
	pthread_mutex_destroy(&u->mu);
	free(u);
}

static struct ibv_qp *create_qp(rm_ud *u, int inline_size)
{
	struct ibv_qp_init_attr ia;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = u->cq;
	ia.recv_cq = u->cq;
	ia.qp_type = IBV_QPT_UD;
	ia.sq_sig_all = 1; // every send completes, so its slot comes back
	ia.cap.max_send_wr = UD_SEND_SLOTS;
	ia.cap.max_recv_wr = UD_RECV_SLOTS;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = inline_size;
	errno = 0;
	struct ibv_qp *qp = rm_fn.create_qp(u->dev->pd, &ia);
	if (qp)
		u->max_inline = ia.cap.max_inline_data;
	return qp;
}

rm_ud *rm_ud_open(rm_dev *d, int port, int sgid_index, uint32_t qkey, rm_status *st)
{
	rm_ud *u = calloc(1, sizeof(*u));
	if (!u) {
		rm_fail(st, RM_OP_ALLOC, ENOMEM);
		return NULL;
	}
	pthread_mutex_init(&u->mu, NULL);
	u->dev = d;
	u->port = port;
	u->sgid_index = sgid_index;
	u->qkey = qkey;
	u->buf_len = ((size_t)UD_RECV_SLOTS * UD_RECV_STRIDE + (size_t)UD_SEND_SLOTS * UD_MSG + 4095) & ~(size_t)4095;
	if (posix_memalign((void **)&u->buf, 4096, u->buf_len)) {
		u->buf = NULL;
		rm_fail(st, RM_OP_ALLOC, ENOMEM);
		rm_ud_close(u);
		return NULL;
	}
	memset(u->buf, 0, u->buf_len);
	errno = 0;
	u->ch = rm_fn.create_comp_channel(d->ctx);
	if (!u->ch) {
		rm_fail(st, RM_OP_COMP_CHANNEL, errno);
		rm_ud_close(u);
		return NULL;
	}
	// Non-blocking, so reading an event after poll() said so never hangs
	// the poller if another reader (there is none) took it first.
	int fl = fcntl(u->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(u->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		rm_fail(st, RM_OP_COMP_CHANNEL, errno);
		rm_ud_close(u);
		return NULL;
	}
	errno = 0;
	u->cq = rm_fn.create_cq(d->ctx, UD_CQE, NULL, u->ch, 0);
	if (!u->cq) {
		rm_fail(st, RM_OP_CREATE_CQ, errno);
		rm_ud_close(u);
		return NULL;
	}
	errno = 0;
	u->mr = rm_fn.reg_mr(d->pd, u->buf, u->buf_len, IBV_ACCESS_LOCAL_WRITE);
	if (!u->mr) {
		rm_fail(st, RM_OP_REG_MR, errno);
		rm_ud_close(u);
		return NULL;
	}
	u->qp = create_qp(u, UD_WANT_INLINE);
	if (!u->qp)
		u->qp = create_qp(u, 0); // a device without inline data still sends from the slot
	if (!u->qp) {
		rm_fail(st, RM_OP_CREATE_QP, errno);
		rm_ud_close(u);
		return NULL;
	}
	if (bring_up(u, st)) {
		rm_ud_close(u);
		return NULL;
	}
	return u;
}

uint32_t rm_ud_qpn(rm_ud *u) { return u->qp->qp_num; }

void *rm_ud_ah(rm_ud *u, int global, const uint8_t *dgid, int dlid, uint32_t flow_label, rm_status *st)
{
	struct ibv_ah_attr a;
	memset(&a, 0, sizeof(a));
	a.port_num = u->port;
	a.dlid = dlid;
	if (global) {
		a.is_global = 1;
		memcpy(a.grh.dgid.raw, dgid, 16);
		a.grh.sgid_index = u->sgid_index;
		a.grh.hop_limit = 64;
		a.grh.flow_label = flow_label & 0xfffff; /* RoCE v2: the UDP source port's seed */
	}
	errno = 0;
	struct ibv_ah *ah = rm_fn.create_ah(u->dev->pd, &a);
	if (!ah)
		rm_fail(st, RM_OP_CREATE_AH, errno);
	return ah;
}

void rm_ud_ah_free(void *ah)
{
	if (ah)
		rm_fn.destroy_ah(ah);
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

int rm_ud_post(rm_ud *u, void *ah, uint32_t qpn, uint32_t qkey, const uint8_t *msg, int len, int stamp_off,
	       rm_status *st)
{
	if (len > UD_MSG || (stamp_off >= 0 && stamp_off + 8 > len)) {
		rm_fail(st, RM_OP_POST_SEND, EMSGSIZE);
		return -1;
	}
	pthread_mutex_lock(&u->mu);
	if (u->nfree == 0) {
		pthread_mutex_unlock(&u->mu);
		rm_fail(st, RM_OP_POST_SEND, ENOBUFS);
		return -1;
	}
	int slot = u->free_send[--u->nfree];
	uint8_t *b = send_slot(u, slot);
	memcpy(b, msg, len);
	// The send time goes in last, right before the post: the round trip
	// then excludes our own queueing.
	if (stamp_off >= 0)
		put_be64(b + stamp_off, (uint64_t)rm_now_ns());
	struct ibv_sge sge = {.addr = (uintptr_t)b, .length = len, .lkey = u->mr->lkey};
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id(u, slot | UD_SEND_BIT);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | (len <= u->max_inline ? IBV_SEND_INLINE : 0);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	int rc = ibv_post_send(u->qp, &wr, &bad);
	if (rc)
		u->free_send[u->nfree++] = slot;
	pthread_mutex_unlock(&u->mu);
	if (rc) {
		rm_fail(st, RM_OP_POST_SEND, rc);
		return -1;
	}
	return 0;
}

// drain takes what the CQ holds, up to max reports: receives are copied
// out and their buffers reposted at once, send slots return to the pool.
static int drain(rm_ud *u, rm_ud_cqe *out, int max)
{
	int n = 0;
	struct ibv_wc wc[16];
	while (n < max) {
		int want = max - n < 16 ? max - n : 16;
		int got = ibv_poll_cq(u->cq, want, wc);
		if (got <= 0)
			break;
		int64_t now = rm_now_ns();
		for (int i = 0; i < got; i++) {
			uint32_t gen = (uint32_t)(wc[i].wr_id >> 32);
			uint32_t id = (uint32_t)wc[i].wr_id;
			int send = (id & UD_SEND_BIT) != 0;
			int slot = (int)(id & ~UD_SEND_BIT);
			if (gen != u->gen)
				continue; // flushed before a reset; the slot was reclaimed then
			if (slot >= (send ? UD_SEND_SLOTS : UD_RECV_SLOTS))
				continue; // not a work request of ours
			if (!send) {
				if (wc[i].status != IBV_WC_SUCCESS) {
					if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
						out[n++] = (rm_ud_cqe){.kind = RM_UD_RECV_ERR, .status = wc[i].status};
						u->need_reset = 1; // the buffer is not reposted: the check resets the QP
					}
					continue; // a flush: the QP is in error and the check resets it
				}
				rm_ud_cqe *c = &out[n++];
				memset(c, 0, sizeof(*c));
				c->kind = RM_UD_RECV;
				c->ts = now;
				c->src_qp = wc[i].src_qp;
				int len = (int)wc[i].byte_len - UD_GRH;
				c->len = len < 0 ? 0 : len > UD_MSG ? UD_MSG : len;
				memcpy(c->data, recv_slot(u, slot) + UD_GRH, c->len);
				if (post_recv(u, slot))
					u->need_reset = 1; // one buffer short for good: the check resets the QP
			} else {
				pthread_mutex_lock(&u->mu);
				if (gen == u->gen)
					u->free_send[u->nfree++] = slot;
				pthread_mutex_unlock(&u->mu);
				if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR)
					out[n++] = (rm_ud_cqe){.kind = RM_UD_SEND_ERR, .status = wc[i].status};
			}
		}
	}
	return n;
}

// rm_ud_wait returns the completions there are, waiting up to timeout_ms
// for the first; -2 when stop_fd became readable, -1 on an error.
int rm_ud_wait(rm_ud *u, int stop_fd, int timeout_ms, rm_ud_cqe *out, int max, rm_status *st)
{
	int n = drain(u, out, max);
	if (n > 0)
		return n;
	// Arm, then look once more: a completion that landed between the
	// drain and the arm raises no event.
	if (ibv_req_notify_cq(u->cq, 0)) {
		rm_fail(st, RM_OP_COMP_CHANNEL, errno);
		return -1;
	}
	n = drain(u, out, max);
	if (n > 0)
		return n;
	struct pollfd p[2] = {{.fd = u->ch->fd, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};
	int rc = poll(p, 2, timeout_ms);
	if (rc < 0) {
		if (errno == EINTR)
			return 0;
		rm_fail(st, RM_OP_COMP_CHANNEL, errno);
		return -1;
	}
	if (p[1].revents)
		return -2;
	if (p[0].revents & POLLIN) {
		struct ibv_cq *cq;
		void *ctx;
		if (rm_fn.get_cq_event(u->ch, &cq, &ctx) == 0)
			rm_fn.ack_cq_events(cq, 1);
	} else if (p[0].revents) {
		rm_fail(st, RM_OP_COMP_CHANNEL, EIO);
		return -1;
	}
	return drain(u, out, max);
}

// rm_ud_check brings the QP back when it left RTS: a UD QP whose send
// fails goes to SQE, one on a port that died may go to ERR, and neither
// sends nor receives again until it is reset. 0: fine, 1: reset, -1: the
// reset failed (retried at the next check).
int rm_ud_check(rm_ud *u, rm_status *st)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	memset(&a, 0, sizeof(a));
	int rc = rm_fn.query_qp(u->qp, &a, IBV_QP_STATE, &ia);
	if (rc) {
		rm_fail(st, RM_OP_MODIFY_RTS, rc > 0 ? rc : errno);
		return -1;
	}
	if (a.qp_state == IBV_QPS_RTS && !u->need_reset)
		return 0;
	pthread_mutex_lock(&u->mu);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	rc = rm_fn.modify_qp(u->qp, &a, IBV_QP_STATE);
	if (rc) {
		pthread_mutex_unlock(&u->mu);
		rm_fail(st, RM_OP_MODIFY_INIT, rc > 0 ? rc : errno);
		return -1;
	}
	u->gen++;
	u->need_reset = 0;
	rc = bring_up(u, st);
	pthread_mutex_unlock(&u->mu);
	return rc ? -1 : 1;
}
