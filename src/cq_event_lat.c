/* cq_event_lat: RC ping-pong latency when each side waits for its
 * completions by polling, by completion events or by a hybrid, and what
 * each strategy costs in CPU and wakeups. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "error.h"
#include "measure.h"
#include "rc.h"

#define REAP_MAX 16

struct lat_ctx {
	struct cqp_rc rc;
	struct cqp_lat_rec rec;
	uint32_t outstanding; /* sends not yet completed */
};

static int setup(struct cqp_run *run, void *ctx)
{
	struct lat_ctx *c = ctx;
	const struct cqp_params *p = run->p;
	int ret;

	/* Both sides receive, so --solicited applies to both. */
	ret = cqp_rc_setup(&c->rc, run, true);
	if (ret == 0 && run->is_client)
		ret = cqp_lat_rec_init(&c->rec, p, run->samples);
	return ret;
}

static void teardown(struct cqp_run *run, void *ctx)
{
	struct lat_ctx *c = ctx;

	(void)run;
	cqp_lat_rec_free(&c->rec);
	cqp_rc_teardown(&c->rc);
}

/* One ping or pong: always signaled, and solicited so that a peer armed
 * for solicited events wakes for it and for nothing else. */
static int post_msg(struct lat_ctx *c, uint64_t size, uint32_t imm)
{
	struct cqp_rc *rc = &c->rc;
	struct ibv_sge sge = {
	    .addr = (uintptr_t)rc->bufs[0].addr,
	    .length = (uint32_t)size,
	    .lkey = rc->bufs[0].mr->lkey,
	};
	struct ibv_send_wr wr =
			       {
				   .wr_id = 0,
				   .sg_list = &sge,
				   .num_sge = 1,
				   .opcode =
				       imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				   .imm_data = imm,
				   .send_flags = IBV_SEND_SIGNALED |
						 IBV_SEND_SOLICITED |
						 (size <= rc->inline_granted
						      ? IBV_SEND_INLINE
						      : 0),
			       },
			   *bad;
	int err;

	err = ibv_post_send(rc->qps[0], &wr, &bad);
	if (err)
		return cqp_fail(CQP_E_DEVICE, "ibv_post_send on QP %u: %s",
				rc->qps[0]->qp_num, strerror(err));
	c->outstanding++;
	return 0;
}

/* Waits for the next received message; send completions met on the way
 * are retired.  *imm gets its immediate data (0 when none).  The caller
 * reposts the receive once the latency-critical step is done. */
static int wait_recv(struct lat_ctx *c, uint32_t *imm)
{
	struct ibv_wc wc[REAP_MAX];
	bool got = false;

	while (!got) {
		int n = cqp_comp_reap(&c->rc.comp, wc, REAP_MAX);

		if (n < 0)
			return n;
		for (int k = 0; k < n; k++) {
			if (!(wc[k].opcode & IBV_WC_RECV)) {
				c->outstanding--;
				continue;
			}
			/* Ping-pong: one message in flight, so no second
			 * receive can be in this batch. */
			got = true;
			*imm = wc[k].wc_flags & IBV_WC_WITH_IMM ? wc[k].imm_data
								: 0;
		}
	}
	return 0;
}

/* The send queue must not fill with completions nobody reaped yet.
 * Only sends are awaited here, which wake no one armed for solicited
 * events: hence reap_sends. */
static int make_room(struct lat_ctx *c, uint32_t tx_depth)
{
	struct ibv_wc wc[REAP_MAX];

	while (c->outstanding >= tx_depth) {
		int n = cqp_comp_reap_sends(&c->rc.comp, wc, REAP_MAX);

		if (n < 0)
			return n;
		for (int k = 0; k < n; k++) {
			if (wc[k].opcode & IBV_WC_RECV)
				return cqp_fail(
				    CQP_E_PROTO,
				    "an unexpected message arrived");
			c->outstanding--;
		}
	}
	return 0;
}

static int run_client(struct cqp_run *run, struct lat_ctx *c, uint64_t size,
		      struct cqp_row *row, struct cqp_cost *mine)
{
	const struct cqp_params *p = run->p;
	uint64_t end_ns = 0;
	uint32_t imm;
	int ret;

	cqp_lat_rec_begin(&c->rec, p, size,
			  cqp_cq_mode_name(c->rc.comp.cfg.mode));
	for (uint64_t i = 0;; i++) {
		bool first = i == p->warmup;
		bool last;
		uint64_t t0, t1;

		if (first) {
			cqp_comp_begin(&c->rc.comp);
			if (p->duration_s)
				end_ns =
				    cqp_now_ns() +
				    (uint64_t)p->duration_s * 1000000000ull;
		}
		last = p->duration_s ? i >= p->warmup && cqp_now_ns() >= end_ns
				     : i + 1 == p->warmup + p->iters;
		if ((ret = make_room(c, p->tx_depth)) < 0)
			return ret;
		t0 = cqp_now_ns();
		ret = post_msg(c, size,
			       last    ? CQP_IMM_END
			       : first ? CQP_IMM_MEASURE
				       : 0);
		if (ret == 0)
			ret = wait_recv(c, &imm);
		if (ret < 0)
			return ret;
		t1 = cqp_now_ns();
		if ((ret = cqp_rc_post_recvs(&c->rc, 0, 1)) < 0)
			return ret;
		if (i >= p->warmup)
			cqp_lat_rec_add(&c->rec, t0, t1);
		if (last)
			break;
	}
	/* Retire every send, so the next phase starts from a quiet CQ. */
	if ((ret = make_room(c, 1)) < 0)
		return ret;
	cqp_comp_cost(&c->rc.comp, mine);
	return cqp_lat_rec_finish(&c->rec, p, row);
}

/* Echo every ping until the client's last one. */
static int run_server(struct cqp_run *run, struct lat_ctx *c, uint64_t size,
		      struct cqp_cost *mine)
{
	uint32_t imm = 0;
	int ret;

	cqp_comp_begin(&c->rc.comp);
	while (imm != CQP_IMM_END) {
		/* Echo first: reposting is off the critical path. */
		if ((ret = wait_recv(c, &imm)) < 0 ||
		    (ret = make_room(c, run->p->tx_depth)) < 0 ||
		    (ret = post_msg(c, size, imm)) < 0 ||
		    (ret = cqp_rc_post_recvs(&c->rc, 0, 1)) < 0)
			return ret;
		if (imm == CQP_IMM_MEASURE)
			cqp_comp_begin(&c->rc.comp);
	}
	if ((ret = make_room(c, 1)) < 0)
		return ret;
	cqp_comp_cost(&c->rc.comp, mine);
	return 0;
}

static int run_size(struct cqp_run *run, void *ctx, uint64_t size,
		    struct cqp_row *row, struct cqp_cost *mine)
{
	struct lat_ctx *c = ctx;

	if (run->is_client)
		return run_client(run, c, size, row, mine);
	return run_server(run, c, size, mine);
}

int main(int argc, char **argv)
{
	static const struct cqp_bench_ops ops = {
	    .tool = CQP_TOOL_CQ_EVENT_LAT,
	    .title = "RC SEND ping-pong latency",
	    .ctx_size = sizeof(struct lat_ctx),
	    .max_all_size = CQP_RC_ALL_MAX,
	    .mem_need = cqp_rc_mem_need,
	    .setup = setup,
	    .run_size = run_size,
	    .teardown = teardown,
	    .annotate = cqp_lat_annotate,
	};

	return cqp_bench_main(&ops, argc, argv);
}
