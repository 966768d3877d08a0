/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/rc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "engine/path.h"

/* Write's tail slots follow the payload bytes, 8-aligned. */
static uint64_t tails_at(uint64_t buf_size)
{
	return (buf_size + 7) / 8 * 8;
}

/* Where a SEND's receives land: on pages of their own after the send
 * region (0: in it, for verbs that receive no payload).  Sharing them
 * made a 4 KiB ping-pong send from the page it had just received into,
 * moving 64 cache lines between the two CPUs each way per exchange:
 * +17 % p50 against ib_send_lat, whose receive buffers are apart too. */
static bool recv_apart(uint32_t verbs)
{
	return verbs & 1u << CQP_VERB_SEND;
}

static uint64_t recv_at(uint32_t verbs, uint64_t send_len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (!recv_apart(verbs))
		return 0;
	return (send_len + page - 1) / page * page;
}

/* The verbs' view of QP i's buffer: its tail slots, and no stale bytes
 * where a WRITE's sequence number will be polled; receives land at rat
 * (recv_at) of its send_len bytes. */
static void verb_qp_init(struct cqp_rc *rc, const struct cqp_params *p,
			 unsigned i, uint64_t buf_size, uint64_t send_len,
			 uint64_t rat)
{
	struct cqp_verb_qp *q = &rc->vq[i];

	q->buf = rc->bufs[i].addr;
	q->lkey = rc->bufs[i].mr->lkey;
	q->rbuf = q->buf + rat;
	q->rlen = (uint32_t)(rat ? buf_size : send_len);
	q->counter_at = tails_at(buf_size);
	memset(q->buf + q->counter_at, 0, 8);
	if (!(rc->verbs & 1u << CQP_VERB_WRITE))
		return;
	q->tails = (uint64_t *)(q->buf + q->counter_at + 8);
	q->nslots = p->tx_depth;
	cqp_verb_clear_tails(q->buf, buf_size, p->size);
}

static int create_qps(struct cqp_rc *rc, const struct cqp_params *p,
		      uint64_t buf_size, bool target)
{
	bool write = rc->verbs & 1u << CQP_VERB_WRITE;
	int access = cqp_verb_access(rc->verbs, target) |
		     (target && write ? CQP_BUF_POLLED : 0);

	/* iWARP places a READ's response as a tagged WRITE into the
	 * requester's buffer, which must allow it. */
	if (!target && rc->verbs & 1u << CQP_VERB_READ &&
	    rc->dev.ctx->device->transport_type == IBV_TRANSPORT_IWARP)
		access |= IBV_ACCESS_REMOTE_WRITE;
	unsigned total = p->qps * rc->comps.n;
	uint64_t extra = cqp_verb_extra(rc->verbs, p->tx_depth);
	int ret;

	rc->qps = calloc(total, sizeof(*rc->qps));
	rc->bufs = calloc(total, sizeof(*rc->bufs));
	rc->vq = calloc(total, sizeof(*rc->vq));
	if (!rc->qps || !rc->bufs || !rc->vq)
		return cqp_fail(CQP_E_NOMEM, "out of memory for %u QPs", total);
	for (unsigned i = 0; i < total; i++) {
		struct cqp_comp *comp = &rc->comps.comp[i / p->qps];
		/* A group's server: QP k of every client on CQ k. */
		struct ibv_cq *cq = cqp_comp_cq(comp, i % p->qps % comp->ncq);
		struct cqp_qp_req req = {
		    .type = IBV_QPT_RC,
		    .send_cq = cq,
		    .recv_cq = cq,
		    .srq = rc->srq,
		    .max_send_wr = p->tx_depth,
		    .max_recv_wr = p->rx_depth,
		    .inline_size = p->inline_size,
		    .max_send_sge = write ? 2 : 1,
		};
		uint32_t granted;

		ret = cqp_qp_create(&rc->dev, &req, &rc->qps[i], &granted);
		if (ret < 0)
			return ret;
		rc->nqp++;
		if (rc->srq && (ret = cqp_senders_add(
				    &rc->byqpn, rc->qps[i]->qp_num, 0, i)) < 0)
			return ret;
		ret = cqp_qp_init(rc->qps[i], &rc->dev,
				  cqp_verb_access(rc->verbs, true));
		if (ret < 0)
			return ret;
		rc->inline_granted = i == 0 || granted < rc->inline_granted
					 ? granted
					 : rc->inline_granted;
		uint64_t send_len = tails_at(buf_size) + extra;
		uint64_t rat = recv_at(rc->verbs, send_len);

		ret = cqp_buf_alloc(&rc->bufs[i], &rc->dev,
				    rat ? rat + buf_size : send_len, access);
		if (ret < 0)
			return ret;
		verb_qp_init(rc, p, i, buf_size, send_len, rat);
	}
	return 0;
}

