/* SPDX-License-Identifier: BSD-2-Clause */
#include "verbs/verbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fabric.h"
#include "base/kv.h"
#include "base/options.h"

static bool gid_is_zero(const union ibv_gid *g)
{
	static const uint8_t zero[16];
	return memcmp(g->raw, zero, sizeof(zero)) == 0;
}

/* The netdev prefix length of each IPv4-mapped entry, from the host's
 * addresses (the GID table has the address alone), so that a GID's
 * subnet can be told (cqp_fabric_gid_reaches).  Unmatched: 0. */
static void fill_prefixes(struct cqp_gid_cand *c, unsigned n)
{
	struct ifaddrs *all, *a;

	if (getifaddrs(&all))
		return;
	for (a = all; a; a = a->ifa_next) {
		const struct sockaddr_in *in = (const void *)a->ifa_addr;
		const struct sockaddr_in *mask = (const void *)a->ifa_netmask;
		uint32_t m;
		uint8_t len = 0;

		if (!in || !mask || in->sin_family != AF_INET)
			continue;
		for (m = ntohl(mask->sin_addr.s_addr); m & 0x80000000u; m <<= 1)
			len++;
		for (unsigned i = 0; i < n; i++)
			if (c[i].valid &&
			    IN6_IS_ADDR_V4MAPPED(
				(const struct in6_addr *)c[i].gid.raw) &&
			    memcmp(c[i].gid.raw + 12, &in->sin_addr, 4) == 0)
				c[i].prefix_len = len;
	}
	freeifaddrs(all);
}

/* The report's words for the GID in use. */
static void info_gid(struct cqp_dev *d)
{
	d->info.gid_index = d->gid_index;
	cqp_gid_str(&d->gid, d->info.gid, sizeof(d->info.gid));
	snprintf(d->info.gid_type, sizeof(d->info.gid_type), "%s",
		 cqp_gid_type_name(d->gid_type));
}

/* The GID table as fabric.c wants it, indexed by GID index, unlisted
 * entries empty.  One ibv_query_gid_table call: a query per index would
 * be gid_tbl_len (1024 on rxe) system calls at every start.  (Where the
 * kernel lacks the table query, libibverbs reads sysfs itself.)  Should
 * the table call fail (another port's table longer than ours, so too
 * little room; one unreadable sysfs entry), per index: then an entry
 * that fails is only itself empty. */
static struct cqp_gid_cand *gid_table(struct cqp_dev *d, unsigned *n)
{
	unsigned len = d->port_attr.gid_tbl_len > 0
			   ? (unsigned)d->port_attr.gid_tbl_len
			   : 0;
	/* Every port's valid entries come back: room for as many ports
	 * with tables as long as ours. */
	size_t cap =
	    (size_t)len * (d->attr.phys_port_cnt ? d->attr.phys_port_cnt : 1);
	struct cqp_gid_cand *c = calloc(len ? len : 1, sizeof(*c));
	struct ibv_gid_entry *all = calloc(cap ? cap : 1, sizeof(*all));
	ssize_t got =
	    c && all && cap ? ibv_query_gid_table(d->ctx, all, cap, 0) : -1;

	for (ssize_t k = 0; k < got; k++) {
		if (all[k].port_num != d->port || all[k].gid_index >= len)
			continue;
		c[all[k].gid_index] =
		    (struct cqp_gid_cand){.gid = all[k].gid,
					  .type = all[k].gid_type,
					  .valid = !gid_is_zero(&all[k].gid)};
	}
	for (unsigned i = 0; c && got < 0 && i < len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(d->ctx, d->port, i, &e, 0))
			continue;
		c[i].gid = e.gid;
		c[i].type = e.gid_type;
		c[i].valid = !gid_is_zero(&e.gid);
	}
	free(all);
	if (c && d->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET)
		fill_prefixes(c, len);
	*n = len;
	return c;
}

