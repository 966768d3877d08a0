/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/bw.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/arrival.h"
#include "base/error.h"
#include "engine/measure.h"
#include "base/stats.h"

#define WRID_QP_SHIFT	 48
#define WRID_IDX_MASK	 ((1ull << WRID_QP_SHIFT) - 1)
#define REAP_MAX	 1024 /* --poll-batch auto grows to 1024 */
#define PEAK_INTERVAL_NS (50ull * 1000 * 1000)
#define WARMUP_NS	 (1000ull * 1000 * 1000)

/* Sender state of one QP. */
struct txq {
	uint64_t posted, acked;
	/* Sends until the next signaled and solicited one: countdowns, not
	 * two 64-bit divisions per work request. */
	uint32_t sig_left, sol_left;
	bool done_posting;
};

struct sender {
	const struct cqp_bw_tx *tx;
	uint32_t size;
	uint64_t total;	 /* per QP; 0 = until the deadline */
	uint64_t end_ns; /* -D: when posting stops */
	unsigned sol_every;
	uint32_t window, sig_every; /* tx-depth or the verb's; <= window */
	bool warming; /* the warm-up phase, before the measured one */
	struct txq *q;
	/* --rate: sends go out when due, not when there is room. */
	struct cqp_arrivals *sched;
	unsigned first_qp; /* paced: where the next pass starts */
	uint64_t due;	   /* the next send's due time */
	uint64_t late;	   /* measured sends due while their queue was full */
	bool late_marked;  /* the send due now is counted already */
};

static bool is_last(const struct sender *s, const struct txq *q, uint64_t now)
{
	if (s->total)
		return q->posted + 1 == s->total;
	return now >= s->end_ns;
}

/* Message idx of QP i, carrying imm (0: none): the tool's SEND, or the
 * verb's request. */
static void prep(struct sender *s, unsigned i, uint64_t idx, uint32_t imm,
		 struct ibv_send_wr *w, struct ibv_sge *sge)
{
	const struct cqp_bw_tx *tx = s->tx;

	if (tx->vq) {
		cqp_verb_prep(tx->verb, &tx->vq[i], s->size, imm,
			      s->size <= tx->inline_granted, w, sge);
		return;
	}
	tx->prep(tx->arg, tx->first + i, idx, s->size, w, sge);
	w->opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	w->imm_data = imm;
}

/* Posts as many sends on QP i as the queue has room for, in chains of up
 * to --post-list. */
static int post_sends(struct sender *s, unsigned i, uint64_t now)
{
	const struct cqp_params *p = s->tx->p;
	struct txq *q = &s->q[i];
	struct ibv_send_wr wr[CQP_POST_LIST_MAX], *bad;
	struct ibv_sge sge[CQP_POST_LIST_MAX][2];
	unsigned chain = p->post_list; /* options.c bounds it */
	bool sol =
	    s->tx->verb == CQP_VERB_SEND || s->tx->verb == CQP_VERB_WRITE_IMM;

	while (!q->done_posting && q->posted - q->acked < s->window &&
	       (!s->sched || s->due <= now)) {
		unsigned n = 0;
		uint64_t room = s->window - (q->posted - q->acked);

		while (n < chain && n < room && !q->done_posting &&
		       (!s->sched || s->due <= now)) {
			struct ibv_send_wr *w = &wr[n];
			uint64_t idx = q->posted;
			bool last = is_last(s, q, now);

			uint32_t imm = 0;

			if (s->warming) {
				/* The warm-up's last send on QP 0 tells the
				 * receiver that measuring begins. */
				if (last && i == 0)
					imm = CQP_IMM_MEASURE;
			} else if (last) {
				imm = CQP_IMM_END;
			}
			prep(s, i, idx, imm, w, sge[n]);
			w->wr_id = ((uint64_t)i << WRID_QP_SHIFT) | idx;
			w->next = NULL;
			if (--q->sig_left == 0 || last) {
				w->send_flags |= IBV_SEND_SIGNALED;
				q->sig_left = s->sig_every;
			}
			if (sol && (--q->sol_left == 0 || last)) {
				w->send_flags |= IBV_SEND_SOLICITED;
				q->sol_left = s->sol_every;
			}
			if (n)
				wr[n - 1].next = w;
			q->posted++;
			q->done_posting = last;
			n++;
			if (s->sched) {
				s->due = cqp_arrivals_next(s->sched);
				s->late_marked = false;
			}
		}
		int err = ibv_post_send(s->tx->qps[i], wr, &bad);

		if (err)
			return cqp_fail(CQP_E_DEVICE,
					"ibv_post_send on QP %u: %s",
					s->tx->qps[i]->qp_num, strerror(err));
	}
	return 0;
}

