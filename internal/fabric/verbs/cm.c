//go:build verbs && cgo

// RDMA CM connection mode, spoken directly to the kernel's RDMA CM
// (/dev/infiniband/rdma_cm, the rdma_user_cm.h ABI) rather than through
// librdmacm. The CM resolves the peer's IP to a route, carries the
// connection handshake (REQ/REP/RTU) and our private data (the peer's
// buffer address, rkey, sizes and active MTU), and hands back the QP
// attributes for RTR and RTS. The QP itself stays ours (same PD, CQ, MR
// and timed loops as the exchange mode); the CM id has no QP attached, so
// the transitions and the RTU are ours to do, as with librdmacm when no QP
// is given to it.
//
// Why not librdmacm: it opens a device context of its own on first use and
// keeps it for the life of the process, closing it for a removed device
// only when some other RDMA device is still present. In the lab, a worker
// that had run one RDMA CM test made `rdma link del rxe0` hang until the
// worker exited (the kernel waits for every open context). Here the only
// file a session opens is its CM channel, closed with the session.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_user_cm.h>

#include "engine.h"
#include "engine_int.h"
#include "session_int.h"

#define PRIV_LEN 40
static const uint8_t priv_magic[4] = {'R', 'M', 'C', 'M'};

// Kernel event numbers (enum rdma_cm_event_type).
enum {
	EV_ADDR_RESOLVED = 0,
	EV_ROUTE_RESOLVED = 2,
	EV_CONNECT_REQUEST = 4,
	EV_CONNECT_RESPONSE = 5,
	EV_ESTABLISHED = 9,
};

int rm_cm_abi(void)
{
	FILE *f = fopen("/sys/class/misc/rdma_cm/abi_version", "r");
	int v = -1;
	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

// Private data travels big-endian so both ends agree whatever they run on.
static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = v & 0xff;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = v & 0xff;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void priv_encode(const rm_cm_priv *m, uint8_t *p)
{
	memset(p, 0, PRIV_LEN);
	memcpy(p, priv_magic, 4);
	p[4] = 1; // layout version
	p[5] = (uint8_t)m->mtu;
	p[6] = (uint8_t)m->reason;
	put64(p + 8, m->addr);
	put64(p + 16, m->len);
	put32(p + 24, m->rkey);
	put32(p + 28, m->lat_size);
	put32(p + 32, m->bw_size);
}

// Leaves m->valid 0 when the bytes are not ours (another application on
// that port, or an incompatible rdmamesh).
static void priv_decode(const uint8_t *p, int len, rm_cm_priv *m)
{
	memset(m, 0, sizeof(*m));
	if (len < PRIV_LEN || memcmp(p, priv_magic, 4) != 0 || p[4] != 1)
		return;
	m->mtu = p[5];
	m->reason = p[6];
	m->addr = get64(p + 8);
	m->len = get64(p + 16);
	m->rkey = get32(p + 24);
	m->lat_size = get32(p + 28);
	m->bw_size = get32(p + 32);
	m->valid = 1;
}

static int cm_fail(rm_status *st, int op, int err)
{
	rm_fail(st, op, err);
	return -1;
}

// cmd writes one command; the kernel fills *resp (when the command has one)
// through the pointer inside the command.
static int cmd(rm_sess *s, int op, uint32_t c, void *body, size_t in, size_t out, rm_status *st)
{
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		uint8_t body[sizeof(struct rdma_ucm_accept) + 64];
	} m;
	if (in > sizeof(m.body))
		return cm_fail(st, op, E2BIG);
	m.hdr.cmd = c;
	m.hdr.in = in;
	m.hdr.out = out;
	memcpy(m.body, body, in);
	ssize_t n = write(s->cm_fd, &m, sizeof(m.hdr) + in);
	if (n != (ssize_t)(sizeof(m.hdr) + in))
		return cm_fail(st, op, n < 0 ? errno : EIO);
	return 0;
}

static int cancelled(rm_sess *s, int64_t gen)
{
	int64_t c = __atomic_load_n(&s->cancel, __ATOMIC_ACQUIRE);
	return c == gen || c == RM_CANCEL_ALL;
}