/* A --gid-index past the table or at an empty entry would fail only at
 * the QP's move to RTR ("No data available"): refuse it here, listing
 * the entries that would work. */
static int check_gid_index(struct cqp_dev *d, const struct cqp_gid_cand *c,
			   unsigned n, unsigned requested)
{
	char usable[512];

	if (requested < n && c[requested].valid &&
	    ibv_query_gid(d->ctx, d->port, (int)requested, &d->gid) == 0)
		return 0;
	cqp_fabric_usable_gids(c, n, usable, sizeof(usable));
	return cqp_fail(
	    CQP_E_USAGE,
	    "--gid-index %u: %s%s port %u has GIDs 0..%d; usable: %s",
	    requested, requested < n ? "the entry is empty; " : "",
	    d->info.name, d->port, (int)n - 1, usable);
}

static int pick_gid(struct cqp_dev *d, int requested, const uint8_t *local)
{
	bool eth = d->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
	struct cqp_gid_cand *c;
	unsigned n;
	int i, rc;

	c = gid_table(d, &n);
	if (!c)
		return cqp_fail(CQP_E_NOMEM, "out of memory for the GID table");
	/* Kept: the peer's GID may call for another entry (path.c). */
	d->gids = c;
	d->ngids = n;
	if (requested >= 0) {
		rc = check_gid_index(d, c, n, (unsigned)requested);
		if (rc == 0) {
			d->gid_index = requested;
			d->gid_type = c[requested].type;
		}
		return rc;
	}
	i = cqp_fabric_pick_gid(c, n, local, eth);
	if (i >= 0 && (rc = cqp_fabric_sgid_index_ok(i, d->info.name)) < 0)
		return rc;
	if (i >= 0) {
		d->gid_index = i;
		d->gid = c[i].gid;
		d->gid_type = c[i].type;
		return 0;
	}
	/* InfiniBand ports may route by LID alone. */
	if (!eth) {
		d->gid_index = 0;
		d->gid_type = IBV_GID_TYPE_IB;
		memset(&d->gid, 0, sizeof(d->gid));
		return 0;
	}
	return cqp_fail(CQP_E_DEVICE,
			"%s port %u has no valid GID: is an IP address "
			"configured on its netdev?",
			d->info.name, d->port);
}

static int open_by_name(struct cqp_dev *d, const char *name)
{
	struct ibv_device **list;
	struct ibv_device *dev = NULL;
	int n = 0, rc = 0;

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		if (list)
			ibv_free_device_list(list);
		return cqp_fail(
		    CQP_E_NODEV,
		    "no RDMA device found: load the NIC's driver, or make a "
		    "soft-RoCE one (modprobe rdma_rxe; rdma link add rxe0 "
		    "type rxe netdev IFACE); where the kernel has no RDMA, "
		    "the README's quick start runs one in a guest "
		    "(scripts/guest/softroce-run.sh)");
	}
	for (int i = 0; i < n; i++) {
		if (!name[0] ||
		    strcmp(ibv_get_device_name(list[i]), name) == 0) {
			dev = list[i];
			break;
		}
	}
	if (!dev) {
		char names[256] = "";
		size_t len = 0;

		for (int i = 0; i < n && len < sizeof(names); i++)
			len += snprintf(names + len, sizeof(names) - len,
					"%s%s", i ? ", " : "",
					ibv_get_device_name(list[i]));
		rc = cqp_fail(CQP_E_USAGE,
			      "--ib-dev %s: no such device (have: %s)", name,
			      names);
	} else {
		snprintf(d->info.name, sizeof(d->info.name), "%s",
			 ibv_get_device_name(dev));
		d->ctx = ibv_open_device(dev);
		if (!d->ctx)
			rc = cqp_fail(CQP_E_DEVICE, "ibv_open_device(%s): %s",
				      d->info.name, strerror(errno));
	}
	ibv_free_device_list(list);
	return rc;
}

