//go:build verbs && cgo

// Loading libibverbs and the control-path verbs: devices, ports, GIDs.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "engine.h"
#include "engine_int.h"

struct rm_fn rm_fn;

// Symbols that have an IBVERBS_1.0 compat twin must resolve to the 1.1 ABI
// the header describes; dlsym alone would also do, but only by the default
// version happening to be the right one.
static void *sym(void *h, const char *name, int versioned)
{
	void *p = NULL;
	if (versioned)
		p = dlvsym(h, name, "IBVERBS_1.1");
	if (!p)
		p = dlsym(h, name);
	return p;
}

int rm_load(char *msg, int msglen)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		// Report the runtime library's error, not the dev symlink's: the
		// fix is installing libibverbs.so.1.
		const char *e = dlerror();
		snprintf(msg, msglen, "%s", e ? e : "dlopen libibverbs.so.1 failed");
		h = dlopen("libibverbs.so", RTLD_NOW | RTLD_GLOBAL);
	}
	if (!h)
		return -1;
	msg[0] = 0;
	struct {
		void **slot;
		const char *name;
		int versioned;
		int optional;
	} want[] = {
		{(void **)&rm_fn.get_device_list, "ibv_get_device_list", 1, 0},
		{(void **)&rm_fn.free_device_list, "ibv_free_device_list", 1, 0},
		{(void **)&rm_fn.open_device, "ibv_open_device", 1, 0},
		{(void **)&rm_fn.close_device, "ibv_close_device", 1, 0},
		{(void **)&rm_fn.query_device, "ibv_query_device", 1, 0},
		{(void **)&rm_fn.query_port, "ibv_query_port", 1, 0},
		{(void **)&rm_fn.query_gid, "ibv_query_gid", 1, 0},
		{(void **)&rm_fn.alloc_pd, "ibv_alloc_pd", 1, 0},
		{(void **)&rm_fn.dealloc_pd, "ibv_dealloc_pd", 1, 0},
		{(void **)&rm_fn.reg_mr, "ibv_reg_mr", 1, 0},
		{(void **)&rm_fn.dereg_mr, "ibv_dereg_mr", 1, 0},
		{(void **)&rm_fn.create_cq, "ibv_create_cq", 1, 0},
		{(void **)&rm_fn.destroy_cq, "ibv_destroy_cq", 1, 0},
		{(void **)&rm_fn.create_qp, "ibv_create_qp", 1, 0},
		{(void **)&rm_fn.destroy_qp, "ibv_destroy_qp", 1, 0},
		{(void **)&rm_fn.modify_qp, "ibv_modify_qp", 1, 0},
		{(void **)&rm_fn.query_gid_table, "_ibv_query_gid_table", 0, 1},
		{(void **)&rm_fn.get_async_event, "ibv_get_async_event", 1, 0},
		{(void **)&rm_fn.ack_async_event, "ibv_ack_async_event", 1, 0},
		{(void **)&rm_fn.create_ah, "ibv_create_ah", 1, 0},
		{(void **)&rm_fn.destroy_ah, "ibv_destroy_ah", 1, 0},
		{(void **)&rm_fn.create_comp_channel, "ibv_create_comp_channel", 1, 0},
		{(void **)&rm_fn.destroy_comp_channel, "ibv_destroy_comp_channel", 1, 0},
		{(void **)&rm_fn.get_cq_event, "ibv_get_cq_event", 1, 0},
		{(void **)&rm_fn.ack_cq_events, "ibv_ack_cq_events", 1, 0},
		{(void **)&rm_fn.query_qp, "ibv_query_qp", 1, 0},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		*want[i].slot = sym(h, want[i].name, want[i].versioned);
		if (!*want[i].slot && !want[i].optional) {
			snprintf(msg, msglen, "libibverbs.so.1 lacks %s (too old?)", want[i].name);
			return -1;
		}
	}
	return 0;
}

int64_t rm_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void rm_fail(rm_status *st, int op, int err)
{
	st->op = op;
	st->err = err ? err : EIO;
}

int rm_dev_names(char *out, int outlen, rm_status *st)
{
	int n = 0;
	errno = 0;
	struct ibv_device **list = rm_fn.get_device_list(&n);
	if (!list) {
		rm_fail(st, RM_OP_GET_DEVICE_LIST, errno);
		return -1;
	}
	int used = 0;
	out[0] = 0;
	for (int i = 0; i < n; i++) {
		int w = snprintf(out + used, outlen - used, "%s\n", list[i]->name);
		if (w < 0 || w >= outlen - used)
			break;
		used += w;
	}
	rm_fn.free_device_list(list);
	return n;
}

