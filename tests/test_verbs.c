/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs.c against a fake device: the libibverbs calls it makes are wrapped
 * at link time (-Wl,--wrap, see Makefile.am), so that a test plays a
 * device's limits and counts the calls.  Covers the limit checks (-q
 * times --threads, --srq against max_srq_wr), the inline probe (once per
 * run, not per QP) and GID indices that do not fit an address handle's
 * 8-bit sgid_index. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/error.h"
#include "base/options.h"
#include "verbs/verbs.h"

/* ---- the fake device ---- */

static uint32_t dev_inline_max = 96; /* bnxt_re-like: more is refused */
static unsigned creates, destroys, live_qps;
static int last_sgid_index = -1;

struct fake_qp {
	struct ibv_qp qp;
	uint32_t inl;
};

struct ibv_qp *__wrap_ibv_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *a);
int __wrap_ibv_destroy_qp(struct ibv_qp *qp);
int __wrap_ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			struct ibv_qp_init_attr *init);
int __wrap_ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
struct ibv_ah *__wrap_ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a);

struct ibv_qp *__wrap_ibv_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *a)
{
	struct fake_qp *q;

	(void)pd;
	creates++;
	/* Refused without errno, as bnxt_re does. */
	if (a->cap.max_inline_data > dev_inline_max)
		return NULL;
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	q->qp.qp_num = 100 + creates;
	q->inl = a->cap.max_inline_data;
	live_qps++;
	return &q->qp;
}

int __wrap_ibv_destroy_qp(struct ibv_qp *qp)
{
	destroys++;
	live_qps--;
	free(qp);
	return 0;
}

int __wrap_ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			struct ibv_qp_init_attr *init)
{
	(void)mask;
	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	init->cap.max_inline_data = ((struct fake_qp *)qp)->inl;
	return 0;
}

int __wrap_ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	(void)qp;
	if (mask & IBV_QP_AV)
		last_sgid_index = attr->ah_attr.grh.sgid_index;
	return 0;
}

static struct ibv_ah fake_ah;

struct ibv_ah *__wrap_ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a)
{
	(void)pd;
	last_sgid_index = a->grh.sgid_index;
	return &fake_ah;
}

static struct ibv_pd fake_pd;

/* A device as ibv_query_device reports it: rxe's numbers unless a test
 * changes them. */
static void fake_dev(struct cqp_dev *d, const char *name)
{
	memset(d, 0, sizeof(*d));
	d->pd = &fake_pd;
	d->attr.max_qp = 1024;
	d->attr.max_cq = 1024;
	d->attr.max_qp_wr = 16384;
	d->attr.max_cqe = 32767;
	d->attr.max_srq = 1024;
	d->attr.max_srq_wr = 16384;
	d->port = 1;
	d->grh = true;
	snprintf(d->info.name, sizeof(d->info.name), "%s", name);
}

static int parse(struct cqp_params *p, enum cqp_tool tool, const char *line)
{
	char buf[512], *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "tool %s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return cqp_params_parse(p, tool, argc, argv, stdout);
}

/* limits(d, tool, line): cqp_dev_check_limits of that command line. */
static int limits(const struct cqp_dev *d, enum cqp_tool tool, const char *line)
{
	struct cqp_params p;

	CHECK(parse(&p, tool, line) == 0);
	cqp_errclear();
	return cqp_dev_check_limits(d, &p);
}

#define HAS(needle) CHECK(strstr(cqp_errmsg(), needle) != NULL)

static void test_limits(void)
{
	struct cqp_dev d;

	fake_dev(&d, "mlx5_0");
	d.attr.max_qp = 100;
	CHECK(limits(&d, CQP_TOOL_CQ_POLL_BW, "-q 50 --threads 2") == 0);
	/* --threads makes a set of -q QPs, and a CQ each, per thread. */
	CHECK(limits(&d, CQP_TOOL_CQ_POLL_BW, "-q 60 --threads 2") ==
	      -CQP_E_USAGE);
	HAS("--qps 60");
	HAS("--threads 2");
	HAS("max_qp 100");
	CHECK(limits(&d, CQP_TOOL_UD_SEND_BW, "-q 101") == -CQP_E_USAGE);
	HAS("--qps 101");
	HAS("max_qp 100");
	fake_dev(&d, "mlx5_0");
	d.attr.max_cq = 64;
	CHECK(limits(&d, CQP_TOOL_CQ_POLL_BW, "-q 40 --threads 2") ==
	      -CQP_E_USAGE);
	HAS("--threads 2");
	HAS("max_cq 64");

	/* --srq: the receives sit on the SRQ, whose limit is max_srq_wr. */
	fake_dev(&d, "bnxt_re0");
	d.attr.max_srq_wr = 4096;
	CHECK(limits(&d, CQP_TOOL_UD_SEND_BW, "--srq -r 4096") == 0);
	CHECK(limits(&d, CQP_TOOL_UD_SEND_BW, "--srq -r 8192") == -CQP_E_USAGE);
	HAS("--rx-depth 8192");
	HAS("max_srq_wr 4096");
	/* ... and not max_qp_wr, which bounds only a QP's own queue. */
	d.attr.max_qp_wr = 1024;
	d.attr.max_srq_wr = 32768;
	CHECK(limits(&d, CQP_TOOL_UD_SEND_LAT, "--srq -r 4096 -t 16") == 0);
	CHECK(limits(&d, CQP_TOOL_UD_SEND_LAT, "-r 4096 -t 16") ==
	      -CQP_E_USAGE);
	HAS("max_qp_wr 1024");
	d.attr.max_srq = 0;
	CHECK(limits(&d, CQP_TOOL_UD_SEND_LAT, "--srq -t 16") == -CQP_E_USAGE);
	HAS("--srq");
}

