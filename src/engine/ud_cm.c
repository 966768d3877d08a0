/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/ud_cm.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fabric.h"
#include "base/stats.h"

/* What a client's request carries: which of its QPs, and how to reach
 * it (the server answers datagrams, so it needs the client's QP too). */
struct cm_hello {
	uint32_t index;
	uint32_t qpn;
	uint8_t gid[16];
	uint16_t lid;
} __attribute__((packed));

struct cqp_ud_cm {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct rdma_cm_id **ids; /* connected (client) or accepted (server) */
	unsigned nids;
	int timeout_ms;
	char dev[64]; /* where our QPs live: RDMA CM must route over it */
};

static int cm_create(struct cqp_ud_cm **out, unsigned n, int timeout_ms,
		     const char *dev)
{
	struct cqp_ud_cm *cm = calloc(1, sizeof(*cm));

	*out = cm;
	if (!cm || !(cm->ids = calloc(n, sizeof(*cm->ids))))
		return cqp_fail(CQP_E_NOMEM, "out of memory for RDMA CM ids");
	cm->timeout_ms = timeout_ms;
	snprintf(cm->dev, sizeof(cm->dev), "%s", dev);
	cm->ch = rdma_create_event_channel();
	if (!cm->ch)
		return cqp_fail(errno == ENODEV ? CQP_E_NODEV : CQP_E_DEVICE,
				"--rdma-cm: rdma_create_event_channel: %s",
				strerror(errno));
	return 0;
}

void cqp_ud_cm_close(struct cqp_ud_cm *cm)
{
	if (!cm)
		return;
	for (unsigned i = 0; i < cm->nids; i++)
		rdma_destroy_id(cm->ids[i]);
	if (cm->listen)
		rdma_destroy_id(cm->listen);
	if (cm->ch)
		rdma_destroy_event_channel(cm->ch);
	free(cm->ids);
	free(cm);
}

/* The next event, within the deadline.  The caller acks it. */
static int next_event(struct cqp_ud_cm *cm, uint64_t deadline,
		      struct rdma_cm_event **ev)
{
	struct pollfd pfd = {.fd = cm->ch->fd, .events = POLLIN};

	for (;;) {
		uint64_t now = cqp_now_ns();
		int ms = now >= deadline
			     ? 0
			     : (int)((deadline - now + 999999) / 1000000);
		int r;

		if (ms == 0)
			return cqp_fail(CQP_E_TIMEOUT,
					"--rdma-cm: no RDMA CM event within "
					"%d s",
					cm->timeout_ms / 1000);
		r = poll(&pfd, 1, ms);
		if (r < 0 && errno == EINTR)
			return cqp_fail(CQP_E_INTERRUPTED, "interrupted");
		if (r < 0)
			return cqp_fail(CQP_E_SYS, "poll: %s", strerror(errno));
		if (r > 0)
			break;
	}
	if (rdma_get_cm_event(cm->ch, ev))
		return cqp_fail(CQP_E_DEVICE, "rdma_get_cm_event: %s",
				strerror(errno));
	return 0;
}

/* Waits for `want` on id; any other event is the failure it names. */
static int expect_event(struct cqp_ud_cm *cm, uint64_t deadline,
			enum rdma_cm_event_type want,
			struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev;
	int rc = next_event(cm, deadline, &ev);

	if (rc < 0)
		return rc;
	if (ev->event != want) {
		rc = cqp_fail(ev->event == RDMA_CM_EVENT_UNREACHABLE ||
				      ev->event == RDMA_CM_EVENT_REJECTED
				  ? CQP_E_NET
				  : CQP_E_PROTO,
			      "--rdma-cm: %s while waiting for %s (status %d)",
			      rdma_event_str(ev->event), rdma_event_str(want),
			      ev->status);
		rdma_ack_cm_event(ev);
		return rc;
	}
	*out = ev;
	return 0;
}

int cqp_ud_cm_listen(struct cqp_ud_cm **out, uint16_t port, int timeout_ms,
		     const char *dev)
{
	struct sockaddr_in6 any;
	struct cqp_ud_cm *cm;
	int rc = cm_create(out, 1024, timeout_ms, dev);

	cm = *out;
	if (rc < 0)
		return rc;
	if (rdma_create_id(cm->ch, &cm->listen, NULL, RDMA_PS_UDP))
		return cqp_fail(CQP_E_DEVICE, "--rdma-cm: rdma_create_id: %s",
				strerror(errno));
	memset(&any, 0, sizeof(any));
	any.sin6_family = AF_INET6;
	any.sin6_port = htons(port);
	if (rdma_bind_addr(cm->listen, (struct sockaddr *)&any))
		return cqp_fail(CQP_E_NET, "--rdma-cm: binding UDP port %u: %s",
				port, strerror(errno));
	if (rdma_listen(cm->listen, 64))
		return cqp_fail(CQP_E_NET, "--rdma-cm: rdma_listen: %s",
				strerror(errno));
	return 0;
}

int cqp_ud_cm_accept(struct cqp_ud_cm *cm, const uint32_t *qpns, unsigned n,
		     struct cqp_endpoint *remote)
{
	uint64_t deadline =
	    cqp_now_ns() + (uint64_t)cm->timeout_ms * 1000000ull;