static int connect_qps(struct cqp_rc *rc, struct cqp_run *run)
{
	struct cqp_endpoint *local = calloc(rc->nqp, sizeof(*local));
	struct cqp_endpoint *remote = calloc(rc->nqp, sizeof(*remote));
	int ret;

	if (!local || !remote) {
		ret = cqp_fail(CQP_E_NOMEM, "out of memory for endpoints");
		goto out;
	}
	cqp_endpoints_local(local, rc->qps, rc->nqp, &rc->dev);
	for (unsigned i = 0; i < rc->nqp; i++) {
		local[i].addr = (uintptr_t)rc->bufs[i].addr;
		local[i].rkey = rc->bufs[i].mr->rkey;
		local[i].rd_atom = cqp_dev_rd_atom(&rc->dev);
	}
	if (run->group) {
		/* Client i's QPs, all its threads', are ours from i * n. */
		unsigned n = rc->nqp / run->group->n;

		ret = 0;
		for (unsigned i = 0; ret == 0 && i < run->group->n; i++)
			ret = cqp_group_exchange_endpoints(
			    run->group, i, local + i * n, remote + i * n, n);
	} else {
		ret = cqp_session_exchange_endpoints(run->s, local, remote,
						     rc->nqp);
	}
	for (unsigned i = 0; ret == 0 && i < rc->nqp; i++) {
		rc->vq[i].raddr = remote[i].addr;
		rc->vq[i].rkey = remote[i].rkey;
	}
	if (ret == 0)
		rc->rd_atom = cqp_rd_atom_agreed(&local[0], &remote[0]);
	for (unsigned i = 0; ret == 0 && i < rc->nqp; i++)
		ret = cqp_rc_qp_connect(rc->qps[i], &rc->dev, &local[i],
					&remote[i], rc->mtu);
	/* Neither side may send before the other's QPs are ready. */
	if (ret == 0)
		ret = cqp_run_barrier(run, "connected");
out:
	free(local);
	free(remote);
	return ret;
}

uint64_t cqp_rc_buf_size(const struct cqp_params *p)
{
	return p->all ? CQP_RC_ALL_MAX : p->size;
}

struct cqp_mem_need cqp_rc_mem_need(const struct cqp_params *p)
{
	/* A group's server holds every client's QPs. */
	uint64_t qps = (uint64_t)p->qps * p->nthreads * p->clients;
	uint64_t regions = recv_apart(cqp_params_verbs(p)) ? 2 : 1;

	/* A CQ per queue pair, shared by its sends and receives. */
	return (struct cqp_mem_need){cqp_rc_buf_size(p) * regions * qps,
				     cqp_queue_mem(p, qps, qps, qps)};
}

uint32_t cqp_rc_window(const struct cqp_rc *rc, const struct cqp_params *p,
		       uint32_t verb)
{
	if (cqp_verb_rd_atom(verb) && rc->rd_atom < p->tx_depth)
		return rc->rd_atom;
	return p->tx_depth;
}