/* A plain WRITE's measured phase, on every QP: its tails say so, every
 * one, numbered from 1 (cqp_verb_measure), for a target that counts them
 * exactly whichever it happens to see. */
static void write_phase(struct sender *s, bool measured)
{
	const struct cqp_bw_tx *tx = s->tx;

	if (!tx->vq || tx->verb != CQP_VERB_WRITE)
		return;
	for (unsigned i = 0; i < tx->nqp; i++)
		cqp_verb_measure(&tx->vq[i], measured);
}

/* Some QP has sends not yet acked. */
static bool in_flight(const struct sender *s)
{
	for (unsigned i = 0; i < s->tx->nqp; i++)
		if (s->q[i].posted != s->q[i].acked)
			return true;
	return false;
}

/* The queues at the start of a phase. */
static void reset_queues(struct sender *s)
{
	for (unsigned i = 0; i < s->tx->nqp; i++) {
		memset(&s->q[i], 0, sizeof(s->q[i]));
		s->q[i].sig_left = s->sig_every;
		s->q[i].sol_left = s->sol_every;
	}
}

/* Posts and reaps until every QP's last send of the phase is acked,
 * metering into bw (NULL: the warm-up, not metered). */
static int pump(struct sender *s, struct cqp_bw_meter *bw, uint64_t *now)
{
	const struct cqp_params *p = s->tx->p;
	struct cqp_comp *comp = s->tx->comp;
	struct ibv_wc wc[REAP_MAX];
	unsigned done = 0;
	uint64_t heard = *now;
	int ret;

	while (done < s->tx->nqp) {
		uint64_t msgs = 0;

		/* Paced, a pass posts about one send: start each pass at
		 * the next QP, so that the load is spread over them. */
		for (unsigned k = 0, i = s->first_qp; k < s->tx->nqp; k++) {
			if ((ret = post_sends(s, i, *now)) < 0)
				return ret;
			if (++i == s->tx->nqp)
				i = 0;
		}
		if (s->sched && ++s->first_qp == s->tx->nqp)
			s->first_qp = 0;
		/* Still due after a whole pass: no QP had room for it. */
		if (s->sched && s->due <= *now && done < s->tx->nqp &&
		    !s->late_marked) {
			s->late += !s->warming;
			s->late_marked = true;
		}
		/* Paced: the next send may be due before any completion. */
		ret = s->sched ? cqp_comp_poll(comp, wc, REAP_MAX)
			       : cqp_comp_reap(comp, wc, REAP_MAX);
		if (ret < 0)
			return ret;
		*now = cqp_now_ns();
		/* A poll has no deadline of its own: nothing acked for
		 * --timeout with sends in flight is a stalled peer. */
		if (ret > 0 || !s->sched) {
			heard = *now;
		} else if (in_flight(s) &&
			   *now - heard >
			       (uint64_t)p->timeout_s * 1000000000ull) {
			return cqp_fail(CQP_E_TIMEOUT,
					"no send completed for %u s: %s is "
					"gone or stalled",
					p->timeout_s, comp->peer_who);
		}
		for (int k = 0; k < ret; k++) {
			unsigned qi = (unsigned)(wc[k].wr_id >> WRID_QP_SHIFT);
			struct txq *q = &s->q[qi];
			uint64_t upto = (wc[k].wr_id & WRID_IDX_MASK) + 1;

			msgs += upto - q->acked;
			q->acked = upto;
			if (q->done_posting && q->acked == q->posted)
				done++;
		}
		if (bw)
			cqp_bw_add(bw, *now, msgs * s->size, msgs);
		/* A UD sender's completions keep coming for a dead peer. */
		if ((ret = cqp_comp_check_peer(comp, *now)) < 0)
			return ret;
	}
	return 0;
}

