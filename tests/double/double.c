/* SPDX-License-Identifier: BSD-2-Clause */
/* The device double's personalities, its device-level verbs and its
 * faults (double.h says how it is used). */
#include "double.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Each row imitates the provider named, from its source:
 * - mlx5: kernel drivers/infiniband/hw/mlx5/main.c (cq_moderation_caps:
 *   MLX5_MAX_CQ_COUNT 0xffff, MLX5_MAX_CQ_PERIOD 0xfff) and cq.c
 *   (mlx5_ib_modify_cq: EINVAL above the period); the PRM's CQ context:
 *   cq_max_count and cq_period, 0 disabling either trigger.  main.c's
 *   query_device: max_qp_rd_atom 1 << log_max_ra_res_qp and
 *   max_qp_init_rd_atom 1 << log_max_ra_req_qp (16 on ConnectX-4 to 6);
 *   qp.c (mlx5_ib_modify_qp): max_rd_atomic or max_dest_rd_atomic above
 *   them is EINVAL.
 * - bnxt_re: rdma-core providers/bnxt_re/verbs.c (bnxt_re_check_qp_limits:
 *   max_inline_data above BNXT_RE_MAX_INLINE_SIZE, 0x60, refused; the
 *   create returns NULL before errno is set); kernel bnxt_re/ib_verbs.c
 *   (bnxt_re_query_device: atomic_cap IB_ATOMIC_NONE, GLOB only where the
 *   firmware says is_atomic, which older kernels never asked).
 * - irdma: kernel drivers/infiniband/hw/irdma/verbs.c (an iWARP port:
 *   node type RNIC, transport iWARP; no CQ moderation verb). */
static const struct dbl_personality personalities[] = {
    {.name = "mlx5-roce",
     .moderation = true,
     .own_channels = true,
     .arm_sees_unpolled = true,
     .ports = 2,
     .max_cq_count = 0xffff,
     .max_cq_period = 0xfff,
     .max_rd_atom = 16},
    {.name = "mlx5-ib",
     .moderation = true,
     .own_channels = true,
     .arm_sees_unpolled = true,
     .ports = 1,
     .infiniband = true,
     .max_cq_count = 0xffff,
     .max_cq_period = 0xfff,
     .max_rd_atom = 16},
    {.name = "bnxt_re",
     .ports = 1,
     .max_inline = 0x60,
     .inline_errno_kept = true,
     .no_atomics = true},
    {.name = "irdma", .ports = 1, .iwarp = true},
};

struct dbl_state dbl = {
    .lock = PTHREAD_MUTEX_INITIALIZER, .epfd = -1, .wake = {-1, -1}};

void *dbl_real(const char *sym)
{
	void *f = dlsym(RTLD_NEXT, sym);

	if (!f) {
		fprintf(stderr, "cqpdouble: no next %s: %s\n", sym, dlerror());
		abort();
	}
	return f;
}

uint64_t dbl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void dbl_log(const char *fmt, ...)
{
	const char *path = getenv("CQPERF_TEST_DOUBLE_LOG");
	FILE *f;
	va_list ap;

	if (!path || !(f = fopen(path, "a")))
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static int bad_env(const char *what, const char *v)
{
	fprintf(stderr, "cqpdouble: %s: cannot read '%s'\n", what, v);
	return -1;
}

/* "port_err:2@500,send_enomem@100": see double.h. */
static int parse_faults(const char *s, struct dbl_fault *f)
{
	char buf[256], *save = NULL;

	f->port_err_ms = f->qp_fatal_ms = f->cq_err_ms = -1;
	if (!s || !*s)
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		long long a, b;

		if (sscanf(t, "port_err:%lld@%lld", &a, &b) == 2) {
			f->port_err_port = (int)a;
			f->port_err_ms = b;
		} else if (sscanf(t, "qp_fatal@%lld", &a) == 1) {
			f->qp_fatal_ms = a;
		} else if (sscanf(t, "cq_err@%lld", &a) == 1) {
			f->cq_err_ms = a;
		} else if (sscanf(t, "send_enomem@%lld", &a) == 1 && a > 0) {
			f->send_enomem_at = (uint64_t)a;
		} else if (sscanf(t, "wc_rnr@%lld", &a) == 1 && a > 0) {
			f->wc_rnr_at = (uint64_t)a;
		} else if (!strcmp(t, "no_relaxed_ordering")) {
			f->no_relaxed_ordering = true;
		} else if (!strcmp(t, "send_late")) {
			f->send_late = true;
		} else if (!strcmp(t, "no_rd_atom")) {
			f->no_rd_atom = true;
		} else {
			return bad_env("CQPERF_TEST_FAULT", t);
		}
	}
	return 0;
}

