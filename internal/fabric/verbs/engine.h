//go:build verbs && cgo

// The C half of the verbs engine. libibverbs is reached only through
// function pointers filled by rm_load (dlopen), so a binary built with the
// verbs tag still starts on a host without libibverbs.so.1; only the engine
// refuses to come up there. The header is used for types and for the inline
// data-path calls (post_send, poll_cq) that go through the provider's ops
// table and need no symbol from the library.
#ifndef RDMAMESH_ENGINE_H
#define RDMAMESH_ENGINE_H

#include <stdint.h>
#include <stddef.h>

// Operations a failure can come from. Mirrored by the op* constants in
// classify.go; fabric.go asserts at compile time that they agree.
enum rm_op {
	RM_OP_NONE = 0,
	RM_OP_LOAD = 1,
	RM_OP_GET_DEVICE_LIST = 2,
	RM_OP_OPEN_DEVICE = 3,
	RM_OP_QUERY_DEVICE = 4,
	RM_OP_QUERY_PORT = 5,
	RM_OP_QUERY_GID = 6,
	RM_OP_ALLOC_PD = 7,
	RM_OP_REG_MR = 8,
	RM_OP_CREATE_CQ = 9,
	RM_OP_CREATE_QP = 10,
	RM_OP_MODIFY_INIT = 11,
	RM_OP_MODIFY_RTR = 12,
	RM_OP_MODIFY_RTS = 13,
	RM_OP_POST_SEND = 14,
	RM_OP_POLL_CQ = 15,
	RM_OP_COMPLETION = 16,  // a work completion with an error status
	RM_OP_WAIT_PONG = 17,   // initiator waiting for the responder's write
	RM_OP_WAIT_PING = 18,   // responder waiting for the initiator's write
	RM_OP_WAIT_DONE = 19,   // responder waiting for the end-of-test marker
	RM_OP_WAIT_CQ = 20,     // waiting for our own completions
	RM_OP_ALLOC = 21,       // host memory for buffers
	RM_OP_ASYNC_EVENT = 22, // reading the device's async events
	RM_OP_CM_LOAD = 23,     // the kernel RDMA CM speaks another ABI
	RM_OP_CM_CHANNEL = 24,  // opening /dev/infiniband/rdma_cm, creating an id
	RM_OP_CM_BIND = 25,     // rdma_bind_addr / rdma_listen
	RM_OP_CM_RESOLVE_ADDR = 26,
	RM_OP_CM_RESOLVE_ROUTE = 27,
	RM_OP_CM_CONNECT = 28,  // rdma_connect and its answer
	RM_OP_CM_ACCEPT = 29,   // waiting for and accepting the request
	RM_OP_CM_QP_ATTR = 30,  // rdma_init_qp_attr
	RM_OP_CM_DEVICE = 31,   // the CM picked another device than ours
	RM_OP_CREATE_AH = 32,   // a UD address handle for a live-probe target
	RM_OP_COMP_CHANNEL = 33, // a completion channel, or waiting on it
};

// Where a failure happened and what the library said. iter is the
// iteration the loop had reached, which tells "never started" from "died
// half way" for the classification.
typedef struct rm_status {
	int op;
	int err;       // errno, ETIMEDOUT for deadlines, ECANCELED for cancel
	int wc_status; // enum ibv_wc_status when op == RM_OP_COMPLETION
	int64_t iter;
	int64_t done;  // work requests completed before the failure
	int64_t idle_ns; // at a deadline: how long the loop had made no progress
	int cm_event;    // RDMA CM: 1 + the event that ended the wait (0: none)
	int cm_status;   // its status (negative errno, or a CM reject reason)
} rm_status;

typedef struct rm_event {
	int type; // enum ibv_event_type
	int port; // 0 for device-wide events
} rm_event;

typedef struct rm_port {
	int state;
	int phys_state;
	int link_layer; // IBV_LINK_LAYER_*
	int active_mtu; // enum ibv_mtu
	int max_mtu;
	int lid;
	int sm_lid;
	int gid_tbl_len;
	int active_width;
	int active_speed;
} rm_port;

typedef struct rm_gid {
	int index;
	int type;    // enum ibv_gid_type, -1 when the library cannot tell
	int ifindex; // 0 when no netdev (InfiniBand, or unknown)
	uint8_t raw[16];
} rm_gid;

typedef struct rm_dev rm_dev;
typedef struct rm_sess rm_sess;

// What Connect needs from both sides.
typedef struct rm_conn {
	uint32_t remote_qpn;
	uint32_t remote_psn;
	uint32_t local_psn;
	int mtu; // enum ibv_mtu, already min(local, remote)
	int port;
	int global; // 1: GRH (RoCE, or IB across subnets)
	int dlid;
	int sgid_index;
	int hop_limit;
	int traffic_class;
	uint32_t flow_label; // GRH flow label; on RoCE v2 it sets the UDP source port
	uint8_t dgid[16];
	uint64_t remote_addr;
	uint32_t remote_rkey;
	uint64_t remote_len;
} rm_conn;