int cqp_dev_open(struct cqp_dev *d, const char *name, unsigned port,
		 int gid_index, const uint8_t *local_addr)
{
	int rc;

	memset(d, 0, sizeof(*d));
	rc = open_by_name(d, name);
	if (rc < 0)
		return rc;
	if (ibv_query_device(d->ctx, &d->attr)) {
		rc = cqp_fail(CQP_E_DEVICE, "ibv_query_device(%s): %s",
			      d->info.name, strerror(errno));
		goto fail;
	}
	if (port < 1 || port > d->attr.phys_port_cnt) {
		rc = cqp_fail(CQP_E_USAGE, "--ib-port %u: %s has ports 1..%u",
			      port, d->info.name, d->attr.phys_port_cnt);
		goto fail;
	}
	d->port = (uint8_t)port;
	if (ibv_query_port(d->ctx, d->port, &d->port_attr)) {
		rc = cqp_fail(CQP_E_DEVICE, "ibv_query_port(%s, %u): %s",
			      d->info.name, port, strerror(errno));
		goto fail;
	}
	if (d->port_attr.state != IBV_PORT_ACTIVE) {
		rc = cqp_fail(CQP_E_DEVICE,
			      "%s port %u is %s, not ACTIVE (is its link, or "
			      "for RoCE its netdev, up?)",
			      d->info.name, port,
			      ibv_port_state_str(d->port_attr.state));
		goto fail;
	}
	rc = pick_gid(d, gid_index, local_addr);
	if (rc < 0)
		goto fail;
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		rc = cqp_fail(CQP_E_DEVICE, "ibv_alloc_pd(%s): %s",
			      d->info.name, strerror(errno));
		goto fail;
	}
	d->info.port = port;
	d->info.active_mtu = cqp_mtu_bytes(d->port_attr.active_mtu);
	snprintf(d->info.link_layer, sizeof(d->info.link_layer), "%s",
		 d->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET
		     ? "Ethernet"
		     : "InfiniBand");
	info_gid(d);
	d->grh = true;
	return 0;
fail:
	cqp_dev_close(d);
	return rc;
}

void cqp_dev_close(struct cqp_dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	free(d->gids);
	d->pd = NULL;
	d->ctx = NULL;
	d->gids = NULL;
	d->ngids = 0;
}

int cqp_dev_check_limits(const struct cqp_dev *d, const struct cqp_params *p)
{
	const struct ibv_device_attr *a = &d->attr;
	uint32_t cqe = cqp_params_cq_depth(p);
	/* --threads: every thread makes -q QPs and a CQ for each. */
	uint32_t qps = p->qps * p->nthreads;
	char what[80];

	if (p->nthreads > 1)
		snprintf(what, sizeof(what),
			 "--qps %u times --threads %u (%u QPs)", p->qps,
			 p->nthreads, qps);
	else
		snprintf(what, sizeof(what), "--qps %u", p->qps);
	if (a->max_qp > 0 && qps > (uint32_t)a->max_qp)
		return cqp_fail(CQP_E_USAGE, "%s: above the max_qp %d of %s",
				what, a->max_qp, d->info.name);
	if (a->max_cq > 0 && qps > (uint32_t)a->max_cq)
		return cqp_fail(CQP_E_USAGE,
				"%s: a CQ per QP is above the max_cq %d of %s",
				what, a->max_cq, d->info.name);
	if (p->tx_depth > (uint32_t)a->max_qp_wr)
		return cqp_fail(CQP_E_USAGE,
				"--tx-depth %u exceeds the max_qp_wr %d of %s",
				p->tx_depth, a->max_qp_wr, d->info.name);
	/* With --srq the receives sit on the one SRQ, not on the QPs. */
	if (p->srq && !a->max_srq)
		return cqp_fail(CQP_E_USAGE,
				"--srq: %s has no shared receive queues",
				d->info.name);
	if (p->srq && p->rx_depth > (uint32_t)a->max_srq_wr)
		return cqp_fail(CQP_E_USAGE,
				"--rx-depth %u exceeds the max_srq_wr %d of %s "
				"(with --srq it is the shared queue's depth)",
				p->rx_depth, a->max_srq_wr, d->info.name);
	if (!p->srq && p->rx_depth > (uint32_t)a->max_qp_wr)
		return cqp_fail(CQP_E_USAGE,
				"--rx-depth %u exceeds the max_qp_wr %d of %s",
				p->rx_depth, a->max_qp_wr, d->info.name);
	if (p->cq_depth && cqe > (uint32_t)a->max_cqe)
		return cqp_fail(CQP_E_USAGE,
				"--cq-depth %u exceeds the max_cqe %d of %s",
				p->cq_depth, a->max_cqe, d->info.name);
	if (cqe > (uint32_t)a->max_cqe)
		return cqp_fail(CQP_E_USAGE,
				"--tx-depth %u + --rx-depth %u make a CQ of "
				"%" PRIu32 " entries, above the max_cqe %d of "
				"%s: lower them, or set --cq-depth",
				p->tx_depth, p->rx_depth, cqe, a->max_cqe,
				d->info.name);
	return 0;
}