/* Once per process: the personality and the faults; -1 on a bad value. */
static int setup(void)
{
	static int done, rc;
	const char *name = getenv("CQPERF_TEST_DEVICE");

	if (done)
		return rc;
	done = 1;
	if (name && *name) {
		for (size_t i = 0;
		     i < sizeof(personalities) / sizeof(personalities[0]); i++)
			if (!strcmp(name, personalities[i].name))
				dbl.p = &personalities[i];
		if (!dbl.p)
			rc = bad_env("CQPERF_TEST_DEVICE (mlx5-roce, mlx5-ib, "
				     "bnxt_re or irdma)",
				     name);
	}
	if (!rc)
		rc = parse_faults(getenv("CQPERF_TEST_FAULT"), &dbl.fault);
	return rc;
}

static bool active(void)
{
	return dbl.p != NULL;
}

/* Port 2 and above of a multi-port personality: down, Ethernet. */
static int fake_port_attr(struct ibv_context *ctx, struct ibv_port_attr *a)
{
	int rc = dbl.query_port(ctx, 1, a, sizeof(*a));

	if (rc)
		return rc;
	a->state = IBV_PORT_DOWN;
	a->phys_state = 3; /* Disabled */
	a->active_mtu = IBV_MTU_1024;
	return 0;
}

static int query_port(struct ibv_context *ctx, uint8_t port,
		      struct ibv_port_attr *a, size_t len)
{
	int rc;

	if (port > 1 && port <= dbl.p->ports)
		return fake_port_attr(ctx, a);
	rc = dbl.query_port(ctx, port, a, len);
	if (rc || port != 1)
		return rc;
	if (dbl.p->infiniband) {
		/* The node's LID: see double_ib.c. */
		a->link_layer = IBV_LINK_LAYER_INFINIBAND;
		a->lid = dbl.ib_lid;
		a->sm_lid = 1;
		a->lmc = 0;
	}
	return 0;
}

static void patch_attr(struct ibv_device_attr *a)
{
	a->phys_port_cnt = dbl.p->ports;
	if (dbl.p->max_rd_atom) {
		a->max_qp_rd_atom = dbl.p->max_rd_atom;
		a->max_qp_init_rd_atom = dbl.p->max_rd_atom;
	}
	if (dbl.p->no_atomics)
		a->atomic_cap = IBV_ATOMIC_NONE;
	if (dbl.fault.no_rd_atom)
		a->max_qp_rd_atom = a->max_qp_init_rd_atom = 0;
}

static int query_device_ex(struct ibv_context *ctx,
			   const struct ibv_query_device_ex_input *in,
			   struct ibv_device_attr_ex *a, size_t len)
{
	int rc = dbl.query_device_ex(ctx, in, a, len);

	if (rc)
		return rc;
	patch_attr(&a->orig_attr);
	a->cq_mod_caps.max_cq_count = dbl.p->max_cq_count;
	a->cq_mod_caps.max_cq_period = dbl.p->max_cq_period;
	return 0;
}

int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	static int (*real)(struct ibv_context *, struct ibv_device_attr *);
	int rc;

	if (!real)
		real = dbl_real("ibv_query_device");
	rc = real(ctx, a);
	if (!rc && active())
		patch_attr(a);
	return rc;
}

static int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad)
{
	uint64_t n = __atomic_add_fetch(&dbl.sends, 1, __ATOMIC_RELAXED);

	if (n == dbl.fault.send_enomem_at) {
		*bad = wr;
		dbl_log("fault send_enomem %llu", (unsigned long long)n);
		return ENOMEM;
	}
	return dbl.post_send(qp, wr, bad);
}

struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
	static struct ibv_context *(*real)(struct ibv_device *);
	struct ibv_context *ctx;
	struct verbs_context *v;

	if (!real)
		real = dbl_real("ibv_open_device");
	if (setup() < 0) {
		errno = EINVAL;
		return NULL;
	}
	ctx = real(dev);
	if (!ctx || !active())
		return ctx;
	v = verbs_get_ctx(ctx);
	if (!v) {
		fprintf(stderr, "cqpdouble: %s has no extended context\n",
			ibv_get_device_name(dev));
		abort();
	}
	if (!dbl.opened_ns)
		dbl.opened_ns = dbl_now_ns();
	dbl.query_port = v->query_port;
	v->query_port = query_port;
	dbl.query_device_ex = v->query_device_ex;
	v->query_device_ex = query_device_ex;
	dbl.post_send = ctx->ops.post_send;
	ctx->ops.post_send = post_send;
	if (dbl.p->iwarp) {
		dev->node_type = IBV_NODE_RNIC;
		dev->transport_type = IBV_TRANSPORT_IWARP;
	}
	if (dbl.p->infiniband)
		dbl_ib_open(ctx);
	dbl_cq_patch(ctx);
	dbl_log("open %s as %s", ibv_get_device_name(dev), dbl.p->name);
	return ctx;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	static struct ibv_qp *(*real)(struct ibv_pd *,
				      struct ibv_qp_init_attr *);
	struct ibv_qp *qp;

	if (!real)
		real = dbl_real("ibv_create_qp");
	dbl_log("create_qp inline %u", a->cap.max_inline_data);
	/* rdma-core providers/bnxt_re/verbs.c: bnxt_re_create_qp returns
	 * NULL when bnxt_re_check_qp_limits finds max_inline_data over
	 * BNXT_RE_MAX_INLINE_SIZE (96), and sets no errno. */
	if (active() && dbl.p->max_inline &&
	    a->cap.max_inline_data > dbl.p->max_inline) {
		if (!dbl.p->inline_errno_kept)
			errno = EINVAL;
		return NULL;
	}
	qp = real(pd, a);
	if (qp && !dbl.first_qp)
		dbl.first_qp = qp;
	return qp;
}

/* ibv_reg_mr with an optional flag (relaxed ordering is one) lands here. */
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len,
				uint64_t iova, unsigned int access)
{
	static struct ibv_mr *(*real)(struct ibv_pd *, void *, size_t, uint64_t,
				      unsigned int);

	if (!real)
		real = dbl_real("ibv_reg_mr_iova2");
	if (dbl.fault.no_relaxed_ordering &&
	    (access & IBV_ACCESS_RELAXED_ORDERING)) {
		dbl_log("fault no_relaxed_ordering");
		errno = EINVAL;
		return NULL;
	}
	return real(pd, addr, len, iova, access);
}

/* A due fault as an async event; false when none is due. */
static bool due(int64_t at_ms, bool *sent)
{
	if (at_ms < 0 || *sent ||
	    dbl_now_ns() - dbl.opened_ns < (uint64_t)at_ms * 1000000u)
		return false;
	*sent = true;
	return true;
}

int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	static int (*real)(struct ibv_context *, struct ibv_async_event *);
	struct dbl_fault *f = &dbl.fault;

	if (!real)
		real = dbl_real("ibv_get_async_event");
	memset(ev, 0, sizeof(*ev));
	if (due(f->port_err_ms, &f->port_err_sent)) {
		ev->event_type = IBV_EVENT_PORT_ERR;
		ev->element.port_num = f->port_err_port;
	} else if (dbl.first_qp && due(f->qp_fatal_ms, &f->qp_fatal_sent)) {
		ev->event_type = IBV_EVENT_QP_FATAL;
		ev->element.qp = dbl.first_qp;
	} else if (dbl.first_cq && due(f->cq_err_ms, &f->cq_err_sent)) {
		ev->event_type = IBV_EVENT_CQ_ERR;
		ev->element.cq = dbl.first_cq;
	} else {
		return real(ctx, ev);
	}
	dbl_log("async %s", ibv_event_type_str(ev->event_type));
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *ev)
{
	static void (*real)(struct ibv_async_event *);

	if (!real)
		real = dbl_real("ibv_ack_async_event");
	/* The ones the double made were never counted by libibverbs: the
	 * kernel's count for a QP or CQ would underflow. */
	switch (ev->event_type) {
	case IBV_EVENT_PORT_ERR:
		if (dbl.fault.port_err_sent)
			return;
		break;
	case IBV_EVENT_QP_FATAL:
		if (dbl.fault.qp_fatal_sent)
			return;
		break;
	case IBV_EVENT_CQ_ERR:
		if (dbl.fault.cq_err_sent)
			return;
		break;
	default:
		break;
	}
	real(ev);
}