/* A group's server (--clients K): a QP of its own for each QP of each
 * client, so -q K times over per thread (a client's QPs in one block,
 * whichever thread holds them), on the thread's -q CQs: QP k of every
 * client on CQ k, deep enough for all of theirs.  Its targets reap
 * receive completions: SEND and WRITE with immediate. */
static int group_shape(struct cqp_rc *rc, struct cqp_run *run)
{
	struct cqp_params *p = run->p;
	unsigned k = run->group->n;
	/* With --srq a CQ's receives are at most the shared queue's. */
	uint64_t depth = p->srq ? p->rx_depth + (uint64_t)k * p->tx_depth
				: (uint64_t)k * cqp_params_cq_depth(p);
	uint64_t qps = (uint64_t)p->qps * p->nthreads * k;
	uint32_t other =
	    rc->verbs & ~(1u << CQP_VERB_SEND | 1u << CQP_VERB_WRITE_IMM);

	if (other)
		return cqp_fail(CQP_E_USAGE,
				"--verb %s: a server of --clients %u serves "
				"send and write-imm, whose completions it "
				"reaps",
				cqp_verb_name((uint32_t)__builtin_ctz(other)),
				k);
	if (depth > (uint64_t)rc->dev.attr.max_cqe)
		return cqp_fail(CQP_E_USAGE,
				"--clients %u: each CQ would take %llu entries "
				"(%u clients' --rx-depth and --tx-depth), "
				"above %s's %d: fewer clients, or smaller "
				"depths",
				k, (unsigned long long)depth, k,
				rc->dev.info.name, rc->dev.attr.max_cqe);
	if (qps > (uint64_t)rc->dev.attr.max_qp)
		return cqp_fail(CQP_E_USAGE,
				"--clients %u: %llu QPs, above %s's %d", k,
				(unsigned long long)qps, rc->dev.info.name,
				rc->dev.attr.max_qp);
	run->cqs = p->qps;
	p->cq_depth = (uint32_t)depth;
	p->qps *= k;
	return 0;
}

int cqp_rc_setup(struct cqp_rc *rc, struct cqp_run *run, bool receiver,
		 bool target)
{
	const struct cqp_params *p = run->p;
	uint64_t buf_size = cqp_rc_buf_size(p);
	uint32_t mtu;
	int ret;

	memset(rc, 0, sizeof(*rc));
	rc->verbs = cqp_params_verbs(p);
	srandom((unsigned)cqp_now_ns());
	ret = cqp_path_open(&rc->dev, run, true, &mtu);
	if (ret < 0)
		return ret;
	rc->dev_open = true;
	rc->mtu = cqp_mtu_enum(mtu);
	/* iWARP has no atomics, and some RoCE NICs none either. */
	if (rc->verbs & 1u << CQP_VERB_ATOMIC &&
	    rc->dev.attr.atomic_cap == IBV_ATOMIC_NONE)
		return cqp_fail(CQP_E_USAGE,
				"--verb atomic: %s has no atomic operations "
				"(atomic_cap NONE)",
				rc->dev.info.name);
	/* READ and atomics need a device that keeps some in flight on a QP
	 * (max_qp_rd_atom and max_qp_init_rd_atom): with 0 of either,
	 * modify_qp would refuse the QP later, naming nothing. */
	if (rc->verbs & (1u << CQP_VERB_READ | 1u << CQP_VERB_ATOMIC) &&
	    (rc->dev.attr.max_qp_rd_atom < 1 ||
	     rc->dev.attr.max_qp_init_rd_atom < 1))
		return cqp_fail(
		    CQP_E_USAGE,
		    "--verb %s: %s keeps no READ or atomic in "
		    "flight (max_qp_rd_atom %d, max_qp_init_rd_atom "
		    "%d)",
		    rc->verbs & 1u << CQP_VERB_READ ? "read" : "atomic",
		    rc->dev.info.name, rc->dev.attr.max_qp_rd_atom,
		    rc->dev.attr.max_qp_init_rd_atom);
	if (run->group && (ret = group_shape(rc, run)) < 0)
		return ret;
	run->max_size = rc->dev.port_attr.max_msg_sz < buf_size
			    ? rc->dev.port_attr.max_msg_sz
			    : buf_size;
	ret = cqp_bench_comps(&rc->comps, rc->dev.ctx, run, receiver);
	if (ret < 0)
		return ret;
	run->comp = rc->comps.comp;
	run->ncomp = rc->comps.n;
	if (receiver && p->srq) {
		if (p->verify)
			return cqp_fail(CQP_E_USAGE,
					"--verify with --srq: a receive of the "
					"shared queue lands in any QP's "
					"buffer, where no pattern is kept");
		ret = cqp_srq_create(&rc->dev, p->rx_depth, &rc->srq);
		if (ret == 0)
			ret =
			    cqp_senders_init(&rc->byqpn, p->qps * rc->comps.n);
		if (ret < 0)
			return ret;
	}
	ret = create_qps(rc, p, buf_size, target);
	if (ret < 0)
		return ret;
	run->dev.has_inline = true;
	run->dev.inline_size = rc->inline_granted;
	/* The shared queue's receives once, each QP's own otherwise. */
	for (unsigned i = 0; receiver && i < (rc->srq ? 1 : rc->nqp); i++) {
		ret = cqp_rc_post_recvs(rc, i, p->rx_depth);
		if (ret < 0)
			return ret;
	}
	if ((ret = connect_qps(rc, run)) < 0)
		return ret;
	/* --verify of READ: the data step 1 will read. */
	for (unsigned i = 0; p->verify && target && i < rc->nqp; i++)
		cqp_verb_fill(rc->vq[i].buf, buf_size, 1, p->size);
	if (rc->verbs & (1u << CQP_VERB_READ | 1u << CQP_VERB_ATOMIC))
		run->dev.rd_atom = rc->rd_atom;
	return 0;
}

