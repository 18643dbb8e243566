//go:build verbs && cgo

// Compile-time proof that cm_int.h matches librdmacm's ABI, wherever the
// real header is installed (librdmacm-dev). Builds without it skip the
// check; the declarations are the library's stable public ABI (RDMACM_1.0).
#if defined(__has_include)
#if __has_include(<rdma/rdma_cma.h>)
#include <stddef.h>
#include <rdma/rdma_cma.h>
#include "cm_int.h"

#define SAME_OFFSET(a, b, f) _Static_assert(offsetof(struct a, f) == offsetof(struct b, f), #a "." #f)
SAME_OFFSET(rm_cm_channel, rdma_event_channel, fd);
SAME_OFFSET(rm_cm_id, rdma_cm_id, verbs);
SAME_OFFSET(rm_cm_event, rdma_cm_event, id);
SAME_OFFSET(rm_cm_event, rdma_cm_event, listen_id);
SAME_OFFSET(rm_cm_event, rdma_cm_event, event);
SAME_OFFSET(rm_cm_event, rdma_cm_event, status);
_Static_assert(offsetof(struct rm_cm_event, conn) == offsetof(struct rdma_cm_event, param.conn), "event.param");
SAME_OFFSET(rm_cm_conn_param, rdma_conn_param, private_data);
SAME_OFFSET(rm_cm_conn_param, rdma_conn_param, private_data_len);
SAME_OFFSET(rm_cm_conn_param, rdma_conn_param, responder_resources);
SAME_OFFSET(rm_cm_conn_param, rdma_conn_param, initiator_depth);
SAME_OFFSET(rm_cm_conn_param, rdma_conn_param, retry_count);
SAME_OFFSET(rm_cm_conn_param, rdma_conn_param, rnr_retry_count);
SAME_OFFSET(rm_cm_conn_param, rdma_conn_param, qp_num);
_Static_assert(sizeof(struct rm_cm_conn_param) == sizeof(struct rdma_conn_param), "conn_param size");
_Static_assert(RM_PS_TCP == RDMA_PS_TCP, "RDMA_PS_TCP");
_Static_assert((int)RM_CM_EVENT_CONNECT_REQUEST == (int)RDMA_CM_EVENT_CONNECT_REQUEST, "CONNECT_REQUEST");
_Static_assert((int)RM_CM_EVENT_CONNECT_RESPONSE == (int)RDMA_CM_EVENT_CONNECT_RESPONSE, "CONNECT_RESPONSE");
_Static_assert((int)RM_CM_EVENT_ESTABLISHED == (int)RDMA_CM_EVENT_ESTABLISHED, "ESTABLISHED");
_Static_assert((int)RM_CM_EVENT_REJECTED == (int)RDMA_CM_EVENT_REJECTED, "REJECTED");
_Static_assert((int)RM_CM_EVENT_UNREACHABLE == (int)RDMA_CM_EVENT_UNREACHABLE, "UNREACHABLE");
_Static_assert((int)RM_CM_EVENT_DEVICE_REMOVAL == (int)RDMA_CM_EVENT_DEVICE_REMOVAL, "DEVICE_REMOVAL");
_Static_assert((int)RM_CM_EVENT_ADDR_ERROR == (int)RDMA_CM_EVENT_ADDR_ERROR, "ADDR_ERROR");
_Static_assert((int)RM_CM_EVENT_ROUTE_ERROR == (int)RDMA_CM_EVENT_ROUTE_ERROR, "ROUTE_ERROR");
#endif
#endif
