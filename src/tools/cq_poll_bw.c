/* SPDX-License-Identifier: BSD-2-Clause */
/* cq_poll_bw: RC bandwidth and message rate from client to server, by
 * --verb, with each side learning of its work in poll, event or hybrid
 * mode (or, the target of a plain WRITE, by polling memory). */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bench.h"
#include "base/error.h"
#include "engine/bw.h"
#include "engine/measure.h"
#include "engine/rc.h"
#include "engine/verb.h"
#include "engine/workers.h"

#define REAP_MAX 1024 /* --poll-batch auto grows to 1024 */

struct bw_ctx {
	struct cqp_rc rc;
	/* Receives reaped per QP over the run (-n: which were warm-up). */
	atomic_uint_fast64_t *received;
};

static int setup(struct cqp_run *run, void *ctx)
{
	struct bw_ctx *c = ctx;
	const struct cqp_params *p = run->p;
	/* A group's server has its clients' QPs: -q after the setup. */
	int rc = cqp_rc_setup(&c->rc, run, !run->is_client, !run->is_client);

	if (rc == 0 && !(c->received = calloc((size_t)p->qps * p->nthreads,
					      sizeof(*c->received))))
		rc = cqp_fail(CQP_E_NOMEM, "out of memory");
	return rc;
}

static void teardown(struct cqp_run *run, void *ctx)
{
	struct bw_ctx *c = ctx;

	(void)run;
	cqp_rc_teardown(&c->rc);
	free(c->received);
	c->received = NULL;
}

/* --threads: thread t sends on, or receives from, the t-th group of -q
 * QPs, on its own engine (run->comp). */
static unsigned first_qp(const struct cqp_run *run)
{
	return run->thread * run->p->qps;
}

static int run_sender(struct cqp_run *run, struct bw_ctx *c, uint64_t size,
		      struct cqp_row *row, struct cqp_cost *mine)
{
	struct cqp_bw_tx tx = {
	    .p = run->p,
	    .comp = run->comp,
	    .qps = c->rc.qps + first_qp(run),
	    .nqp = run->p->qps,
	    .first = first_qp(run),
	    .warmup = run->p->warmup,
	    .rate = cqp_rate_share(run, run->p->rate),
	    .verb = run->verb,
	    .vq = c->rc.vq + first_qp(run),
	    .inline_granted = c->rc.inline_granted,
	    .window = cqp_rc_window(&c->rc, run->p, run->verb),
	};
	uint64_t sent;
	int ret = cqp_bw_send(&tx, size, row, mine, &sent);

	for (unsigned i = 0; ret == 0 && run->p->verify && i < tx.nqp; i++)
		ret = cqp_verb_verify_sent(run->verb, tx.comp, tx.qps[i],
					   &tx.vq[i], size);
	return ret;
}

/* -n: of the receives n0..n0+cnt-1 of a QP, those of a warm-up.  A QP's
 * receives are counted across steps, each step `warmup` then `iters`. */
static uint64_t warm_in(const struct cqp_params *p, uint64_t n0, uint64_t cnt)
{
	uint64_t per = p->warmup + p->iters, warm = 0;

	for (uint64_t x = n0; x < n0 + cnt;) {
		uint64_t at = x % per, run;

		if (at < p->warmup) {
			run = p->warmup - at;
			run = run < n0 + cnt - x ? run : n0 + cnt - x;
			warm += run;
		} else {
			run = per - at;
		}
		x += run;
	}
	return warm;
}

/* Reposts go to the QPs this reap touched, from a list: a scan over every
 * QP per reap delays reposts at high QP counts until the sender meets RNR
 * NAKs.  With --shared-channel the thread reaps any thread's QPs (wr_id
 * is the QP's index in the step), reposts what it reaped, and its
 * measured phase starts at the step's first mark. */
static int run_receiver(struct cqp_run *run, struct bw_ctx *c,
			struct cqp_cost *mine)
{
	const struct cqp_params *p = run->p;
	struct cqp_rc *rc = &c->rc;
	struct cqp_comp *comp = run->comp;
	struct ibv_wc wc[REAP_MAX];
	bool shared = p->shared_channel, began = false;
	unsigned nqp = shared ? p->qps * p->nthreads : p->qps;
	unsigned base = shared ? 0 : first_qp(run);
	unsigned *repost = calloc(nqp, sizeof(*repost));
	unsigned dirty[REAP_MAX];
	unsigned ended = 0;
	uint64_t total = 0, warm = 0; /* every receive; the warm-up's */
	int ret = 0;