static void destroy_id(rm_sess *s, uint32_t id)
{
	struct rdma_ucm_destroy_id d;
	struct rdma_ucm_destroy_id_resp r;
	rm_status st;
	memset(&d, 0, sizeof(d));
	d.response = (uintptr_t)&r;
	d.id = id;
	cmd(s, RM_OP_CM_CHANNEL, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), sizeof(r), &st);
}

static void reject(rm_sess *s, uint32_t id, const uint8_t *priv, int len)
{
	struct rdma_ucm_reject r;
	rm_status st;
	memset(&r, 0, sizeof(r));
	r.id = id;
	if (priv) {
		memcpy(r.private_data, priv, len);
		r.private_data_len = len;
	}
	cmd(s, RM_OP_CM_ACCEPT, RDMA_USER_CM_CMD_REJECT, &r, sizeof(r), 0, &st);
}

// next_event waits for the next event on the session's channel (bounded by
// the deadline and the cancel word) and fails unless it is want with status
// 0. *id gets the kernel id the event is about (a new one for a request).
static int next_event(rm_sess *s, int op, int want, uint32_t *id, rm_cm_priv *peer,
		      int64_t deadline, int64_t gen, rm_status *st)
{
	for (;;) {
		if (cancelled(s, gen))
			return cm_fail(st, op, ECANCELED);
		int64_t left = deadline - rm_now_ns();
		if (left <= 0)
			return cm_fail(st, op, ETIMEDOUT);
		// Short polls so cancellation is seen within 20 ms.
		struct pollfd p = {.fd = s->cm_fd, .events = POLLIN};
		int ms = left > 20000000 ? 20 : (int)(left / 1000000) + 1;
		int rc = poll(&p, 1, ms);
		if (rc < 0 && errno != EINTR)
			return cm_fail(st, op, errno);
		if (rc <= 0)
			continue;
		struct rdma_ucm_event_resp ev;
		struct rdma_ucm_get_event g = {.response = (uintptr_t)&ev};
		memset(&ev, 0, sizeof(ev));
		if (cmd(s, op, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(ev), st))
			return -1;
		if (peer && ev.param.conn.private_data_len)
			priv_decode(ev.param.conn.private_data, ev.param.conn.private_data_len, peer);
		if ((int)ev.event == want && ev.status == 0) {
			if (id)
				*id = ev.id;
			return 0;
		}
		if (ev.event == EV_CONNECT_REQUEST) {
			// A request we did not ask for (a second initiator on our
			// port): turn it away and keep waiting.
			reject(s, ev.id, NULL, 0);
			destroy_id(s, ev.id);
			continue;
		}
		st->cm_event = ev.event + 1;
		st->cm_status = (int32_t)ev.status;
		int32_t status = (int32_t)ev.status;
		return cm_fail(st, op, status < 0 ? -status : EPROTO);
	}
}

static int open_channel(rm_sess *s, rm_status *st)
{
	if (s->cm_open)
		return 0;
	int fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return cm_fail(st, RM_OP_CM_CHANNEL, errno);
	s->cm_fd = fd;
	s->cm_open = 1;
	return 0;
}

static int create_id(rm_sess *s, uint32_t *id, rm_status *st)
{
	struct rdma_ucm_create_id c;
	struct rdma_ucm_create_id_resp r;
	memset(&c, 0, sizeof(c));
	c.uid = 1;
	c.response = (uintptr_t)&r;
	c.ps = RDMA_PS_TCP;
	c.qp_type = IBV_QPT_RC;
	if (cmd(s, RM_OP_CM_CHANNEL, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(r), st))
		return -1;
	*id = r.id;
	return 0;
}

