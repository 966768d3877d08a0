/* SPDX-License-Identifier: BSD-2-Clause */
/* ud_send_bw: UD SEND bandwidth and message rate from client to server,
 * and what arrived of it: UD drops rather than retries, so the server
 * counts every datagram and says whether a loss came from its receive
 * queue running dry or from the network and the device. */
#include <stdlib.h>
#include <string.h>

#include "engine/bench.h"
#include "engine/bw.h"
#include "engine/measure.h"
#include "base/error.h"
#include "engine/ud.h"
#include "engine/workers.h"

#define REAP_MAX 1024 /* --poll-batch auto grows to 1024 */
/* Silence after which the server looks whether the client has finished
 * (its last datagram, with the end mark, may be the one that was lost). */
#define QUIET_MS 20
/* --clients: how often the server looks for a client that hung up while
 * the others keep its CQ busy. */
#define LOOK_NS 100000000ull

struct ud_bw_ctx {
	struct cqp_ud ud;
	uint64_t *seq; /* --verify: next sequence per client QP */
};

static int setup(struct cqp_run *run, void *ctx)
{
	struct ud_bw_ctx *c = ctx;
	int rc = cqp_ud_setup(&c->ud, run, run->is_client, !run->is_client);

	if (rc == 0 && run->is_client &&
	    !(c->seq = calloc((size_t)run->p->qps * run->p->nthreads,
			      sizeof(*c->seq))))
		rc = cqp_fail(CQP_E_NOMEM, "out of memory");
	return rc;
}

static void teardown(struct cqp_run *run, void *ctx)
{
	struct ud_bw_ctx *c = ctx;

	(void)run;
	free(c->seq);
	c->seq = NULL;
	cqp_ud_teardown(&c->ud);
}

/* With --verify each message gets its own slot and sequence; sequences
 * run on across steps, as the server's check does. */
static void prep(void *arg, unsigned qp, uint64_t idx, uint32_t size,
		 struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	struct ud_bw_ctx *c = arg;
	struct cqp_ud *ud = &c->ud;

	cqp_ud_prep_send(ud, qp, idx, size, wr, sge);
	if (ud->tx_slots > 1)
		cqp_pattern_fill(cqp_ud_send_buf(ud, qp, idx), size,
				 c->seq[qp]++);
}

static int run_sender(struct cqp_run *run, struct ud_bw_ctx *c, uint64_t size,
		      struct cqp_row *row, struct cqp_cost *mine)
{
	/* --threads: thread t sends on the t-th group of -q QPs. */
	unsigned first = run->thread * run->p->qps;
	struct cqp_bw_tx tx = {
	    .p = run->p,
	    .comp = run->comp,
	    .qps = c->ud.qps + first,
	    .nqp = run->p->qps,
	    .first = first,
	    .prep = prep,
	    .arg = c,
	    .rate = cqp_rate_share(run, run->p->rate),
	    .rq_senders = cqp_ud_rq_senders(run->p),
	};
	int rc = cqp_bw_send(&tx, size, row, mine, &row->sent);

	row->has_delivery = true;
	row->fanout = c->ud.fanout;
	return rc;
}

/* Reaps datagrams until every sender's end mark arrived or, when one was
 * lost, until the client has gone quiet and sent its results. */
static int run_receiver(struct cqp_run *run, struct ud_bw_ctx *c, uint64_t size,
			struct cqp_row *row, struct cqp_cost *mine)
{
	const struct cqp_params *p = run->p;
	struct cqp_ud *ud = &c->ud;
	struct cqp_ud_rx *rx = &ud->rx[run->thread];
	struct cqp_comp *comp = run->comp;
	struct ibv_wc wc[REAP_MAX];
	/* Its own QPs' ends (--shared-channel: the step's); with --mcast
	 * every server QP hears every client QP's. */
	unsigned heard = p->shared_channel ? ud->nqp : p->qps;
	unsigned ends = heard * (p->mcast[0] ? ud->nqp : 1), ended = 0;
	uint64_t quiet_since = cqp_now_ns(), looked = quiet_since;
	bool measuring = !p->duration_s, began = measuring;
	char silent[512];
	int n;

	/* A group's every client ends each of its QPs. */
	if (run->group)
		ends *= run->group->n;

	cqp_ud_recv_begin(rx);
	cqp_comp_begin(comp);
	while (!cqp_step_done(run, ended, ends)) {
		n = cqp_comp_reap_within(comp, wc, REAP_MAX, QUIET_MS);
		if (n < 0)
			return n;
		if (n == 0) {
			if (cqp_run_peers_spoke(run))
				break;
			if (cqp_now_ns() - quiet_since >
			    (uint64_t)p->timeout_s * 1000000000ull)
				return cqp_fail(
				    CQP_E_TIMEOUT,
				    "no datagram and no word from %s for %u s",
				    cqp_run_silent(run, silent, sizeof(silent)),
				    p->timeout_s);
			continue;
		}
		quiet_since = cqp_now_ns();
		if (run->group && quiet_since - looked > LOOK_NS) {
			int lost = cqp_run_check_peers(run);

			if (lost < 0)
				return lost;
			looked = quiet_since;
		}
		for (int k = 0; k < n; k++) {
			int rc = cqp_ud_recv_done(ud, rx, &wc[k],
						  (uint32_t)size, p->verify);

			if (rc < 0)
				return rc;
			if (!(wc[k].wc_flags & IBV_WC_WITH_IMM))
				continue;
			if (wc[k].imm_data == CQP_IMM_END)
				cqp_step_end_seen(run, &ended, ends);
			else if (wc[k].imm_data == CQP_IMM_MEASURE &&
				 !measuring) {
				measuring = true;
				cqp_step_mark(run, comp);
			}
		}
		cqp_step_look(run, comp, &began);
		if ((n = cqp_ud_recv_flush(ud, rx)) < 0)
			return n;
	}
	cqp_comp_cost(comp, mine);
	row->has_delivery = true;
	row->received = rx->received;
	row->rx_dry = rx->rx_dry;
	return 0;
}

static int run_size(struct cqp_run *run, void *ctx, uint64_t size,
		    struct cqp_row *row, struct cqp_cost *mine)
{
	struct ud_bw_ctx *c = ctx;
	int rc = run->is_client ? run_sender(run, c, size, row, mine)
				: run_receiver(run, c, size, row, mine);

	mine->has_rx_mem = true;
	mine->rx_mem_bytes = c->ud.rbuf.len;
	return rc;
}

/* --clients: what this server counted of client i's datagrams. */
static void client_row(const struct cqp_run *run, void *ctx, unsigned i,
		       struct cqp_row *row)
{
	const struct cqp_ud *ud = &((struct ud_bw_ctx *)ctx)->ud;

	(void)run;
	row->received = row->rx_dry = 0;
	for (unsigned t = 0; t < ud->nrx; t++) {
		row->received += ud->rx[t].got[i];
		row->rx_dry += ud->rx[t].dry[i];
	}
}

int main(int argc, char **argv)
{
	static const struct cqp_bench_ops ops = {
	    .tool = CQP_TOOL_UD_SEND_BW,
	    .ctx_size = sizeof(struct ud_bw_ctx),
	    .max_all_size = 4096,
	    .mem_need = cqp_ud_mem_need,
	    .setup = setup,
	    .run_size = run_size,
	    .teardown = teardown,
	    .client_row = client_row,
	    .annotate = cqp_bw_annotate,
	    .threaded = true,
	};

	return cqp_bench_main(&ops, argc, argv);
}
