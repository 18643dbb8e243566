//go:build verbs && cgo

// The slice of librdmacm's public ABI the engine uses, declared here so the
// verbs build needs no librdmacm-dev: the library is dlopened like
// libibverbs, on first use of RDMA CM mode. The names carry our prefix so
// cm_abi_check.c can include the real header next to them and assert, on a
// host that has it, that every offset and value below agrees.
#ifndef RDMAMESH_CM_INT_H
#define RDMAMESH_CM_INT_H

#include <stdint.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

enum {
	RM_CM_EVENT_ADDR_RESOLVED = 0,
	RM_CM_EVENT_ADDR_ERROR = 1,
	RM_CM_EVENT_ROUTE_RESOLVED = 2,
	RM_CM_EVENT_ROUTE_ERROR = 3,
	RM_CM_EVENT_CONNECT_REQUEST = 4,
	RM_CM_EVENT_CONNECT_RESPONSE = 5,
	RM_CM_EVENT_CONNECT_ERROR = 6,
	RM_CM_EVENT_UNREACHABLE = 7,
	RM_CM_EVENT_REJECTED = 8,
	RM_CM_EVENT_ESTABLISHED = 9,
	RM_CM_EVENT_DISCONNECTED = 10,
	RM_CM_EVENT_DEVICE_REMOVAL = 11,
};

#define RM_PS_TCP 0x0106

struct rm_cm_channel {
	int fd;
};

// Only the first member is read: the device context the id is bound to.
struct rm_cm_id {
	struct ibv_context *verbs;
};

struct rm_cm_conn_param {
	const void *private_data;
	uint8_t private_data_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint32_t qp_num;
};

// The library allocates events; the union it ends with is larger than the
// connection parameters, but only they are read.
struct rm_cm_event {
	struct rm_cm_id *id;
	struct rm_cm_id *listen_id;
	int event;
	int status;
	struct rm_cm_conn_param conn;
};

struct rm_cm_fn {
	struct rm_cm_channel *(*create_event_channel)(void);
	void (*destroy_event_channel)(struct rm_cm_channel *);
	int (*create_id)(struct rm_cm_channel *, struct rm_cm_id **, void *, int);
	int (*destroy_id)(struct rm_cm_id *);
	int (*bind_addr)(struct rm_cm_id *, struct sockaddr *);
	int (*listen)(struct rm_cm_id *, int);
	int (*resolve_addr)(struct rm_cm_id *, struct sockaddr *, struct sockaddr *, int);
	int (*resolve_route)(struct rm_cm_id *, int);
	int (*connect)(struct rm_cm_id *, struct rm_cm_conn_param *);
	int (*accept)(struct rm_cm_id *, struct rm_cm_conn_param *);
	int (*reject)(struct rm_cm_id *, const void *, uint8_t);
	int (*establish)(struct rm_cm_id *);
	int (*get_cm_event)(struct rm_cm_channel *, struct rm_cm_event **);
	int (*ack_cm_event)(struct rm_cm_event *);
	uint16_t (*get_src_port)(struct rm_cm_id *);
	int (*init_qp_attr)(struct rm_cm_id *, struct ibv_qp_attr *, int *);
};

extern struct rm_cm_fn rm_cm_fn;

#endif
