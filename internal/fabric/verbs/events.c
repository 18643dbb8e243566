//go:build verbs && cgo

// Device health: the asynchronous event stream of a device context (port
// up/down, device fatal) and a check that the device is still registered.
//
// Why both: a port change reaches every open context as an async event,
// but a device being unregistered does not on providers without
// "disassociate" (rxe among them): the kernel deletes the uverbs node and
// then waits, without telling anyone, until every process has closed its
// contexts. So a watcher that only read events would hold the device
// hostage (`rdma link del` hangs) and never learn it is gone.
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "engine.h"
#include "engine_int.h"

int rm_dev_registered(rm_dev *d)
{
	char path[IBV_SYSFS_PATH_MAX + 16], name[IBV_SYSFS_NAME_MAX + 2];
	snprintf(path, sizeof(path), "%s/ibdev", d->dev_path);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	// uverbsN numbers are reused: the node must still name our device.
	int ok = fgets(name, sizeof(name), f) != NULL;
	fclose(f);
	if (!ok)
		return 0;
	name[strcspn(name, "\n")] = 0;
	return strcmp(name, d->name) == 0;
}

int rm_dev_event_wait(rm_dev *d, int stop_fd, int timeout_ms, rm_event *ev, rm_status *st)
{
	struct pollfd p[2];
	p[0].fd = d->ctx->async_fd;
	p[0].events = POLLIN;
	p[1].fd = stop_fd;
	p[1].events = POLLIN;
	int rc = poll(p, 2, timeout_ms);
	if (rc < 0) {
		if (errno == EINTR)
			return 0;
		rm_fail(st, RM_OP_ASYNC_EVENT, errno);
		return -1;
	}
	if (rc == 0)
		return 0;
	if (p[1].revents)
		return 2;
	if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
		rm_fail(st, RM_OP_ASYNC_EVENT, EIO);
		return -1;
	}
	struct ibv_async_event e;
	if (rm_fn.get_async_event(d->ctx, &e)) {
		rm_fail(st, RM_OP_ASYNC_EVENT, errno);
		return -1;
	}
	ev->type = e.event_type;
	ev->port = 0;
	switch (e.event_type) {
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		ev->port = e.element.port_num;
		break;
	default:
		break;
	}
	rm_fn.ack_async_event(&e);
	return 1;
}