rm_dev *rm_dev_open(const char *name, rm_status *st)
{
	int n = 0;
	errno = 0;
	struct ibv_device **list = rm_fn.get_device_list(&n);
	if (!list) {
		rm_fail(st, RM_OP_GET_DEVICE_LIST, errno);
		return NULL;
	}
	struct ibv_device *dev = NULL;
	for (int i = 0; i < n; i++)
		if (strcmp(list[i]->name, name) == 0)
			dev = list[i];
	if (!dev) {
		rm_fn.free_device_list(list);
		rm_fail(st, RM_OP_OPEN_DEVICE, ENODEV);
		return NULL;
	}
	rm_dev *d = calloc(1, sizeof(*d));
	if (!d) {
		rm_fn.free_device_list(list);
		rm_fail(st, RM_OP_ALLOC, ENOMEM);
		return NULL;
	}
	snprintf(d->name, sizeof(d->name), "%s", dev->name);
	snprintf(d->dev_path, sizeof(d->dev_path), "%s", dev->dev_path);
	errno = 0;
	d->ctx = rm_fn.open_device(dev);
	rm_fn.free_device_list(list);
	if (!d->ctx) {
		rm_fail(st, RM_OP_OPEN_DEVICE, errno);
		free(d);
		return NULL;
	}
	struct ibv_device_attr da;
	memset(&da, 0, sizeof(da));
	int rc = rm_fn.query_device(d->ctx, &da);
	if (rc) {
		rm_fail(st, RM_OP_QUERY_DEVICE, rc > 0 ? rc : errno);
		rm_dev_close(d);
		return NULL;
	}
	d->nports = da.phys_port_cnt;
	d->guid = da.node_guid;
	d->retry_cnt = da.vendor_id == RM_RXE_VENDOR_ID ? 6 : 7;
	d->ack_timeout = da.vendor_id == RM_RXE_VENDOR_ID ? 18 : 14;
	errno = 0;
	d->pd = rm_fn.alloc_pd(d->ctx);
	if (!d->pd) {
		rm_fail(st, RM_OP_ALLOC_PD, errno);
		rm_dev_close(d);
		return NULL;
	}
	return d;
}

void rm_dev_close(rm_dev *d)
{
	if (!d)
		return;
	if (d->pd)
		rm_fn.dealloc_pd(d->pd);
	if (d->ctx)
		rm_fn.close_device(d->ctx);
	free(d);
}

int rm_dev_nports(rm_dev *d) { return d->nports; }

// The exported ibv_query_port fills only the old, shorter struct; newer
// providers answer through the extended context op, as the header's own
// inline wrapper does.
static int query_port(struct ibv_context *ctx, int port, struct ibv_port_attr *a)
{
	memset(a, 0, sizeof(*a));
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);
	if (vctx)
		return vctx->query_port(ctx, port, a, sizeof(*a));
	return rm_fn.query_port(ctx, port, (struct _compat_ibv_port_attr *)a);
}

int rm_port_query(rm_dev *d, int port, rm_port *out, rm_status *st)
{
	struct ibv_port_attr a;
	errno = 0;
	int rc = query_port(d->ctx, port, &a);
	if (rc) {
		rm_fail(st, RM_OP_QUERY_PORT, rc > 0 ? rc : errno);
		return -1;
	}
	out->state = a.state;
	out->phys_state = a.phys_state;
	out->link_layer = a.link_layer;
	out->active_mtu = a.active_mtu;
	out->max_mtu = a.max_mtu;
	out->lid = a.lid;
	out->sm_lid = a.sm_lid;
	out->gid_tbl_len = a.gid_tbl_len;
	out->active_width = a.active_width;
	out->active_speed = a.active_speed;
	return 0;
}

static int zero_gid(const uint8_t *g)
{
	for (int i = 0; i < 16; i++)
		if (g[i])
			return 0;
	return 1;
}

// Lists the populated GID entries of one port. One ioctl for the whole
// table when the library has it: reading 1024 slots one by one is slow,
// painfully so under emulation.
int rm_gid_list(rm_dev *d, int port, int tbl_len, rm_gid *out, int max, rm_status *st)
{
	int n = 0;
	if (rm_fn.query_gid_table) {
		size_t cap = (size_t)tbl_len * (d->nports > 0 ? d->nports : 1);
		struct ibv_gid_entry *e = calloc(cap ? cap : 1, sizeof(*e));
		if (!e) {
			rm_fail(st, RM_OP_ALLOC, ENOMEM);
			return -1;
		}
		errno = 0;
		ssize_t got = rm_fn.query_gid_table(d->ctx, e, cap, 0, sizeof(*e));
		if (got >= 0) {
			for (ssize_t i = 0; i < got && n < max; i++) {
				if ((int)e[i].port_num != port || zero_gid(e[i].gid.raw))
					continue;
				out[n].index = e[i].gid_index;
				out[n].type = e[i].gid_type;
				out[n].ifindex = e[i].ndev_ifindex;
				memcpy(out[n].raw, e[i].gid.raw, 16);
				n++;
			}
			free(e);
			return n;
		}
		free(e);
		// EOPNOTSUPP and friends: fall back to the slot-by-slot query.
	}
	for (int i = 0; i < tbl_len && n < max; i++) {
		union ibv_gid g;
		if (rm_fn.query_gid(d->ctx, port, i, &g))
			continue;
		if (zero_gid(g.raw))
			continue;
		out[n].index = i;
		out[n].type = -1;
		out[n].ifindex = 0;
		memcpy(out[n].raw, g.raw, 16);
		n++;
	}
	return n;
}
