/* cq_poll_bw: RC SEND bandwidth and message rate from client to server,
 * with each side reaping completions in poll, event or hybrid mode. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "error.h"
#include "rc.h"
#include "stats.h"

#define WRID_QP_SHIFT	 48
#define WRID_IDX_MASK	 ((1ull << WRID_QP_SHIFT) - 1)
#define REAP_MAX	 64
#define PEAK_INTERVAL_NS (50ull * 1000 * 1000)
#define WARMUP_NS	 (1000ull * 1000 * 1000)

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

/* Sender state of one QP. */
struct txq {
	uint64_t posted, acked;
	bool done_posting;
};

struct sender {
	const struct cqp_params *p;
	struct cqp_rc *rc;
	uint64_t size;
	uint64_t total;	 /* per QP; 0 = until the deadline */
	uint64_t end_ns; /* -D: when posting stops */
	unsigned sol_every;
	bool mark; /* tell the receiver the warm-up is over */
	struct txq *q;
	struct cqp_bw_meter bw;
};

static bool is_last(const struct sender *s, const struct txq *q, uint64_t now)
{
	if (s->total)
		return q->posted + 1 == s->total;
	return now >= s->end_ns;
}

/* Posts as many sends on QP i as the queue has room for, in chains of up
 * to --post-list. */
static int post_sends(struct sender *s, unsigned i, uint64_t now)
{
	struct txq *q = &s->q[i];
	const struct cqp_params *p = s->p;
	struct ibv_send_wr wr[64], *bad;
	struct ibv_sge sge = {
	    .addr = (uintptr_t)s->rc->bufs[i].addr,
	    .length = (uint32_t)s->size,
	    .lkey = s->rc->bufs[i].mr->lkey,
	};
	unsigned chain = p->post_list < 64 ? p->post_list : 64;
	int send_flags = s->size <= s->rc->inline_granted ? IBV_SEND_INLINE : 0;

	while (!q->done_posting && q->posted - q->acked < p->tx_depth) {
		unsigned n = 0;
		uint64_t room = p->tx_depth - (q->posted - q->acked);

		while (n < chain && n < room && !q->done_posting) {
			struct ibv_send_wr *w = &wr[n];
			uint64_t idx = q->posted;
			bool last = is_last(s, q, now);

			memset(w, 0, sizeof(*w));
			w->wr_id = ((uint64_t)i << WRID_QP_SHIFT) | idx;
			w->sg_list = &sge;
			w->num_sge = 1;
			w->opcode = IBV_WR_SEND;
			if (last || (s->mark && i == 0)) {
				w->opcode = IBV_WR_SEND_WITH_IMM;
				w->imm_data =
				    last ? CQP_IMM_END : CQP_IMM_MEASURE;
				s->mark = false;
			}
			w->send_flags = send_flags;
			if (last || (idx + 1) % p->signal_every == 0)
				w->send_flags |= IBV_SEND_SIGNALED;
			if (last || (idx + 1) % s->sol_every == 0)
				w->send_flags |= IBV_SEND_SOLICITED;
			if (n)
				wr[n - 1].next = w;
			q->posted++;
			q->done_posting = last;
			n++;
		}
		int err = ibv_post_send(s->rc->qps[i], wr, &bad);

		if (err)
			return cqp_fail(CQP_E_DEVICE,
					"ibv_post_send on QP %u: %s",
					s->rc->qps[i]->qp_num, strerror(err));
	}
	return 0;
}

static int run_sender(struct cqp_run *run, struct bw_ctx *c, uint64_t size,
		      struct cqp_row *row, struct cqp_cost *mine)
{
	const struct cqp_params *p = run->p;
	struct cqp_comp *comp = &c->rc.comp;
	struct sender s = {.p = p, .rc = &c->rc, .size = size};
	struct cqp_bw_result res;
	struct ibv_wc wc[REAP_MAX];
	uint64_t now, warm_end = 0, msgs = 0;
	bool measuring = !p->duration_s;
	unsigned done = 0;
	int ret = 0;

	s.q = calloc(c->rc.nqp, sizeof(*s.q));
	if (!s.q)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	/* Receivers armed for solicited events must wake before their
	 * receive queue runs dry, or sender and receiver wait on each
	 * other. */
	s.sol_every = p->rx_depth / 4 ? p->rx_depth / 4 : 1;
	now = cqp_now_ns();
	if (p->duration_s) {
		warm_end = now + WARMUP_NS;
		s.end_ns = warm_end + (uint64_t)p->duration_s * 1000000000ull;
	} else {
		s.total = p->iters;
	}
	cqp_comp_begin(comp);
	cqp_bw_start(&s.bw, now, PEAK_INTERVAL_NS);
	while (done < c->rc.nqp) {
		for (unsigned i = 0; i < c->rc.nqp; i++)
			if ((ret = post_sends(&s, i, now)) < 0)
				goto out;
		ret = cqp_comp_reap(comp, wc, REAP_MAX);
		if (ret < 0)
			goto out;
		now = cqp_now_ns();
		msgs = 0;
		for (int k = 0; k < ret; k++) {
			unsigned qi = (unsigned)(wc[k].wr_id >> WRID_QP_SHIFT);
			struct txq *q = &s.q[qi];
			uint64_t upto = (wc[k].wr_id & WRID_IDX_MASK) + 1;

			msgs += upto - q->acked;
			q->acked = upto;
			if (q->done_posting && q->acked == q->posted)
				done++;
		}
		if (!measuring && now >= warm_end) {
			/* Warm-up over: measure from here. */
			measuring = true;
			s.mark = true;
			cqp_comp_begin(comp);
			cqp_bw_start(&s.bw, now, PEAK_INTERVAL_NS);
			continue;
		}
		cqp_bw_add(&s.bw, now, msgs * size, msgs);
	}
	ret = 0;
	cqp_comp_cost(comp, mine);
	cqp_bw_finish(&s.bw, &res);
	row->has_bw = true;
	row->iterations = res.msgs;
	row->bw_avg_gbps = res.avg_bps * 8 / 1e9;
	row->bw_peak_gbps = res.peak_bps * 8 / 1e9;
	row->msg_rate_mpps = res.msg_rate / 1e6;
out:
	free(s.q);
	return ret;
}

static int run_receiver(struct cqp_run *run, struct bw_ctx *c,
			struct cqp_cost *mine)
{
	struct cqp_rc *rc = &c->rc;
	struct ibv_wc wc[REAP_MAX];
	unsigned *repost = calloc(rc->nqp, sizeof(*repost));
	unsigned ended = 0;
	int ret = 0;

	(void)run;
	if (!repost)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	cqp_comp_begin(&rc->comp);
	while (ended < rc->nqp) {
		ret = cqp_comp_reap(&rc->comp, wc, REAP_MAX);
		if (ret < 0)
			goto out;
		for (int k = 0; k < ret; k++) {
			repost[wc[k].wr_id]++;
			if (!(wc[k].wc_flags & IBV_WC_WITH_IMM))
				continue;
			if (wc[k].imm_data == CQP_IMM_END)
				ended++;
			else if (wc[k].imm_data == CQP_IMM_MEASURE)
				cqp_comp_begin(&rc->comp);
		}
		for (unsigned i = 0; i < rc->nqp; i++) {
			if (!repost[i])
				continue;
			if ((ret = cqp_rc_post_recvs(rc, i, repost[i])) < 0)
				goto out;
			repost[i] = 0;
		}
	}
	ret = 0;
	cqp_comp_cost(&rc->comp, mine);
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
	};

	return cqp_bench_main(&ops, argc, argv);
}