void cqp_rc_teardown(struct cqp_rc *rc)
{
	for (unsigned i = 0; i < rc->nqp; i++)
		ibv_destroy_qp(rc->qps[i]);
	if (rc->srq)
		ibv_destroy_srq(rc->srq);
	cqp_senders_free(&rc->byqpn);
	for (unsigned i = 0; rc->bufs && i < rc->nqp; i++)
		cqp_buf_free(&rc->bufs[i]);
	free(rc->qps);
	free(rc->bufs);
	free(rc->vq);
	cqp_comp_set_destroy(&rc->comps);
	if (rc->dev_open)
		cqp_dev_close(&rc->dev);
	memset(rc, 0, sizeof(*rc));
}

void cqp_rc_step_done(struct cqp_rc *rc, const struct cqp_params *p,
		      unsigned first, unsigned n)
{
	if (!(rc->verbs & 1u << CQP_VERB_WRITE))
		return;
	for (unsigned i = first; i < first + n; i++)
		cqp_verb_clear_tails(rc->vq[i].buf, cqp_rc_buf_size(p),
				     p->size);
}

int cqp_rc_post_recvs(struct cqp_rc *rc, unsigned qp, unsigned count)
{
	struct ibv_recv_wr wr[32], *bad;
	struct ibv_sge sge = {
	    .addr = (uintptr_t)rc->vq[qp].rbuf,
	    .length = rc->vq[qp].rlen,
	    .lkey = rc->bufs[qp].mr->lkey,
	};

	/* Chains of up to 32: one call per chain, whatever the count. */
	while (count) {
		unsigned n = count < 32 ? count : 32;
		int err;

		for (unsigned i = 0; i < n; i++) {
			wr[i].wr_id = qp;
			wr[i].sg_list = &sge;
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		}
		err = rc->srq ? ibv_post_srq_recv(rc->srq, wr, &bad)
			      : ibv_post_recv(rc->qps[qp], wr, &bad);
		if (err)
			return cqp_fail(CQP_E_DEVICE,
					"ibv_post_recv on QP %u: %s",
					rc->qps[qp]->qp_num, strerror(err));
		count -= n;
	}
	return 0;
}