uint32_t cqp_bw_sol_every(uint32_t rx_depth, uint32_t rq_senders)
{
	uint32_t n = rx_depth / 4 / (rq_senders ? rq_senders : 1);

	return n ? n : 1;
}

int cqp_bw_send(const struct cqp_bw_tx *tx, uint64_t size, struct cqp_row *row,
		struct cqp_cost *mine, uint64_t *sent)
{
	const struct cqp_params *p = tx->p;
	struct sender s = {.tx = tx, .size = (uint32_t)size};
	struct cqp_bw_meter bw;
	struct cqp_bw_result res;
	struct cqp_arrivals sched;
	struct cqp_arrival_shape shape;
	uint64_t now;
	uint64_t rate = tx->rate ? tx->rate : p->rate;
	int ret = 0;

	s.q = calloc(tx->nqp, sizeof(*s.q));
	if (!s.q)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	/* Receivers armed for solicited events must wake before their
	 * receive queue runs dry, or sender and receiver wait on each
	 * other. */
	s.sol_every = cqp_bw_sol_every(p->rx_depth, tx->rq_senders);
	s.window = tx->window ? tx->window : p->tx_depth;
	/* A window below --signal-every would fill with requests nobody
	 * waits for. */
	s.sig_every = p->signal_every < s.window ? p->signal_every : s.window;
	reset_queues(&s);
	now = cqp_now_ns();
	*sent = 0;
	cqp_params_arrival(p, &shape);
	if (rate) {
		/* One schedule over every QP: --rate is the whole load, not
		 * a QP's. */
		cqp_arrivals_init(&sched, &shape, rate, now, now);
		s.sched = &sched;
		s.due = cqp_arrivals_next(&sched);
	}
	if (p->duration_s || tx->warmup) {
		/* Warm-up sends first, a phase of their own, drained before
		 * the measured one, so that what is measured is exactly its
		 * own sends (--iters per QP with -n) and a target counts them
		 * alike; -D warms up for a second. */
		s.total = p->duration_s ? 0 : tx->warmup;
		s.end_ns = now + WARMUP_NS;
		s.warming = true;
		if ((ret = pump(&s, NULL, &now)) < 0)
			goto out;
		for (unsigned i = 0; i < tx->nqp; i++)
			*sent += s.q[i].posted;
		s.warming = false;
		reset_queues(&s);
	}
	if (p->duration_s)
		s.end_ns = now + (uint64_t)p->duration_s * 1000000000ull;
	else
		s.total = p->iters;
	write_phase(&s, true);
	cqp_comp_begin(tx->comp);
	cqp_bw_start(&bw, now, PEAK_INTERVAL_NS);
	if (s.sched) {
		/* A fresh schedule from here: the warm-up's tail must not
		 * leave sends overdue, which would go out in a burst. */
		cqp_arrivals_init(&sched, &shape, rate, now, now);
		s.due = cqp_arrivals_next(&sched);
	}
	s.late = 0;
	ret = pump(&s, &bw, &now);
	write_phase(&s, false);
	if (ret < 0)
		goto out;
	cqp_comp_cost(tx->comp, mine);
	cqp_bw_finish(&bw, &res);
	cqp_bw_row(row, &res);
	if (s.sched) {
		row->open_loop = true;
		row->offered_rate = (double)rate;
		row->achieved_rate = res.msg_rate;
		row->late_sends = s.late;
		row->arrival_cv = cqp_arrivals_cv(s.sched);
	}
	for (unsigned i = 0; i < tx->nqp; i++)
		*sent += s.q[i].posted;
out:
	free(s.q);
	return ret;
}