static int parse_ip(const char *ip, int port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

// query_addr asks which device, port and local address an id is bound to.
static int query_addr(rm_sess *s, uint32_t id, struct rdma_ucm_query_addr_resp *r, rm_status *st)
{
	struct rdma_ucm_query q;
	memset(&q, 0, sizeof(q));
	memset(r, 0, sizeof(*r));
	q.response = (uintptr_t)r;
	q.id = id;
	q.option = RDMA_USER_CM_QUERY_ADDR;
	return cmd(s, RM_OP_CM_QP_ATTR, RDMA_USER_CM_CMD_QUERY, &q, sizeof(q), sizeof(*r), st);
}

// same_device checks the CM bound the id to our device and port: it picks
// the device from the IP, which may belong to another HCA than the one we
// opened.
static int same_device(rm_sess *s, uint32_t id, rm_status *st)
{
	struct rdma_ucm_query_addr_resp r;
	if (query_addr(s, id, &r, st))
		return -1;
	if (r.node_guid != s->dev->guid)
		return cm_fail(st, RM_OP_CM_DEVICE, ENXIO);
	if (r.port_num && r.port_num != s->port)
		return cm_fail(st, RM_OP_CM_DEVICE, EXDEV);
	return 0;
}

// qp_attr gets the CM's attributes for moving our QP to state.
static int qp_attr(rm_sess *s, uint32_t id, int state, struct ibv_qp_attr *a, int *mask, rm_status *st)
{
	struct ib_uverbs_qp_attr k;
	struct rdma_ucm_init_qp_attr q;
	memset(&k, 0, sizeof(k));
	memset(&q, 0, sizeof(q));
	q.response = (uintptr_t)&k;
	q.id = id;
	q.qp_state = state;
	if (cmd(s, RM_OP_CM_QP_ATTR, RDMA_USER_CM_CMD_INIT_QP_ATTR, &q, sizeof(q), sizeof(k), st))
		return -1;
	memset(a, 0, sizeof(*a));
	*mask = k.qp_attr_mask;
	a->qp_state = k.qp_state;
	a->path_mtu = k.path_mtu;
	a->qkey = k.qkey;
	a->rq_psn = k.rq_psn;
	a->sq_psn = k.sq_psn;
	a->dest_qp_num = k.dest_qp_num;
	a->qp_access_flags = k.qp_access_flags;
	memcpy(a->ah_attr.grh.dgid.raw, k.ah_attr.grh.dgid, 16);
	a->ah_attr.grh.flow_label = k.ah_attr.grh.flow_label;
	a->ah_attr.grh.sgid_index = k.ah_attr.grh.sgid_index;
	a->ah_attr.grh.hop_limit = k.ah_attr.grh.hop_limit;
	a->ah_attr.grh.traffic_class = k.ah_attr.grh.traffic_class;
	a->ah_attr.dlid = k.ah_attr.dlid;
	a->ah_attr.sl = k.ah_attr.sl;
	a->ah_attr.src_path_bits = k.ah_attr.src_path_bits;
	a->ah_attr.static_rate = k.ah_attr.static_rate;
	a->ah_attr.is_global = k.ah_attr.is_global;
	a->ah_attr.port_num = k.ah_attr.port_num;
	a->pkey_index = k.pkey_index;
	a->max_rd_atomic = k.max_rd_atomic;
	a->max_dest_rd_atomic = k.max_dest_rd_atomic;
	a->min_rnr_timer = k.min_rnr_timer;
	a->port_num = k.port_num;
	a->timeout = k.timeout;
	a->retry_cnt = k.retry_cnt;
	a->rnr_retry = k.rnr_retry;
	return 0;
}

// to_rts moves our QP to RTR and RTS with the attributes the CM resolved,
// the path MTU capped at what both ends carry, and our retry settings so
// both connection modes measure alike.
static int to_rts(rm_sess *s, uint32_t id, int mtu_cap, rm_status *st)
{
	struct ibv_qp_attr a;
	int mask = 0;
	if (qp_attr(s, id, IBV_QPS_RTR, &a, &mask, st))
		return -1;
	if (mtu_cap > 0 && (int)a.path_mtu > mtu_cap)
		a.path_mtu = mtu_cap;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	int rc = rm_fn.modify_qp(s->qp, &a, mask);
	if (rc)
		return cm_fail(st, RM_OP_MODIFY_RTR, rc > 0 ? rc : errno);
	s->path_mtu = a.path_mtu;
	if (qp_attr(s, id, IBV_QPS_RTS, &a, &mask, st))
		return -1;
	a.timeout = s->dev->ack_timeout;
	a.retry_cnt = s->dev->retry_cnt;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	rc = rm_fn.modify_qp(s->qp, &a, mask);
	if (rc)
		return cm_fail(st, RM_OP_MODIFY_RTS, rc > 0 ? rc : errno);
	return 0;
}

static void conn_param(rm_sess *s, struct rdma_ucm_conn_param *cp, const rm_cm_priv *mine)
{
	memset(cp, 0, sizeof(*cp));
	priv_encode(mine, cp->private_data);
	cp->private_data_len = PRIV_LEN;
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->retry_count = s->dev->retry_cnt;
	cp->rnr_retry_count = 7;
	cp->qp_num = s->qp->qp_num;
	cp->valid = 1;
}

static void use_peer(rm_sess *s, const rm_cm_priv *peer)
{
	s->remote_addr = peer->addr;
	s->remote_rkey = peer->rkey;
	s->connected = 1;
}

int rm_cm_listen(rm_sess *s, const char *ip, int *port, rm_status *st)
{
	struct sockaddr_in sa;
	if (parse_ip(ip, 0, &sa))
		return cm_fail(st, RM_OP_CM_BIND, EINVAL);
	if (open_channel(s, st) || create_id(s, &s->cm_listen, st))
		return -1;
	s->has_listen = 1;
	// Port 0: the kernel picks a free one and the peer learns it from us.
	struct rdma_ucm_bind b;
	memset(&b, 0, sizeof(b));
	b.id = s->cm_listen;
	b.addr_size = sizeof(sa);
	memcpy(&b.addr, &sa, sizeof(sa));
	if (cmd(s, RM_OP_CM_BIND, RDMA_USER_CM_CMD_BIND, &b, sizeof(b), 0, st))
		return -1;
	if (same_device(s, s->cm_listen, st))
		return -1;
	struct rdma_ucm_listen l = {.id = s->cm_listen, .backlog = 1};
	if (cmd(s, RM_OP_CM_BIND, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0, st))
		return -1;
	struct rdma_ucm_query_addr_resp r;
	if (query_addr(s, s->cm_listen, &r, st))
		return -1;
	*port = ntohs(((struct sockaddr_in *)&r.src_addr)->sin_port);
	return 0;
}

int rm_cm_wait_request(rm_sess *s, rm_cm_priv *peer, int64_t timeout_ns, int64_t gen, rm_status *st)
{
	if (!s->has_listen)
		return cm_fail(st, RM_OP_CM_ACCEPT, ENOTCONN);
	uint32_t id = 0;
	if (next_event(s, RM_OP_CM_ACCEPT, EV_CONNECT_REQUEST, &id, peer, rm_now_ns() + timeout_ns, gen, st))
		return -1;
	s->cm_id = id;
	s->has_id = 1;
	if (!peer->valid) {
		reject(s, id, NULL, 0);
		return cm_fail(st, RM_OP_CM_ACCEPT, EPROTO);
	}
	return same_device(s, id, st);
}

int rm_cm_reject(rm_sess *s, const rm_cm_priv *mine)
{
	if (!s->has_id)
		return -1;
	uint8_t priv[PRIV_LEN];
	priv_encode(mine, priv);
	reject(s, s->cm_id, priv, PRIV_LEN);
	return 0;
}

int rm_cm_accept(rm_sess *s, const rm_cm_priv *mine, const rm_cm_priv *peer, int mtu_cap,
		 int64_t timeout_ns, int64_t gen, rm_status *st)
{
	if (!s->has_id)
		return cm_fail(st, RM_OP_CM_ACCEPT, ENOTCONN);
	// RTR and RTS before the REP leaves: the initiator may write as soon
	// as it has our answer.
	if (to_rts(s, s->cm_id, mtu_cap, st))
		return -1;
	struct rdma_ucm_accept a;
	memset(&a, 0, sizeof(a));
	a.uid = 2;
	a.id = s->cm_id;
	conn_param(s, &a.conn_param, mine);
	if (cmd(s, RM_OP_CM_ACCEPT, RDMA_USER_CM_CMD_ACCEPT, &a, sizeof(a), 0, st))
		return -1;
	if (next_event(s, RM_OP_CM_ACCEPT, EV_ESTABLISHED, NULL, NULL, rm_now_ns() + timeout_ns, gen, st))
		return -1;
	use_peer(s, peer);
	return 0;
}

int rm_cm_connect(rm_sess *s, const char *src, const char *dst, int port, const rm_cm_priv *mine,
		  rm_cm_priv *peer, int64_t timeout_ns, int64_t gen, rm_status *st)
{
	struct sockaddr_in sa, da;
	if (parse_ip(src, 0, &sa) || parse_ip(dst, port, &da))
		return cm_fail(st, RM_OP_CM_RESOLVE_ADDR, EINVAL);
	int64_t deadline = rm_now_ns() + timeout_ns;
	uint32_t ms = timeout_ns / 1000000 > 5000 ? 5000 : (uint32_t)(timeout_ns / 1000000) + 1;
	if (open_channel(s, st) || create_id(s, &s->cm_id, st))
		return -1;
	s->has_id = 1;

	struct rdma_ucm_resolve_addr ra;
	memset(&ra, 0, sizeof(ra));
	ra.id = s->cm_id;
	ra.timeout_ms = ms;
	ra.src_size = sizeof(sa);
	ra.dst_size = sizeof(da);
	memcpy(&ra.src_addr, &sa, sizeof(sa));
	memcpy(&ra.dst_addr, &da, sizeof(da));
	if (cmd(s, RM_OP_CM_RESOLVE_ADDR, RDMA_USER_CM_CMD_RESOLVE_ADDR, &ra, sizeof(ra), 0, st))
		return -1;
	if (next_event(s, RM_OP_CM_RESOLVE_ADDR, EV_ADDR_RESOLVED, NULL, NULL, deadline, gen, st))
		return -1;
	if (same_device(s, s->cm_id, st))
		return -1;

	struct rdma_ucm_resolve_route rr = {.id = s->cm_id, .timeout_ms = ms};
	if (cmd(s, RM_OP_CM_RESOLVE_ROUTE, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0, st))
		return -1;
	if (next_event(s, RM_OP_CM_RESOLVE_ROUTE, EV_ROUTE_RESOLVED, NULL, NULL, deadline, gen, st))
		return -1;

	struct rdma_ucm_connect c;
	memset(&c, 0, sizeof(c));
	c.id = s->cm_id;
	conn_param(s, &c.conn_param, mine);
	if (cmd(s, RM_OP_CM_CONNECT, RDMA_USER_CM_CMD_CONNECT, &c, sizeof(c), 0, st))
		return -1;
	if (next_event(s, RM_OP_CM_CONNECT, EV_CONNECT_RESPONSE, NULL, peer, deadline, gen, st))
		return -1;
	if (!peer->valid)
		return cm_fail(st, RM_OP_CM_CONNECT, EPROTO);
	return 0;
}

int rm_cm_establish(rm_sess *s, const rm_cm_priv *peer, int mtu_cap, rm_status *st)
{
	if (!s->has_id)
		return cm_fail(st, RM_OP_CM_CONNECT, ENOTCONN);
	if (to_rts(s, s->cm_id, mtu_cap, st))
		return -1;
	// On the active side, ACCEPT is what sends the RTU.
	struct rdma_ucm_accept a;
	memset(&a, 0, sizeof(a));
	a.id = s->cm_id;
	if (cmd(s, RM_OP_CM_CONNECT, RDMA_USER_CM_CMD_ACCEPT, &a, sizeof(a), 0, st))
		return -1;
	use_peer(s, peer);
	return 0;
}

// rm_cm_close runs before the QP is destroyed: the ids first (destroying an
// established one sends the peer a disconnect), then the channel, which
// drops anything left.
void rm_cm_close(rm_sess *s)
{
	if (!s->cm_open)
		return;
	if (s->has_id)
		destroy_id(s, s->cm_id);
	if (s->has_listen)
		destroy_id(s, s->cm_listen);
	close(s->cm_fd);
	s->cm_open = s->has_id = s->has_listen = 0;
}
