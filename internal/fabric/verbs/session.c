//go:build verbs && cgo

// One RC QP with its buffer, and its connection to the peer.
//
// Buffer layout, identical on both sides because both derive it from the
// same test parameters (the peer only learns the base address):
//
//   [0, 64)             control: [0,8) end-of-test counter written by the
//                       peer, [8,16) staging for the one we write
//   [64, 64+L)          latency receive area: the peer's pings/pongs land here
//   [64+L, 64+2L)       latency send area
//   [64+2L, 64+2L+B)    bandwidth area: the peer's stream lands here
//
// L is the latency size rounded up to 64 bytes, B the bandwidth size.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "engine.h"
#include "engine_int.h"
#include "session_int.h"

#define CTL_LEN 64
#define WANT_INLINE 220

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

size_t rm_layout_len(int lat_size, int bw_size)
{
	return CTL_LEN + 2 * round64(lat_size) + (size_t)bw_size;
}

void rm_sess_close(rm_sess *s)
{
	if (!s)
		return;
	// The CM ids reference the connection, not the QP (ours is not
	// attached to them), but go first so the peer hears a disconnect.
	rm_cm_close(s);
	if (s->qp)
		rm_fn.destroy_qp(s->qp);
	if (s->mr)
		rm_fn.dereg_mr(s->mr);
	if (s->cq)
		rm_fn.destroy_cq(s->cq);
	free(s->buf);
	free(s);
}

static struct ibv_qp *create_qp(rm_sess *s, int inline_size)
{
	struct ibv_qp_init_attr ia;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = 0;
	ia.cap.max_send_wr = s->sq_depth;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = inline_size;
	errno = 0;
	struct ibv_qp *qp = rm_fn.create_qp(s->dev->pd, &ia);
	if (qp)
		s->max_inline = ia.cap.max_inline_data;
	return qp;
}

rm_sess *rm_sess_open(rm_dev *d, int port, int lat_size, int bw_size, int tx_depth, rm_status *st)
{
	rm_sess *s = calloc(1, sizeof(*s));
	if (!s) {
		rm_fail(st, RM_OP_ALLOC, ENOMEM);
		return NULL;
	}
	s->dev = d;
	s->port = port;
	s->lat_size = lat_size;
	s->lat_area = round64(lat_size);
	s->bw_size = bw_size;
	s->len = rm_layout_len(lat_size, bw_size);
	// Room for a full bandwidth window plus the end marker, and never less
	// than the ping-pong needs.
	s->sq_depth = (tx_depth > 16 ? tx_depth : 16) + 2;

	size_t alloc = (s->len + 4095) & ~(size_t)4095;
	if (posix_memalign((void **)&s->buf, 4096, alloc)) {
		free(s);
		rm_fail(st, RM_OP_ALLOC, ENOMEM);
		return NULL;
	}
	memset(s->buf, 0, alloc);

	errno = 0;
	s->cq = rm_fn.create_cq(d->ctx, s->sq_depth * 2 + 16, NULL, NULL, 0);
	if (!s->cq) {
		rm_fail(st, RM_OP_CREATE_CQ, errno);
		rm_sess_close(s);
		return NULL;
	}
	errno = 0;
	s->mr = rm_fn.reg_mr(d->pd, s->buf, alloc,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!s->mr) {
		rm_fail(st, RM_OP_REG_MR, errno);
		rm_sess_close(s);
		return NULL;
	}
	s->qp = create_qp(s, WANT_INLINE);
	if (!s->qp) {
		// Not every device does inline data; a QP without it still works.
		s->qp = create_qp(s, 0);
	}
	if (!s->qp) {
		rm_fail(st, RM_OP_CREATE_QP, errno);
		rm_sess_close(s);
		return NULL;
	}

	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	int rc = rm_fn.modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc) {
		rm_fail(st, RM_OP_MODIFY_INIT, rc > 0 ? rc : errno);
		rm_sess_close(s);
		return NULL;
	}
	return s;
}

void rm_sess_info(rm_sess *s, uint32_t *qpn, uint64_t *addr, uint32_t *rkey, uint64_t *len)
{
	*qpn = s->qp->qp_num;
	*addr = (uint64_t)(uintptr_t)s->buf;
	*rkey = s->mr->rkey;
	*len = s->len;
}

int rm_sess_connect(rm_sess *s, const rm_conn *c, rm_status *st)
{
	if (c->remote_len < s->len) {
		// The peer registered less than our layout needs: it was opened
		// with other sizes. Writing anyway would fault on its side.
		rm_fail(st, RM_OP_MODIFY_RTR, EMSGSIZE);
		return -1;
	}
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->mtu;
	a.dest_qp_num = c->remote_qpn;
	a.rq_psn = c->remote_psn & 0xffffff;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = c->port;
	a.ah_attr.sl = 0;
	a.ah_attr.src_path_bits = 0;
	a.ah_attr.dlid = c->dlid;
	if (c->global) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, c->dgid, 16);
		a.ah_attr.grh.sgid_index = c->sgid_index;
		a.ah_attr.grh.hop_limit = c->hop_limit;
		a.ah_attr.grh.traffic_class = c->traffic_class;
		a.ah_attr.grh.flow_label = c->flow_label & 0xfffff;
	}
	errno = 0;
	int rc = rm_fn.modify_qp(s->qp, &a,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc) {
		rm_fail(st, RM_OP_MODIFY_RTR, rc > 0 ? rc : errno);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = s->dev->ack_timeout;
	a.retry_cnt = s->dev->retry_cnt;
	a.rnr_retry = 7;
	a.sq_psn = c->local_psn & 0xffffff;
	a.max_rd_atomic = 1;
	errno = 0;
	rc = rm_fn.modify_qp(s->qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (rc) {
		rm_fail(st, RM_OP_MODIFY_RTS, rc > 0 ? rc : errno);
		return -1;
	}
	s->remote_addr = c->remote_addr;
	s->remote_rkey = c->remote_rkey;
	s->path_mtu = c->mtu;
	s->connected = 1;
	return 0;
}

int rm_sess_path_mtu(rm_sess *s) { return s->path_mtu; }

void rm_sess_cancel(rm_sess *s, int64_t gen)
{
	__atomic_store_n(&s->cancel, gen, __ATOMIC_RELEASE);
}
