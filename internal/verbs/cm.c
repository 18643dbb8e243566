//go:build verbs && cgo

// RDMA CM connection mode. The CM resolves the peer's IP to a route,
// carries the connection handshake (REQ/REP/RTU) and our private data (the
// peer's buffer address, rkey, sizes and active MTU), and hands back the QP
// attributes for RTR and RTS. The QP itself stays ours (same PD, CQ, MR and
// timed loops as the exchange mode): the CM id has no QP attached, so the
// library reports CONNECT_RESPONSE and leaves the transitions and
// rdma_establish to us. Some RoCE deployments only work through the CM
// (it fills in what a hand-built address vector can get wrong), which is
// why a sweep can ask for it.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "engine.h"
#include "engine_int.h"
#include "session_int.h"
#include "cm_int.h"

struct rm_cm_fn rm_cm_fn;

#define PRIV_LEN 40
static const uint8_t priv_magic[4] = {'R', 'M', 'C', 'M'};

int rm_cm_load(char *msg, int msglen)
{
	void *h = dlopen("librdmacm.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(msg, msglen, "%s", e ? e : "dlopen librdmacm.so.1 failed");
		return -1;
	}
	struct {
		void **slot;
		const char *name;
	} want[] = {
		{(void **)&rm_cm_fn.create_event_channel, "rdma_create_event_channel"},
		{(void **)&rm_cm_fn.destroy_event_channel, "rdma_destroy_event_channel"},
		{(void **)&rm_cm_fn.create_id, "rdma_create_id"},
		{(void **)&rm_cm_fn.destroy_id, "rdma_destroy_id"},
		{(void **)&rm_cm_fn.bind_addr, "rdma_bind_addr"},
		{(void **)&rm_cm_fn.listen, "rdma_listen"},
		{(void **)&rm_cm_fn.resolve_addr, "rdma_resolve_addr"},
		{(void **)&rm_cm_fn.resolve_route, "rdma_resolve_route"},
		{(void **)&rm_cm_fn.connect, "rdma_connect"},
		{(void **)&rm_cm_fn.accept, "rdma_accept"},
		{(void **)&rm_cm_fn.reject, "rdma_reject"},
		{(void **)&rm_cm_fn.establish, "rdma_establish"},
		{(void **)&rm_cm_fn.get_cm_event, "rdma_get_cm_event"},
		{(void **)&rm_cm_fn.ack_cm_event, "rdma_ack_cm_event"},
		{(void **)&rm_cm_fn.get_src_port, "rdma_get_src_port"},
		{(void **)&rm_cm_fn.init_qp_attr, "rdma_init_qp_attr"},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		*want[i].slot = dlsym(h, want[i].name);
		if (!*want[i].slot) {
			snprintf(msg, msglen, "librdmacm.so.1 lacks %s (too old?)", want[i].name);
			return -1;
		}
	}
	msg[0] = 0;
	return 0;
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

// Returns 0, or -1 when the bytes are not ours (another application on
// that port, or an incompatible rdmamesh).
static int priv_decode(const void *data, int len, rm_cm_priv *m)
{
	const uint8_t *p = data;
	memset(m, 0, sizeof(*m));
	if (!p || len < PRIV_LEN || memcmp(p, priv_magic, 4) != 0 || p[4] != 1)
		return -1;
	m->mtu = p[5];
	m->reason = p[6];
	m->addr = get64(p + 8);
	m->len = get64(p + 16);
	m->rkey = get32(p + 24);
	m->lat_size = get32(p + 28);
	m->bw_size = get32(p + 32);
	m->valid = 1;
	return 0;
}

static int cm_fail(rm_status *st, int op, int err)
{
	rm_fail(st, op, err);
	return -1;
}

static int cancelled(rm_sess *s, int64_t gen)
{
	int64_t c = __atomic_load_n(&s->cancel, __ATOMIC_ACQUIRE);
	return c == gen || c == RM_CANCEL_ALL;
}

// next_event waits for the next event on the session's channel and returns
// it acknowledged: the fields we need are copied first, so no event is ever
// held (rdma_destroy_id waits for held events). An event other than want
// fails with its type and status in st.
static int next_event(rm_sess *s, int op, int want, struct rm_cm_id **id, rm_cm_priv *peer,
		      int64_t deadline, int64_t gen, rm_status *st)
{
	struct rm_cm_channel *ch = s->cm_ch;
	for (;;) {
		if (cancelled(s, gen))
			return cm_fail(st, op, ECANCELED);
		int64_t left = deadline - rm_now_ns();
		if (left <= 0)
			return cm_fail(st, op, ETIMEDOUT);
		// Short polls so cancellation is seen within 20 ms.
		struct pollfd p = {.fd = ch->fd, .events = POLLIN};
		int ms = left > 20000000 ? 20 : (int)(left / 1000000) + 1;
		int rc = poll(&p, 1, ms);
		if (rc < 0 && errno != EINTR)
			return cm_fail(st, op, errno);
		if (rc <= 0)
			continue;
		struct rm_cm_event *ev = NULL;
		if (rm_cm_fn.get_cm_event(ch, &ev))
			return cm_fail(st, op, errno);
		int type = ev->event, status = ev->status;
		struct rm_cm_id *evid = ev->id;
		if (peer && ev->conn.private_data)
			priv_decode(ev->conn.private_data, ev->conn.private_data_len, peer);
		rm_cm_fn.ack_cm_event(ev);
		if (type == want && status == 0) {
			if (id)
				*id = evid;
			return 0;
		}
		if (type == RM_CM_EVENT_CONNECT_REQUEST && evid) {
			// A request we did not ask for (a second initiator on our
			// port): turn it away and keep waiting.
			rm_cm_fn.reject(evid, NULL, 0);
			rm_cm_fn.destroy_id(evid);
			continue;
		}
		st->cm_event = type + 1;
		st->cm_status = status;
		return cm_fail(st, op, status < 0 ? -status : EPROTO);
	}
}

static int make_channel(rm_sess *s, rm_status *st)
{
	if (s->cm_ch)
		return 0;
	errno = 0;
	s->cm_ch = rm_cm_fn.create_event_channel();
	if (!s->cm_ch)
		return cm_fail(st, RM_OP_CM_CHANNEL, errno ? errno : ENODEV);
	return 0;
}

static int parse_ip(const char *ip, int port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

// same_device checks the CM bound id to our device (and port, when known):
// the CM picks the device from the IP, which may not be the one we opened.
static int same_device(rm_sess *s, struct rm_cm_id *id, rm_status *st)
{
	if (!id->verbs || strcmp(id->verbs->device->name, s->dev->name) != 0)
		return cm_fail(st, RM_OP_CM_DEVICE, ENXIO);
	struct ibv_qp_attr a;
	int mask = 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	if (rm_cm_fn.init_qp_attr(id, &a, &mask))
		return cm_fail(st, RM_OP_CM_QP_ATTR, errno);
	if (a.port_num != s->port)
		return cm_fail(st, RM_OP_CM_DEVICE, EXDEV);
	return 0;
}

// to_rts moves our QP to RTR and RTS with the attributes the CM resolved,
// path MTU capped at what both ends carry, and our retry settings so both
// connection modes measure alike.
static int to_rts(rm_sess *s, struct rm_cm_id *id, int mtu_cap, rm_status *st)
{
	struct ibv_qp_attr a;
	int mask = 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (rm_cm_fn.init_qp_attr(id, &a, &mask))
		return cm_fail(st, RM_OP_CM_QP_ATTR, errno);
	if (mtu_cap > 0 && (int)a.path_mtu > mtu_cap)
		a.path_mtu = mtu_cap;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	int rc = rm_fn.modify_qp(s->qp, &a, mask);
	if (rc)
		return cm_fail(st, RM_OP_MODIFY_RTR, rc > 0 ? rc : errno);
	s->path_mtu = a.path_mtu;
	memset(&a, 0, sizeof(a));
	mask = 0;
	a.qp_state = IBV_QPS_RTS;
	if (rm_cm_fn.init_qp_attr(id, &a, &mask))
		return cm_fail(st, RM_OP_CM_QP_ATTR, errno);
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	rc = rm_fn.modify_qp(s->qp, &a, mask);
	if (rc)
		return cm_fail(st, RM_OP_MODIFY_RTS, rc > 0 ? rc : errno);
	return 0;
}

static void use_peer(rm_sess *s, const rm_cm_priv *peer)
{
	s->remote_addr = peer->addr;
	s->remote_rkey = peer->rkey;
	s->connected = 1;
}

static void conn_param(rm_sess *s, struct rm_cm_conn_param *cp, const uint8_t *priv)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = priv;
	cp->private_data_len = PRIV_LEN;
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
	cp->qp_num = s->qp->qp_num;
}

int rm_cm_listen(rm_sess *s, const char *ip, int *port, rm_status *st)
{
	struct sockaddr_in sa;
	if (parse_ip(ip, 0, &sa))
		return cm_fail(st, RM_OP_CM_BIND, EINVAL);
	if (make_channel(s, st))
		return -1;
	if (rm_cm_fn.create_id(s->cm_ch, (struct rm_cm_id **)&s->cm_listen, NULL, RM_PS_TCP))
		return cm_fail(st, RM_OP_CM_CHANNEL, errno);
	// Port 0: the kernel picks a free one and the peer learns it from us.
	if (rm_cm_fn.bind_addr(s->cm_listen, (struct sockaddr *)&sa))
		return cm_fail(st, RM_OP_CM_BIND, errno);
	struct rm_cm_id *l = s->cm_listen;
	if (!l->verbs || strcmp(l->verbs->device->name, s->dev->name) != 0)
		return cm_fail(st, RM_OP_CM_DEVICE, ENXIO);
	if (rm_cm_fn.listen(s->cm_listen, 1))
		return cm_fail(st, RM_OP_CM_BIND, errno);
	*port = ntohs(rm_cm_fn.get_src_port(s->cm_listen));
	return 0;
}

int rm_cm_wait_request(rm_sess *s, rm_cm_priv *peer, int64_t timeout_ns, int64_t gen, rm_status *st)
{
	if (!s->cm_listen)
		return cm_fail(st, RM_OP_CM_ACCEPT, ENOTCONN);
	struct rm_cm_id *id = NULL;
	if (next_event(s, RM_OP_CM_ACCEPT, RM_CM_EVENT_CONNECT_REQUEST, &id, peer,
		       rm_now_ns() + timeout_ns, gen, st))
		return -1;
	s->cm_id = id;
	if (!peer->valid) {
		rm_cm_fn.reject(id, NULL, 0);
		return cm_fail(st, RM_OP_CM_ACCEPT, EPROTO);
	}
	return same_device(s, id, st);
}

int rm_cm_reject(rm_sess *s, const rm_cm_priv *mine)
{
	uint8_t priv[PRIV_LEN];
	priv_encode(mine, priv);
	return s->cm_id ? rm_cm_fn.reject(s->cm_id, priv, PRIV_LEN) : -1;
}

int rm_cm_accept(rm_sess *s, const rm_cm_priv *mine, const rm_cm_priv *peer, int mtu_cap,
		 int64_t timeout_ns, int64_t gen, rm_status *st)
{
	if (!s->cm_id)
		return cm_fail(st, RM_OP_CM_ACCEPT, ENOTCONN);
	// RTR and RTS before the REP leaves: the initiator may write as soon
	// as it has our answer.
	if (to_rts(s, s->cm_id, mtu_cap, st))
		return -1;
	uint8_t priv[PRIV_LEN];
	priv_encode(mine, priv);
	struct rm_cm_conn_param cp;
	conn_param(s, &cp, priv);
	if (rm_cm_fn.accept(s->cm_id, &cp))
		return cm_fail(st, RM_OP_CM_ACCEPT, errno);
	if (next_event(s, RM_OP_CM_ACCEPT, RM_CM_EVENT_ESTABLISHED, NULL, NULL, rm_now_ns() + timeout_ns, gen, st))
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
	int ms = timeout_ns / 1000000 > 5000 ? 5000 : (int)(timeout_ns / 1000000) + 1;
	if (make_channel(s, st))
		return -1;
	if (rm_cm_fn.create_id(s->cm_ch, (struct rm_cm_id **)&s->cm_id, NULL, RM_PS_TCP))
		return cm_fail(st, RM_OP_CM_CHANNEL, errno);
	if (rm_cm_fn.resolve_addr(s->cm_id, (struct sockaddr *)&sa, (struct sockaddr *)&da, ms))
		return cm_fail(st, RM_OP_CM_RESOLVE_ADDR, errno);
	if (next_event(s, RM_OP_CM_RESOLVE_ADDR, RM_CM_EVENT_ADDR_RESOLVED, NULL, NULL, deadline, gen, st))
		return -1;
	if (same_device(s, s->cm_id, st))
		return -1;
	if (rm_cm_fn.resolve_route(s->cm_id, ms))
		return cm_fail(st, RM_OP_CM_RESOLVE_ROUTE, errno);
	if (next_event(s, RM_OP_CM_RESOLVE_ROUTE, RM_CM_EVENT_ROUTE_RESOLVED, NULL, NULL, deadline, gen, st))
		return -1;
	uint8_t priv[PRIV_LEN];
	priv_encode(mine, priv);
	struct rm_cm_conn_param cp;
	conn_param(s, &cp, priv);
	if (rm_cm_fn.connect(s->cm_id, &cp))
		return cm_fail(st, RM_OP_CM_CONNECT, errno);
	if (next_event(s, RM_OP_CM_CONNECT, RM_CM_EVENT_CONNECT_RESPONSE, NULL, peer, deadline, gen, st))
		return -1;
	if (!peer->valid)
		return cm_fail(st, RM_OP_CM_CONNECT, EPROTO);
	return 0;
}

int rm_cm_establish(rm_sess *s, const rm_cm_priv *peer, int mtu_cap, rm_status *st)
{
	if (!s->cm_id)
		return cm_fail(st, RM_OP_CM_CONNECT, ENOTCONN);
	if (to_rts(s, s->cm_id, mtu_cap, st))
		return -1;
	if (rm_cm_fn.establish(s->cm_id))
		return cm_fail(st, RM_OP_CM_CONNECT, errno);
	use_peer(s, peer);
	return 0;
}

// rm_cm_close runs before the QP is destroyed; ids first (destroying an
// established one sends the peer a disconnect), then the channel.
void rm_cm_close(rm_sess *s)
{
	if (s->cm_id)
		rm_cm_fn.destroy_id(s->cm_id);
	if (s->cm_listen)
		rm_cm_fn.destroy_id(s->cm_listen);
	if (s->cm_ch)
		rm_cm_fn.destroy_event_channel(s->cm_ch);
	s->cm_id = s->cm_listen = s->cm_ch = NULL;
}
