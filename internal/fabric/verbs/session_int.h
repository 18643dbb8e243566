//go:build verbs && cgo

#ifndef RDMAMESH_SESSION_INT_H
#define RDMAMESH_SESSION_INT_H

#include <infiniband/verbs.h>
#include "engine.h"

// Close cancels with this generation so it stops any loop, whatever
// generation that loop was started with.
#define RM_CANCEL_ALL (-1)

struct rm_sess {
	rm_dev *dev;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
	int port;
	int lat_size;
	size_t lat_area;
	int bw_size;
	int sq_depth;
	int max_inline;
	int connected;
	uint64_t remote_addr;
	uint32_t remote_rkey;
	// Ping-pong and end-marker counters continue across calls so a second
	// measurement on the same QP never mistakes the last value of the
	// previous one for a fresh answer.
	uint8_t seq;
	uint64_t done_sent;
	uint64_t done_seen;
	int64_t cancel; // written by Go's context watcher
	// Progress watch for deadline reports: the last iteration seen at a
	// clock check, and when it was first seen.
	int64_t watch_iter;
	int64_t watch_ts;
	// RDMA CM mode only (cm.c): the CM channel (an open
	// /dev/infiniband/rdma_cm), the listening id on the responder, and the
	// connection's id on either side (kernel handles).
	int cm_fd;
	int cm_open;
	uint32_t cm_listen;
	uint32_t cm_id;
	int has_listen;
	int has_id;
	int path_mtu; // enum ibv_mtu the QP was moved to RTR with
};

void rm_cm_close(rm_sess *s);

size_t rm_layout_len(int lat_size, int bw_size);

#endif