	if (!repost)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	cqp_comp_begin(comp);
	while (!cqp_step_done(run, ended, nqp)) {
		unsigned ndirty = 0;

		ret = cqp_comp_reap(comp, wc, REAP_MAX);
		if (ret < 0)
			goto out;
		total += (uint64_t)ret;
		for (int k = 0; k < ret; k++) {
			unsigned q = cqp_rc_wc_qp(rc, &wc[k]) - base;

			if (repost[q]++ == 0)
				dirty[ndirty++] = q;
			if (!(wc[k].wc_flags & IBV_WC_WITH_IMM))
				continue;
			if (wc[k].imm_data == CQP_IMM_END)
				cqp_step_end_seen(run, &ended, nqp);
			else if (wc[k].imm_data == CQP_IMM_MEASURE)
				cqp_step_mark(run, comp);
		}
		cqp_step_look(run, comp, &began);
		for (unsigned d = 0; d < ndirty; d++) {
			unsigned q = dirty[d];
			uint64_t n0 =
			    atomic_fetch_add(&c->received[base + q], repost[q]);

			warm += warm_in(p, n0, repost[q]);
			if ((ret = cqp_rc_post_recvs(rc, base + q, repost[q])) <
			    0)
				goto out;
			repost[q] = 0;
		}
	}
	ret = 0;
	cqp_comp_cost(comp, mine);
	/* -n: the mark rode on QP 0's last warm-up send, and other QPs'
	 * warm-up may still have been reaped after it: count exactly. */
	if (!p->duration_s && p->warmup)
		mine->completions = total - warm;
out:
	free(repost);
	return ret;
}

/* --verb write: the target spins on the last 8 bytes of each of its
 * QPs' buffers until every QP's last message is in.  Its measured phase
 * begins at the first tail of the sender's (CQP_TAIL_PHASE, on every
 * measured WRITE, so it cannot be missed), and it counts exactly the
 * measured messages: each QP's last one's number in that phase. */
static int run_mem_receiver(struct cqp_run *run, struct bw_ctx *c,
			    uint64_t size, struct cqp_cost *mine)
{
	unsigned nqp = run->p->qps, ended = 0, at = 0;
	struct cqp_verb_qp *qs = c->rc.vq + first_qp(run);
	uint64_t measured = 0;
	bool began = false;

	for (unsigned i = 0; i < nqp; i++)
		qs[i].seen = 0; /* tails were cleared at the last step's end */
	cqp_comp_begin(run->comp);
	while (ended < nqp) {
		int ret =
		    cqp_verb_mem_wait(run->comp, qs, nqp, (uint32_t)size, &at);
		uint32_t marks = cqp_tail_marks(qs[at].seen);

		if (ret < 0)
			return ret;
		if (marks & CQP_TAIL_PHASE && !began) {
			began = true;
			cqp_step_mark(run, run->comp);
		}
		if (marks & CQP_TAIL_END) {
			ended++;
			measured += cqp_tail_seq(qs[at].seen);
		}
	}
	cqp_comp_cost(run->comp, mine);
	mine->completions = measured;
	return 0;
}

/* The target's step by verb: receive completions, memory, or nothing
 * at all (READ and atomics).  Then --verify's look at what landed. */
static int run_target(struct cqp_run *run, struct bw_ctx *c, uint64_t size,
		      struct cqp_cost *mine)
{
	const struct cqp_params *p = run->p;
	struct cqp_verb_qp *qs = c->rc.vq + first_qp(run);
	int ret;

	if (cqp_verb_target_cq(run->verb))
		ret = run_receiver(run, c, mine);
	else if (run->verb == CQP_VERB_WRITE)
		ret = run_mem_receiver(run, c, size, mine);
	else
		ret = cqp_bench_wait_peer(run, run->comp, mine);
	for (unsigned i = 0; ret == 0 && p->verify && i < p->qps; i++)
		ret = cqp_verb_verify_landed(run->verb, &qs[i], size,
					     cqp_rc_buf_size(p), p->size);
	return ret;
}

static int run_size(struct cqp_run *run, void *ctx, uint64_t size,
		    struct cqp_row *row, struct cqp_cost *mine)
{
	struct bw_ctx *c = ctx;
	struct cqp_verb_qp *qs = c->rc.vq + first_qp(run);
	int ret;

	/* --verify: each step's payload is a pattern of its own. */
	for (unsigned i = 0; run->p->verify && i < run->p->qps; i++)
		cqp_verb_step(run->verb, &qs[i], run->is_client, size,
			      run->p->size);
	ret = run->is_client ? run_sender(run, c, size, row, mine)
			     : run_target(run, c, size, mine);
	cqp_rc_step_done(&c->rc, run->p, first_qp(run), run->p->qps);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct cqp_bench_ops ops = {
	    .tool = CQP_TOOL_CQ_POLL_BW,
	    .ctx_size = sizeof(struct bw_ctx),
	    .max_all_size = CQP_RC_ALL_MAX,
	    .mem_need = cqp_rc_mem_need,
	    .setup = setup,
	    .run_size = run_size,
	    .teardown = teardown,
	    .annotate = cqp_bw_annotate,
	    .threaded = true,
	};

	return cqp_bench_main(&ops, argc, argv);
}