typedef struct rm_bw_out {
	int64_t ns;
	int64_t bytes;
	int64_t msgs;
} rm_bw_out;

int rm_load(char *msg, int msglen);
int64_t rm_now_ns(void);

int rm_dev_names(char *out, int outlen, rm_status *st);
rm_dev *rm_dev_open(const char *name, rm_status *st);
void rm_dev_close(rm_dev *d);
int rm_dev_nports(rm_dev *d);
int rm_port_query(rm_dev *d, int port, rm_port *out, rm_status *st);
int rm_gid_list(rm_dev *d, int port, int tbl_len, rm_gid *out, int max, rm_status *st);

rm_sess *rm_sess_open(rm_dev *d, int port, int lat_size, int bw_size, int tx_depth, rm_status *st);
void rm_sess_info(rm_sess *s, uint32_t *qpn, uint64_t *addr, uint32_t *rkey, uint64_t *len);
int rm_sess_connect(rm_sess *s, const rm_conn *c, rm_status *st);
int rm_sess_latency(rm_sess *s, int warmup, int iters, int64_t *rtt, int64_t timeout_ns, int64_t gen, rm_status *st);
int rm_sess_read_latency(rm_sess *s, int warmup, int iters, int64_t *rtt, int64_t timeout_ns, int64_t gen, rm_status *st);
int rm_sess_respond(rm_sess *s, int warmup, int iters, int wait_done, int64_t timeout_ns, int64_t gen, rm_status *st);
int rm_sess_bandwidth(rm_sess *s, int iters, int tx_depth, int64_t timeout_ns, int64_t gen, rm_bw_out *out, rm_status *st);
void rm_sess_cancel(rm_sess *s, int64_t gen);
void rm_sess_close(rm_sess *s);

// What the two ends of an RDMA CM connection tell each other in the
// handshake's private data: where to write, and what the buffer was laid
// out for. reason is non-zero in a reject.
typedef struct rm_cm_priv {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	uint32_t lat_size;
	uint32_t bw_size;
	int mtu;    // sender's active MTU, enum ibv_mtu
	int reason; // RM_CM_REJECT_*
	int valid;  // set by the decoder: the bytes were ours
} rm_cm_priv;

enum { RM_CM_REJECT_SIZES = 1, RM_CM_REJECT_DEVICE = 2 };

int rm_cm_abi(void); // the kernel RDMA CM's ABI version, -1 when unknown
int rm_cm_listen(rm_sess *s, const char *ip, int *port, rm_status *st);
int rm_cm_wait_request(rm_sess *s, rm_cm_priv *peer, int64_t timeout_ns, int64_t gen, rm_status *st);
int rm_cm_reject(rm_sess *s, const rm_cm_priv *mine);
int rm_cm_accept(rm_sess *s, const rm_cm_priv *mine, const rm_cm_priv *peer, int mtu_cap,
		 int64_t timeout_ns, int64_t gen, rm_status *st);
int rm_cm_connect(rm_sess *s, const char *src, const char *dst, int port, const rm_cm_priv *mine,
		  rm_cm_priv *peer, int64_t timeout_ns, int64_t gen, rm_status *st);
int rm_cm_establish(rm_sess *s, const rm_cm_priv *peer, int mtu_cap, rm_status *st);
int rm_sess_path_mtu(rm_sess *s);

// The always-on mesh's probe port (ud.c): one UD QP per HCA port.
typedef struct rm_ud rm_ud;

enum { RM_UD_RECV = 1, RM_UD_SEND_ERR = 2, RM_UD_RECV_ERR = 3 };

// One completion the poller hands to Go: a received message (payload
// without the 40-byte GRH area, timestamped when it was polled) or a
// failed work request.
typedef struct rm_ud_cqe {
	int64_t ts;
	uint32_t src_qp;
	int kind;   // RM_UD_*
	int status; // enum ibv_wc_status
	int len;
	uint8_t data[64];
} rm_ud_cqe;

rm_ud *rm_ud_open(rm_dev *d, int port, int sgid_index, uint32_t qkey, rm_status *st);
uint32_t rm_ud_qpn(rm_ud *u);
void *rm_ud_ah(rm_ud *u, int global, const uint8_t *dgid, int dlid, uint32_t flow_label, rm_status *st);
void rm_ud_ah_free(void *ah);
int rm_ud_post(rm_ud *u, void *ah, uint32_t qpn, uint32_t qkey, const uint8_t *msg, int len, int stamp_off, rm_status *st);
int rm_ud_wait(rm_ud *u, int stop_fd, int timeout_ms, rm_ud_cqe *out, int max, rm_status *st);
int rm_ud_check(rm_ud *u, rm_status *st);
void rm_ud_close(rm_ud *u);

int rm_dev_registered(rm_dev *d);
// 1: *ev filled; 0: timeout; 2: stop_fd readable; -1: error.
int rm_dev_event_wait(rm_dev *d, int stop_fd, int timeout_ms, rm_event *ev, rm_status *st);

#endif