	for (unsigned got = 0; got < n; got++) {
		struct rdma_cm_event *ev;
		struct rdma_conn_param cp;
		struct cm_hello h;
		int rc = expect_event(cm, deadline,
				      RDMA_CM_EVENT_CONNECT_REQUEST, &ev);

		if (rc < 0)
			return rc;
		/* The event's private data is gone once acked: copy it. */
		if (ev->param.ud.private_data_len < sizeof(h)) {
			rdma_ack_cm_event(ev);
			return cqp_fail(CQP_E_PROTO,
					"--rdma-cm: a request without our "
					"endpoint in its private data");
		}
		memcpy(&h, ev->param.ud.private_data, sizeof(h));
		cm->ids[cm->nids++] = ev->id;
		rc = cqp_fabric_cm_device_ok(
		    ibv_get_device_name(ev->id->verbs->device), cm->dev, "",
		    false);
		if (rc < 0) {
			rdma_reject(ev->id, NULL, 0);
			rdma_ack_cm_event(ev);
			return rc;
		}
		if (h.index >= n) {
			rdma_ack_cm_event(ev);
			return cqp_fail(CQP_E_PROTO,
					"--rdma-cm: a request for QP %u of %u",
					h.index, n);
		}
		remote[h.index].qpn = h.qpn & 0xffffff;
		remote[h.index].lid = h.lid;
		memcpy(remote[h.index].gid.raw, h.gid, 16);
		memset(&cp, 0, sizeof(cp));
		cp.qp_num = qpns[h.index];
		rc = rdma_accept(ev->id, &cp);
		rdma_ack_cm_event(ev);
		if (rc)
			return cqp_fail(CQP_E_DEVICE,
					"--rdma-cm: rdma_accept: %s",
					strerror(errno));
	}
	return 0;
}

static int resolve(const char *host, uint16_t port, struct sockaddr_storage *ss)
{
	struct addrinfo hints, *res;
	char serv[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_DGRAM;
	snprintf(serv, sizeof(serv), "%u", port);
	rc = getaddrinfo(host, serv, &hints, &res);
	if (rc)
		return cqp_fail(CQP_E_NET, "--rdma-cm: cannot resolve '%s': %s",
				host, gai_strerror(rc));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* One SIDR exchange: resolve, route, connect, ESTABLISHED. */
static int connect_one(struct cqp_ud_cm *cm, const char *host,
		       struct sockaddr *dst, uint64_t deadline,
		       const struct cm_hello *h, struct ibv_ah_attr *ah_attr,
		       uint32_t *qpn, uint32_t *qkey)
{
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	int ms = cm->timeout_ms < 2000 ? cm->timeout_ms : 2000;
	int rc;

	if (rdma_create_id(cm->ch, &id, NULL, RDMA_PS_UDP))
		return cqp_fail(CQP_E_DEVICE, "--rdma-cm: rdma_create_id: %s",
				strerror(errno));
	cm->ids[cm->nids++] = id;
	if (rdma_resolve_addr(id, NULL, dst, ms))
		return cqp_fail(CQP_E_NET, "--rdma-cm: rdma_resolve_addr: %s",
				strerror(errno));
	if ((rc = expect_event(cm, deadline, RDMA_CM_EVENT_ADDR_RESOLVED,
			       &ev)) < 0)
		return rc;
	rdma_ack_cm_event(ev);
	/* The route's device, not -d's: a host name may resolve to a
	 * management network on another NIC. */
	if ((rc =
		 cqp_fabric_cm_device_ok(ibv_get_device_name(id->verbs->device),
					 cm->dev, host, true)) < 0)
		return rc;
	if (rdma_resolve_route(id, ms))
		return cqp_fail(CQP_E_NET, "--rdma-cm: rdma_resolve_route: %s",
				strerror(errno));
	if ((rc = expect_event(cm, deadline, RDMA_CM_EVENT_ROUTE_RESOLVED,
			       &ev)) < 0)
		return rc;
	rdma_ack_cm_event(ev);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = h;
	cp.private_data_len = sizeof(*h);
	if (rdma_connect(id, &cp))
		return cqp_fail(CQP_E_NET, "--rdma-cm: rdma_connect: %s",
				strerror(errno));
	if ((rc = expect_event(cm, deadline, RDMA_CM_EVENT_ESTABLISHED, &ev)) <
	    0)
		return rc;
	*ah_attr = ev->param.ud.ah_attr;
	*qpn = ev->param.ud.qp_num;
	*qkey = ev->param.ud.qkey;
	rdma_ack_cm_event(ev);
	return 0;
}

int cqp_ud_cm_connect(struct cqp_ud_cm **out, const char *host, uint16_t port,
		      int timeout_ms, const char *dev,
		      const struct cqp_endpoint *local, unsigned n,
		      struct ibv_ah_attr *ah_attr, uint32_t *qpns,
		      uint32_t *qkey)
{
	uint64_t deadline = cqp_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct sockaddr_storage dst;
	int rc = cm_create(out, n, timeout_ms, dev);

	if (rc == 0)
		rc = resolve(host, port, &dst);
	for (unsigned i = 0; rc == 0 && i < n; i++) {
		struct cm_hello h = {
		    .index = i, .qpn = local[i].qpn, .lid = local[i].lid};

		memcpy(h.gid, local[i].gid.raw, 16);
		rc = connect_one(*out, host, (struct sockaddr *)&dst, deadline,
				 &h, ah_attr, &qpns[i], qkey);
	}
	return rc;
}