enum ibv_mtu cqp_mtu_enum(uint32_t bytes)
{
	switch (bytes) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 1024:
		return IBV_MTU_1024;
	case 2048:
		return IBV_MTU_2048;
	case 4096:
		return IBV_MTU_4096;
	default:
		return 0;
	}
}

uint32_t cqp_mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 0;
}

void cqp_dev_port_facts(const struct cqp_dev *d, struct cqp_port_facts *f)
{
	union ibv_gid g0;

	memset(f, 0, sizeof(*f));
	f->active_mtu = cqp_mtu_bytes(d->port_attr.active_mtu);
	f->ethernet = d->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
	f->lid = d->port_attr.lid;
	if (ibv_query_gid(d->ctx, d->port, 0, &g0) == 0)
		for (int i = 0; i < 8; i++)
			f->subnet_prefix = f->subnet_prefix << 8 | g0.raw[i];
	/* The caller says whether --gid-index chose it. */
	f->has_gid = f->ethernet;
	f->gid = d->gid;
}

int cqp_dev_gid_toward(struct cqp_dev *d, const union ibv_gid *peer)
{
	int i;

	if (!d->gids)
		return 0;
	i = cqp_fabric_gid_for_peer(d->gids, d->ngids, d->gid_index, peer,
				    d->info.name);
	if (i < 0 || i == d->gid_index)
		return i < 0 ? i : 0;
	d->gid_index = i;
	d->gid = d->gids[i].gid;
	d->gid_type = d->gids[i].type;
	info_gid(d);
	return 0;
}

int cqp_buf_alloc(struct cqp_buf *b, struct cqp_dev *d, size_t len, int access)
{
	struct ibv_pd *pd = d->pd;
	long page = sysconf(_SC_PAGESIZE);
	size_t alloc = (len + (size_t)page - 1) / (size_t)page * (size_t)page;

	memset(b, 0, sizeof(*b));
	if (posix_memalign(&b->addr, (size_t)page,
			   alloc ? alloc : (size_t)page))
		return cqp_fail(CQP_E_NOMEM, "cannot allocate %zu bytes", len);
	memset(b->addr, 0x5a, alloc ? alloc : (size_t)page);
	b->len = len;
	/* PCIe relaxed ordering where the device takes it (perftest 6.x
	 * does the same); an optional flag, but an old kernel may refuse.
	 * Not where the CPU polls the memory: a message's last bytes could
	 * land before the rest. */
	bool polled = access & CQP_BUF_POLLED;

	access &= ~CQP_BUF_POLLED;
	if (!polled)
		b->mr = ibv_reg_mr(pd, b->addr, len ? len : 1,
				   access | IBV_ACCESS_RELAXED_ORDERING);
	if (polled || (!b->mr && errno == EINVAL))
		b->mr = ibv_reg_mr(pd, b->addr, len ? len : 1, access);
	if (!b->mr) {
		int err = errno;

		free(b->addr);
		b->addr = NULL;
		return cqp_fail(CQP_E_DEVICE, "ibv_reg_mr of %zu bytes: %s%s",
				len, strerror(err),
				err == ENOMEM ? " (check ulimit -l)" : "");
	}
	d->held.registered_bytes += b->mr->length;
	return 0;
}

