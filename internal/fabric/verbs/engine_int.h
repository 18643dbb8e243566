//go:build verbs && cgo

// Internal to the C files: the resolved library entry points and the
// structs Go only sees as opaque pointers.
#ifndef RDMAMESH_ENGINE_INT_H
#define RDMAMESH_ENGINE_INT_H

#include <infiniband/verbs.h>
#include "engine.h"

struct rm_fn {
	struct ibv_device **(*get_device_list)(int *);
	void (*free_device_list)(struct ibv_device **);
	struct ibv_context *(*open_device)(struct ibv_device *);
	int (*close_device)(struct ibv_context *);
	int (*query_device)(struct ibv_context *, struct ibv_device_attr *);
	int (*query_port)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *);
	int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *);
	int (*dealloc_pd)(struct ibv_pd *);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
	int (*dereg_mr)(struct ibv_mr *);
	struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *, int);
	int (*destroy_cq)(struct ibv_cq *);
	struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
	int (*destroy_qp)(struct ibv_qp *);
	int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
	ssize_t (*query_gid_table)(struct ibv_context *, struct ibv_gid_entry *, size_t, uint32_t, size_t);
	int (*get_async_event)(struct ibv_context *, struct ibv_async_event *);
	void (*ack_async_event)(struct ibv_async_event *);
	struct ibv_ah *(*create_ah)(struct ibv_pd *, struct ibv_ah_attr *);
	int (*destroy_ah)(struct ibv_ah *);
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *);
	int (*destroy_comp_channel)(struct ibv_comp_channel *);
	int (*get_cq_event)(struct ibv_comp_channel *, struct ibv_cq **, void **);
	void (*ack_cq_events)(struct ibv_cq *, unsigned int);
	int (*query_qp)(struct ibv_qp *, struct ibv_qp_attr *, int, struct ibv_qp_init_attr *);
};

extern struct rm_fn rm_fn;

struct rm_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int nports;
	char name[IBV_SYSFS_NAME_MAX];
	// The uverbs node (/sys/class/infiniband_verbs/uverbsN): it vanishes
	// first when the device is unregistered, while our open context keeps
	// the rest of the device alive.
	char dev_path[IBV_SYSFS_PATH_MAX];
	uint64_t guid; // node GUID as the kernel stores it (RDMA CM names devices by it)
	// Transport retries and local ACK timeout for RC QPs: perftest's 7 and
	// 14 (67 ms), except on Soft-RoCE. rxe reads a retry count of 7 as
	// "retry forever" (rxe_comp.c), so a dead or lossy path would hang to
	// the deadline instead of failing with RETRY_EXC_ERR after 7 tries as
	// on an HCA; 6 gives rxe those 7 tries. And rxe runs on CPUs that stall
	// (VMs, busy hosts): 7 x 67 ms of silence from a descheduled peer
	// failed clean lab runs, so its timeout is 18 (1.07 s, 7.5 s in all).
	int retry_cnt;
	int ack_timeout;
};

#define RM_RXE_VENDOR_ID 0xFFFFFF

void rm_fail(rm_status *st, int op, int err);

#endif