static struct cqp_qp_req ud_req(uint32_t rx, struct ibv_srq *srq, int32_t inl)
{
	return (struct cqp_qp_req){.type = IBV_QPT_UD,
				   .srq = srq,
				   .max_send_wr = 128,
				   .max_recv_wr = rx,
				   .inline_size = inl};
}

/* Auto inline on a device that grants 96 bytes: the bisection runs for
 * the first QP only, not again for each of 1024. */
static void test_inline_once(void)
{
	struct cqp_dev d;
	struct ibv_qp *qps[1024];
	struct cqp_qp_req req = ud_req(512, NULL, -1);
	uint32_t granted = 0;
	unsigned n = 0;

	fake_dev(&d, "bnxt_re0");
	creates = destroys = 0;
	for (unsigned i = 0; i < 1024; i++) {
		granted = 0;
		if (cqp_qp_create(&d, &req, &qps[n], &granted) != 0)
			break;
		n++;
		CHECK(granted == 96 ||
		      !fprintf(stderr, "QP %u: %u\n", i, granted));
	}
	CHECK(n == 1024);
	/* One QP each, plus one probe: 236 refused, then a bisection. */
	CHECK(creates <= 1024 + 10 ||
	      !fprintf(stderr, "1024 QPs took %u ibv_create_qp calls\n",
		       creates));
	while (n)
		__wrap_ibv_destroy_qp(qps[--n]);
	CHECK(live_qps == 0);

	/* An explicit size above the grant is the user's error. */
	req.inline_size = 200;
	cqp_errclear();
	CHECK(cqp_qp_create(&d, &req, &qps[0], &granted) == -CQP_E_USAGE);
	HAS("--inline 200: bnxt_re0 grants at most 96 bytes");
	req.inline_size = 64;
	CHECK(cqp_qp_create(&d, &req, &qps[0], &granted) == 0 && granted == 64);
	__wrap_ibv_destroy_qp(qps[0]);
}

/* A QP on an SRQ has no receive queue of its own: --rx-depth is the
 * SRQ's depth, above max_qp_wr where max_srq_wr allows it. */
static void test_srq_qp(void)
{
	static char srq_mem[64];
	struct ibv_srq *srq = (struct ibv_srq *)srq_mem;
	struct cqp_dev d;
	struct ibv_qp *qp = NULL;
	struct cqp_qp_req req = ud_req(32768, srq, 0);
	uint32_t granted;

	fake_dev(&d, "rxe0");
	d.attr.max_srq_wr = 65536;
	cqp_errclear();
	CHECK(cqp_qp_create(&d, &req, &qp, &granted) == 0 ||
	      !fprintf(stderr, "%s\n", cqp_errmsg()));
	if (qp)
		__wrap_ibv_destroy_qp(qp);
	req.srq = NULL;
	CHECK(cqp_qp_create(&d, &req, &qp, &granted) == -CQP_E_USAGE);
	HAS("--rx-depth 32768 exceeds the max_qp_wr 16384");
}

/* sgid_index is 8 bits in ibv_ah_attr: GID 300 must be refused, not sent
 * as GID 44. */
static void test_sgid_index(void)
{
	struct cqp_dev d;
	union ibv_gid gid;
	struct ibv_ah *ah = NULL;
	struct ibv_qp qp = {.qp_num = 7};
	struct cqp_endpoint local = {0}, remote = {0};

	memset(&gid, 0, sizeof(gid));
	fake_dev(&d, "rxe0");
	d.gid_index = 255;
	last_sgid_index = -1;
	CHECK(cqp_ah_create(&d, &gid, 0, &ah) == 0 && last_sgid_index == 255);
	d.gid_index = 300;
	last_sgid_index = -1;
	cqp_errclear();
	CHECK(cqp_ah_create(&d, &gid, 0, &ah) == -CQP_E_USAGE);
	CHECK(last_sgid_index == -1);
	HAS("GID index 300");
	HAS("0..255");
	last_sgid_index = -1;
	cqp_errclear();
	CHECK(cqp_rc_qp_connect(&qp, &d, &local, &remote, IBV_MTU_1024) ==
	      -CQP_E_USAGE);
	CHECK(last_sgid_index == -1);
	HAS("GID index 300");
}

int main(void)
{
	test_limits();
	test_inline_once();
	test_srq_qp();
	test_sgid_index();
	return check_done("test_verbs");
}