void cqp_buf_free(struct cqp_buf *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	free(b->addr);
	memset(b, 0, sizeof(*b));
}

void cqp_endpoints_local(struct cqp_endpoint *ep, struct ibv_qp *const *qps,
			 unsigned n, const struct cqp_dev *d)
{
	for (unsigned i = 0; i < n; i++) {
		ep[i].qpn = qps[i]->qp_num;
		ep[i].psn = (uint32_t)random() & 0xffffff;
		ep[i].lid = d->port_attr.lid;
		ep[i].gid = d->gid;
		ep[i].gid_index = (uint32_t)d->gid_index;
	}
}

static struct ibv_qp *try_create(struct cqp_dev *d,
				 const struct cqp_qp_req *req, uint32_t inl)
{
	struct ibv_qp_init_attr a = {
	    .send_cq = req->send_cq,
	    .recv_cq = req->recv_cq,
	    .srq = req->srq,
	    .qp_type = req->type,
	    .cap =
		{
		    .max_send_wr = req->max_send_wr,
		    .max_recv_wr = req->srq ? 0 : req->max_recv_wr,
		    .max_send_sge = req->max_send_sge ? req->max_send_sge : 1,
		    .max_recv_sge = 1,
		    .max_inline_data = inl,
		},
	};
	/* Some providers refuse without setting errno (bnxt_re's inline
	 * limit): 0 then reads "refused", not a stale reason. */
	errno = 0;
	return ibv_create_qp(d->pd, &a);
}

struct inline_probe {
	struct cqp_dev *d;
	const struct cqp_qp_req *req;
};

static bool inline_fits(void *arg, uint32_t v)
{
	struct inline_probe *pr = arg;
	struct ibv_qp *qp = try_create(pr->d, pr->req, v);

	if (qp)
		ibv_destroy_qp(qp);
	return qp != NULL;
}

/* The auto inline grant of d for QPs shaped like req, when bisected. */
static bool inline_known(const struct cqp_dev *d, const struct cqp_qp_req *req)
{
	return d->inline_auto.known && d->inline_auto.type == req->type &&
	       d->inline_auto.send_wr == req->max_send_wr &&
	       d->inline_auto.recv_wr == req->max_recv_wr &&
	       d->inline_auto.srq == (req->srq != NULL);
}

static void inline_learn(struct cqp_dev *d, const struct cqp_qp_req *req,
			 uint32_t grant)
{
	d->inline_auto.known = true;
	d->inline_auto.type = req->type;
	d->inline_auto.send_wr = req->max_send_wr;
	d->inline_auto.recv_wr = req->max_recv_wr;
	d->inline_auto.srq = req->srq != NULL;
	d->inline_auto.grant = grant;
}

int cqp_qp_create(struct cqp_dev *d, const struct cqp_qp_req *req,
		  struct ibv_qp **qp, uint32_t *granted_inline)
{
	struct inline_probe pr = {d, req};
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	bool known = req->inline_size < 0 && inline_known(d, req);
	uint32_t inl = known		      ? d->inline_auto.grant
		       : req->inline_size < 0 ? CQP_AUTO_INLINE
					      : (uint32_t)req->inline_size;
	int err;

