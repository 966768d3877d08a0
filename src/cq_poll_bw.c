/* cq_poll_bw: RC SEND bandwidth and message rate from client to server,
 * with each side reaping completions in poll, event or hybrid mode. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "error.h"
#include "bw.h"
#include "measure.h"
#include "rc.h"

#define REAP_MAX 64

struct bw_ctx {
	struct cqp_rc rc;
};

static int setup(struct cqp_run *run, void *ctx)
{
	struct bw_ctx *c = ctx;

	return cqp_rc_setup(&c->rc, run, !run->is_client);
}

static void teardown(struct cqp_run *run, void *ctx)
{
	struct bw_ctx *c = ctx;

	(void)run;
	cqp_rc_teardown(&c->rc);
}

/* Every message of QP i comes from its one buffer. */
static void prep(void *arg, unsigned i, uint64_t idx, uint32_t size,
		 struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	struct cqp_rc *rc = arg;

	(void)idx;
	sge->addr = (uintptr_t)rc->bufs[i].addr;
	sge->length = size;
	sge->lkey = rc->bufs[i].mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = size <= rc->inline_granted ? IBV_SEND_INLINE : 0;
}

/* --threads: thread t sends on, or receives from, the t-th group of -q
 * QPs, on its own engine (run->comp). */
static unsigned first_qp(const struct cqp_run *run)
{
	return run->thread * run->p->qps;
}

/* --rate R over T threads: R/T each, the remainder to the first ones. */
static uint64_t rate_share(const struct cqp_run *run)
{
	const struct cqp_params *p = run->p;

	return p->rate / p->nthreads + (run->thread < p->rate % p->nthreads);
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
	    .prep = prep,
	    .arg = &c->rc,
	    .warmup = run->p->warmup,
	    .rate = rate_share(run),
	};
	uint64_t sent;

	return cqp_bw_send(&tx, size, row, mine, &sent);
}

/* Reposts go to the QPs this reap touched, from a list: a scan over every
 * QP per reap delays reposts at high QP counts until the sender meets RNR
 * NAKs. */
static int run_receiver(struct cqp_run *run, struct bw_ctx *c,
			struct cqp_cost *mine)
{
	struct cqp_rc *rc = &c->rc;
	struct cqp_comp *comp = run->comp;
	struct ibv_wc wc[REAP_MAX];
	unsigned nqp = run->p->qps, first = first_qp(run);
	unsigned *repost = calloc(nqp, sizeof(*repost));
	unsigned dirty[REAP_MAX];
	unsigned ended = 0;
	uint64_t total = 0; /* every receive, warm-up included */
	int ret = 0;

	if (!repost)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	cqp_comp_begin(comp);
	while (ended < nqp) {
		unsigned ndirty = 0;

		ret = cqp_comp_reap(comp, wc, REAP_MAX);
		if (ret < 0)
			goto out;
		total += (uint64_t)ret;
		for (int k = 0; k < ret; k++) {
			unsigned q = (unsigned)wc[k].wr_id - first;

			if (repost[q]++ == 0)
				dirty[ndirty++] = q;
			if (!(wc[k].wc_flags & IBV_WC_WITH_IMM))
				continue;
			if (wc[k].imm_data == CQP_IMM_END)
				ended++;
			else if (wc[k].imm_data == CQP_IMM_MEASURE)
				cqp_comp_begin(comp);
		}
		for (unsigned d = 0; d < ndirty; d++) {
			unsigned q = dirty[d];

			if ((ret = cqp_rc_post_recvs(rc, first + q,
						     repost[q])) < 0)
				goto out;
			repost[q] = 0;
		}
	}
	ret = 0;
	cqp_comp_cost(comp, mine);
	/* -n: the mark rode on QP 0's last warm-up send, and other QPs'
	 * warm-up may still have been reaped after it: count exactly. */
	if (!run->p->duration_s && run->p->warmup)
		mine->completions = total - run->p->warmup * nqp;
out:
	free(repost);
	return ret;
}

static int run_size(struct cqp_run *run, void *ctx, uint64_t size,
		    struct cqp_row *row, struct cqp_cost *mine)
{
	struct bw_ctx *c = ctx;

	if (run->is_client)
		return run_sender(run, c, size, row, mine);
	return run_receiver(run, c, mine);
}

int main(int argc, char **argv)
{
	static const struct cqp_bench_ops ops = {
	    .tool = CQP_TOOL_CQ_POLL_BW,
	    .title = "RC SEND bandwidth",
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