	/* Both callers size the queues from --tx-depth and --rx-depth; on
	 * an SRQ the QP has no receive queue (try_create asks for none). */
	if (req->max_send_wr > (uint32_t)d->attr.max_qp_wr)
		return cqp_fail(
		    CQP_E_USAGE, "--tx-depth %u exceeds the max_qp_wr %d of %s",
		    req->max_send_wr, d->attr.max_qp_wr, d->info.name);
	if (!req->srq && req->max_recv_wr > (uint32_t)d->attr.max_qp_wr)
		return cqp_fail(
		    CQP_E_USAGE, "--rx-depth %u exceeds the max_qp_wr %d of %s",
		    req->max_recv_wr, d->attr.max_qp_wr, d->info.name);
	*qp = try_create(d, req, inl);
	err = errno;
	/* Devices report no inline limit, and some refuse a large one
	 * without EINVAL (bnxt_re: NULL, errno untouched): any failure
	 * with inline data asks how much the device grants.  A known grant
	 * that fails is another failure: no second probe. */
	if (!*qp && inl > 0 && !known) {
		uint32_t most = cqp_fabric_bisect(inl - 1, inline_fits, &pr);

		if ((most > 0 || inline_fits(&pr, 0)) && req->inline_size > 0)
			return cqp_fail(CQP_E_USAGE,
					"--inline %u: %s grants at most %u "
					"bytes of inline data",
					inl, d->info.name, most);
		if (req->inline_size < 0) {
			inl = most;
			inline_learn(d, req, most);
			*qp = try_create(d, req, inl);
			err = errno;
		}
	}
	if (!*qp)
		return cqp_fail(CQP_E_DEVICE,
				"ibv_create_qp on %s (send %u, recv %u, "
				"inline %u): %s",
				d->info.name, req->max_send_wr,
				req->max_recv_wr, inl,
				err ? strerror(err) : "refused");
	/* The device may round the caps up: report what it really gave. */
	d->held.qps++;
	if (ibv_query_qp(*qp, &attr, IBV_QP_CAP, &init) == 0) {
		*granted_inline = init.cap.max_inline_data;
		d->held.recv_wqes += req->srq ? 0 : init.cap.max_recv_wr;
	} else {
		*granted_inline = inl;
		d->held.recv_wqes += req->srq ? 0 : req->max_recv_wr;
	}
	return 0;
}

uint32_t cqp_dev_rd_atom(const struct cqp_dev *d)
{
	int n = d->attr.max_qp_rd_atom < d->attr.max_qp_init_rd_atom
		    ? d->attr.max_qp_rd_atom
		    : d->attr.max_qp_init_rd_atom;

	/* The QP attribute is 8 bits wide. */
	return n < 1 ? 1 : n > 255 ? 255 : (uint32_t)n;
}

uint32_t cqp_rd_atom_agreed(const struct cqp_endpoint *local,
			    const struct cqp_endpoint *remote)
{
	uint32_t a = local->rd_atom, b = remote->rd_atom;

	if (!a || !b)
		return 1;
	return a < b ? a : b;
}

int cqp_qp_init(struct ibv_qp *qp, const struct cqp_dev *d, int access)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = d->pkey_index;
	a.port_num = d->port;
	a.qp_access_flags = access;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS))
		return cqp_fail(CQP_E_DEVICE, "QP %u to INIT: %s", qp->qp_num,
				strerror(errno));
	return 0;
}

int cqp_rc_qp_connect(struct ibv_qp *qp, const struct cqp_dev *d,
		      const struct cqp_endpoint *local,
		      const struct cqp_endpoint *remote, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a;
	int rc;

	if (d->grh &&
	    (rc = cqp_fabric_sgid_index_ok(d->gid_index, d->info.name)) < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = remote->qpn;
	a.rq_psn = remote->psn;
	a.max_dest_rd_atomic = (uint8_t)(local->rd_atom ? local->rd_atom : 1);
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = remote->lid;
	a.ah_attr.port_num = d->port;
	a.ah_attr.sl = d->sl;
	if (d->grh) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.traffic_class = d->tclass;
		a.ah_attr.grh.dgid = remote->gid;
		a.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
		a.ah_attr.grh.hop_limit = 64;
	}
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return cqp_fail(CQP_E_DEVICE, "QP %u to RTR (remote QP %u): %s",
				qp->qp_num, remote->qpn, strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = local->psn;
	a.timeout = 14; /* 67 ms: a dead peer errors out in about 0.5 s */
	a.retry_cnt = 7;
	a.rnr_retry = 7; /* the receiver reposts; wait for it */
	a.max_rd_atomic = (uint8_t)cqp_rd_atom_agreed(local, remote);
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			      IBV_QP_MAX_QP_RD_ATOMIC))
		return cqp_fail(CQP_E_DEVICE, "QP %u to RTS: %s", qp->qp_num,
				strerror(errno));
	return 0;
}

int cqp_ud_qp_init(struct ibv_qp *qp, const struct cqp_dev *d, uint32_t qkey)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = d->pkey_index;
	a.port_num = d->port;
	a.qkey = qkey;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_QKEY))
		return cqp_fail(CQP_E_DEVICE, "UD QP %u to INIT: %s",
				qp->qp_num, strerror(errno));
	return 0;
}

int cqp_ud_qp_rts(struct ibv_qp *qp, uint32_t psn)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return cqp_fail(CQP_E_DEVICE, "UD QP %u to RTR: %s", qp->qp_num,
				strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn & 0xffffff;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return cqp_fail(CQP_E_DEVICE, "UD QP %u to RTS: %s", qp->qp_num,
				strerror(errno));
	return 0;
}

int cqp_ah_create(struct cqp_dev *d, const union ibv_gid *gid, uint16_t lid,
		  struct ibv_ah **ah)
{
	struct ibv_ah_attr a;
	char text[INET6_ADDRSTRLEN];
	int rc;

	if ((d->grh || !lid) &&
	    (rc = cqp_fabric_sgid_index_ok(d->gid_index, d->info.name)) < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.dlid = lid;
	a.port_num = d->port;
	a.sl = d->sl;
	/* A multicast destination (no LID here) always needs its GRH. */
	if (d->grh || !lid) {
		a.is_global = 1;
		a.grh.traffic_class = d->tclass;
		a.grh.dgid = *gid;
		a.grh.sgid_index = (uint8_t)d->gid_index;
		a.grh.hop_limit = 64;
	}
	*ah = ibv_create_ah(d->pd, &a);
	if (!*ah) {
		cqp_gid_str(gid, text, sizeof(text));
		return cqp_fail(CQP_E_DEVICE,
				"ibv_create_ah towards GID %s (from GID index "
				"%d): %s",
				text, d->gid_index, strerror(errno));
	}
	return 0;
}

int cqp_srq_create(struct cqp_dev *d, uint32_t max_wr, struct ibv_srq **srq)
{
	struct ibv_srq_init_attr a;

	if (!d->attr.max_srq)
		return cqp_fail(CQP_E_USAGE,
				"--srq: %s has no shared receive "
				"queues",
				d->info.name);
	if (max_wr > (uint32_t)d->attr.max_srq_wr)
		return cqp_fail(CQP_E_USAGE,
				"--rx-depth %u: %s allows at most %d receives "
				"on a shared receive queue",
				max_wr, d->info.name, d->attr.max_srq_wr);
	memset(&a, 0, sizeof(a));
	a.attr.max_wr = max_wr;
	a.attr.max_sge = 1;
	*srq = ibv_create_srq(d->pd, &a);
	if (!*srq)
		return cqp_fail(CQP_E_DEVICE,
				"ibv_create_srq (%u receives): %s", max_wr,
				strerror(errno));
	/* ibv_create_srq writes back what it created. */
	d->held.srqs++;
	d->held.recv_wqes += a.attr.max_wr;
	return 0;
}
