/* SPDX-License-Identifier: BSD-2-Clause */
/* cq_event_lat: RC ping-pong latency by --verb when each side waits for
 * its completions by polling, by completion events or by a hybrid (or for
 * a plain WRITE by polling memory), and what each strategy costs in CPU
 * and wakeups.  READ and atomics have no pong: the requester's completion
 * is the reply, and the target's CPU takes no part. */
#include <stdlib.h>
#include <string.h>

#include "engine/bench.h"
#include "base/error.h"
#include "engine/measure.h"
#include "engine/rc.h"
#include "engine/verb.h"
#include "engine/workers.h"

#define REAP_MAX 16

/* One ping-pong (--threads: one per thread, each on its QP and engine). */
struct lat_thread {
	struct cqp_rc *rc;
	struct cqp_comp *comp;
	unsigned qp;
	struct cqp_lat_rec rec;
	uint32_t outstanding; /* sends not yet completed */
	/* --signal-every: sends since the last signaled one, and the
	 * interval (never above the requests that can be in flight). */
	uint32_t unsignaled, sig_every;
	/* Client, open loop: each request in flight, by sequence % window. */
	uint64_t (*slot)[2]; /* scheduled and posted ns */
	/* Messages received and not yet handled (their immediate data),
	 * oldest first: the server's requests, the ping-pong client's pong. */
	uint32_t *pending;
	uint32_t head, queued, pending_cap; /* the ring: rx-depth entries */
	uint32_t cap; /* of either: the requests that can be in flight */
};

struct lat_ctx {
	struct cqp_rc rc;
	struct lat_thread *th; /* --threads of them */
	unsigned nth;
	struct cqp_lat_rec all; /* client, --threads: the step's, merged */
};

static int thread_init(struct lat_thread *t, struct cqp_run *run,
		       struct cqp_rc *rc, unsigned i)
{
	const struct cqp_params *p = run->p;
	bool threads = p->nthreads > 1;
	int ret = 0;

	t->rc = rc;
	t->comp = &rc->comps.comp[i];
	t->qp = i;
	/* Threads keep their samples (and --samples times) for the merge;
	 * the merged record writes the file. */
	if (run->is_client)
		ret =
		    cqp_lat_rec_init(&t->rec, p, threads ? NULL : run->samples);
	if (ret < 0)
		return ret;
	t->rec.keep = threads && run->samples;
	/* A request needs a send and a receive on both sides. */
	t->cap = p->tx_depth < p->rx_depth ? p->tx_depth : p->rx_depth;
	t->pending = calloc(p->rx_depth, sizeof(*t->pending));
	t->pending_cap = p->rx_depth;
	if (run->is_client)
		t->slot = calloc(t->cap, sizeof(*t->slot));
	if (!t->pending || (run->is_client && !t->slot))
		return cqp_fail(CQP_E_NOMEM, "no memory for %u requests",
				t->cap);
	t->sig_every = p->signal_every < t->cap ? p->signal_every : t->cap;
	return 0;
}

static void thread_free(struct lat_thread *t)
{
	free(t->slot);
	free(t->pending);
	cqp_lat_rec_free(&t->rec);
}

static int setup(struct cqp_run *run, void *ctx)
{
	struct lat_ctx *c = ctx;
	const struct cqp_params *p = run->p;
	int ret;

	/* Both sides receive, so --solicited applies to both; the client is
	 * a target too where the verb has a pong. */
	ret = cqp_rc_setup(&c->rc, run, true,
			   !run->is_client ||
			       cqp_params_verbs(p) & ~(1u << CQP_VERB_READ |
						       1u << CQP_VERB_ATOMIC));
	if (ret == 0 && run->is_client && p->nthreads > 1)
		ret = cqp_lat_rec_init(&c->all, p, run->samples);
	if (ret < 0)
		return ret;
	if (!(c->th = calloc(p->nthreads, sizeof(*c->th))))
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	for (; c->nth < p->nthreads; c->nth++)
		if ((ret = thread_init(&c->th[c->nth], run, &c->rc, c->nth)) <
		    0) {
			c->nth++; /* freed with the rest */
			return ret;
		}
	return 0;
}

static void teardown(struct cqp_run *run, void *ctx)
{
	struct lat_ctx *c = ctx;

	(void)run;
	for (unsigned i = 0; i < c->nth; i++)
		thread_free(&c->th[i]);
	free(c->th);
	cqp_lat_rec_free(&c->all);
	cqp_rc_teardown(&c->rc);
}

/* One ping or pong by the step's verb, a SEND or a write-imm solicited
 * so that a peer armed for solicited events wakes for it and for nothing
 * else.  Signaled every --signal-every sends (the last of a step, and
 * READs and atomics, whose completion is the reply, always): a signaled
 * send's wr_id is how many sends its completion retires. */
static int post_msg(struct lat_thread *c, uint32_t verb, uint64_t size,
		    uint32_t imm)
{
	struct cqp_rc *rc = c->rc;
	struct ibv_sge sge[2];
	struct ibv_send_wr wr, *bad;
	int err;

	cqp_verb_prep(verb, &rc->vq[c->qp], (uint32_t)size, imm,
		      size <= rc->inline_granted, &wr, sge);
	if (++c->unsignaled >= c->sig_every || imm == CQP_IMM_END ||
	    cqp_verb_passive(verb)) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		wr.wr_id = c->unsignaled;
		c->unsignaled = 0;
	}
	if (cqp_verb_target_cq(verb))
		wr.send_flags |= IBV_SEND_SOLICITED;
	err = ibv_post_send(rc->qps[c->qp], &wr, &bad);
	if (err)
		return cqp_fail(CQP_E_DEVICE, "ibv_post_send on QP %u: %s",
				rc->qps[c->qp]->qp_num, strerror(err));
	c->outstanding++;
	return 0;
}

/* The send queue must not fill with completions nobody reaped yet.
 * Only sends are awaited here, which wake no one armed for solicited
 * events: hence reap_sends. */
static int make_room(struct lat_thread *c, uint32_t tx_depth)
{
	struct ibv_wc wc[REAP_MAX];

	while (c->outstanding >= tx_depth) {
		int n = cqp_comp_reap_sends(c->comp, wc, REAP_MAX);

		if (n < 0)
			return n;
		for (int k = 0; k < n; k++) {
			if (wc[k].opcode & IBV_WC_RECV)
				return cqp_fail(
				    CQP_E_PROTO,
				    "an unexpected message arrived");
			c->outstanding -= (uint32_t)wc[k].wr_id;
		}
	}
	return 0;
}

/* Waits until a request is pending and the send queue has room for its
 * echo.  Requests that arrive meanwhile queue up (open loop: several may
 * be in flight). */
static int take_request(struct lat_thread *c, uint32_t tx_depth)
{
	struct ibv_wc wc[REAP_MAX];

	while (c->queued == 0 || c->outstanding >= tx_depth) {
		/* Only sends can make room: reap them as sends. */
		int n = c->queued ? cqp_comp_reap_sends(c->comp, wc, REAP_MAX)
				  : cqp_comp_reap(c->comp, wc, REAP_MAX);

		if (n < 0)
			return n;
		for (int k = 0; k < n; k++) {
			if (!(wc[k].opcode & IBV_WC_RECV)) {
				c->outstanding -= (uint32_t)wc[k].wr_id;
				continue;
			}
			if (c->queued == c->pending_cap)
				return cqp_fail(CQP_E_PROTO,
						"more requests arrived than "
						"receives were posted");
			c->pending[(c->head + c->queued) % c->pending_cap] =
			    wc[k].wc_flags & IBV_WC_WITH_IMM ? wc[k].imm_data
							     : 0;
			c->queued++;
		}
	}
	return 0;
}

/* The oldest pending request's immediate data, taken off the queue. */
static uint32_t next_request(struct lat_thread *c)
{
	uint32_t imm = c->pending[c->head];

	c->head = (c->head + 1) % c->pending_cap;
	c->queued--;
	return imm;
}

/* A step's record.  A READ or an atomic is one operation whose reply is
 * its own completion: its latency is never halved to a one-way figure. */
static void rec_begin(const struct cqp_run *run, struct cqp_lat_rec *r,
		      uint64_t size, const char *mode, uint64_t rate)
{
	cqp_lat_rec_begin(r, run->p, size, mode, rate);
	if (cqp_verb_passive(run->verb))
		r->scale = 1.0;
}

/* mem: the replies (WRITEs) that landed since the last look, without
 * waiting: counted by their sequence numbers. */
static uint64_t mem_replies(struct lat_thread *c, uint64_t size)
{
	uint32_t n = cqp_verb_mem_take(&c->rc->vq[c->qp], (uint32_t)size);

	c->comp->cnt.completions += n;
	return n;
}

/* Ping-pong: waits for the reply to the one request in flight: the pong
 * (a receive, or for WRITE a WRITE back, in memory), or for READ and
 * atomics the request's own completion.  Room to send is make_room's
 * business, off the timed path. */
static int await_reply(struct lat_thread *c, uint32_t verb, uint64_t size,
		       bool verify)
{
	struct cqp_verb_qp *q = &c->rc->vq[c->qp];
	unsigned at = 0;
	int n;

	if (cqp_verb_target_cq(verb))
		return take_request(c, UINT32_MAX);
	if (verb == CQP_VERB_WRITE) {
		n = cqp_verb_mem_wait(c->comp, q, 1, (uint32_t)size, &at);
		return n < 0 ? n : 0;
	}
	/* In order: the request is done when nothing is in flight. */
	if ((n = make_room(c, 1)) < 0)
		return n;
	/* Each fetch-and-add finds the count of those before it. */
	if (verify && verb == CQP_VERB_ATOMIC &&
	    *(const uint64_t *)q->buf != q->adds - 1)
		return cqp_fail(CQP_E_PROTO,
				"--verify: fetch-and-add %llu found %llu",
				(unsigned long long)q->adds,
				(unsigned long long)*(const uint64_t *)q->buf);
	return 0;
}

static int run_client(struct cqp_run *run, struct lat_thread *c, uint64_t size,
		      struct cqp_row *row, struct cqp_cost *mine)
{
	const struct cqp_params *p = run->p;
	struct cqp_lat_loop l;
	int ret;

	rec_begin(run, &c->rec, size, cqp_cq_mode_name(c->comp->cfg.mode), 0);
	for (cqp_lat_loop_init(&l, p, c->comp);; l.i++) {
		uint64_t t0, t1;

		cqp_lat_loop_next(&l);
		if ((ret = make_room(c, p->tx_depth)) < 0)
			return ret;
		t0 = cqp_now_ns();
		ret = post_msg(c, run->verb, size,
			       l.last	 ? CQP_IMM_END
			       : l.first ? CQP_IMM_MEASURE
					 : 0);
		if (ret == 0)
			ret = await_reply(c, run->verb, size, p->verify);
		if (ret < 0)
			return ret;
		t1 = cqp_now_ns();
		if (cqp_verb_target_cq(run->verb)) {
			next_request(c);
			if ((ret = cqp_rc_post_recvs(c->rc, c->qp, 1)) < 0)
				return ret;
		}
		if (l.measured)
			cqp_lat_rec_add(&c->rec, t0, t1);
		if (l.last)
			break;
	}
	/* Retire every send, so the next phase starts from a quiet CQ. */
	if ((ret = make_room(c, 1)) < 0)
		return ret;
	cqp_comp_cost(c->comp, mine);
	if (p->verify &&
	    (ret = cqp_verb_verify_sent(run->verb, c->comp, c->rc->qps[c->qp],
					&c->rc->vq[c->qp], size)) < 0)
		return ret;
	/* --threads: the step's row comes of every thread's samples. */
	return p->nthreads > 1 ? 0 : cqp_lat_rec_finish(&c->rec, p, row);
}

/* The immediate data of request seq: the step's marks, else its
 * sequence number (never a mark). */
static uint32_t request_imm(uint64_t seq, bool first, bool last)
{
	if (last)
		return CQP_IMM_END;
	if (first)
		return CQP_IMM_MEASURE;
	return (uint32_t)(seq & 0x7fffffffu);
}

/* Open loop: requests go out when the schedule says, up to the window,
 * whether or not replies came back; each is timed from when it was due
 * (response time) and from its post (service time).  RC keeps order, so
 * the k-th reply answers the k-th request. */
static int run_open_client(struct cqp_run *run, struct lat_thread *c,
			   uint64_t size, struct cqp_row *row,
			   struct cqp_cost *mine)
{
	const struct cqp_params *p = run->p;
	uint64_t timeout_ns = (uint64_t)p->timeout_s * 1000000000ull;
	uint64_t done = 0, heard;
	uint64_t rate = cqp_rate_share(run, run->rate);
	struct cqp_open_loop ol;
	struct ibv_wc wc[REAP_MAX];
	int ret;

	rec_begin(run, &c->rec, size, cqp_cq_mode_name(run->mode), rate);
	heard = cqp_now_ns();
	cqp_ol_begin(&ol, p, rate, heard,
		     heard ^ (uint64_t)c->rc->qps[c->qp]->qp_num << 32);
	while (!ol.ending || done < ol.sent) {
		uint64_t now = cqp_now_ns(), replies = 0;
		unsigned reposts = 0;
		bool first, last;
		int n;

		while (cqp_ol_due(&ol, now)) {
			uint64_t *t = c->slot[ol.sent % c->cap];

			if (ol.sent - done >= c->cap ||
			    c->outstanding >= c->cap) {
				cqp_ol_blocked(&ol);
				break;
			}
			cqp_ol_next(&ol, now, &first, &last);
			if (first)
				cqp_comp_begin(c->comp);
			if ((ret = post_msg(
				 c, run->verb, size,
				 request_imm(ol.sent, first, last))) < 0)
				return ret;
			t[1] = now;
			t[0] = cqp_ol_posted(&ol, last, now);
			now = cqp_now_ns();
		}
		/* Awake when the next request is due (the client may sleep:
		 * --client-cq-mode); blocked, as long as a reply takes.  A
		 * WRITE's replies land in memory: spin on it and the CQ. */
		if (run->verb == CQP_VERB_WRITE) {
			n = cqp_comp_poll(c->comp, wc, REAP_MAX);
			replies = n < 0 ? 0 : mem_replies(c, size);
		} else {
			n = cqp_comp_wait_until(c->comp, wc, REAP_MAX,
						cqp_ol_wake(&ol, now));
		}
		if (n < 0)
			return n;
		if (n == 0 && replies == 0) {
			if (ol.sent > done && now - heard > timeout_ns)
				return cqp_fail(CQP_E_TIMEOUT,
						"no reply for %u s: the peer "
						"is gone or stalled",
						p->timeout_s);
			if ((ret = cqp_comp_check_peer(c->comp, now)) < 0)
				return ret;
			continue;
		}
		heard = cqp_now_ns();
		/* READ and atomics: the request's completion is its reply. */
		for (int k = 0; k < n; k++) {
			bool recv = wc[k].opcode & IBV_WC_RECV;

			if (!recv)
				c->outstanding -= (uint32_t)wc[k].wr_id;
			if (recv || cqp_verb_passive(run->verb))
				replies++;
			reposts += recv;
		}
		if (done + replies > ol.sent)
			return cqp_fail(CQP_E_PROTO,
					"a reply to no request arrived");
		for (; replies; replies--, done++) {
			uint64_t *t = c->slot[done % c->cap];

			if (done >= p->warmup)
				cqp_lat_rec_add_open(&c->rec, t[0], t[1],
						     heard);
		}
		if (reposts &&
		    (ret = cqp_rc_post_recvs(c->rc, c->qp, reposts)) < 0)
			return ret;
	}
	if ((ret = make_room(c, 1)) < 0)
		return ret;
	cqp_comp_cost(c->comp, mine);
	if (p->nthreads == 1 && (ret = cqp_lat_rec_finish(&c->rec, p, row)) < 0)
		return ret;
	cqp_ol_finish(&ol, row);
	return 0;
}

/* WRITE: every request that landed in memory gets its WRITE back, the
 * last one marked as the last. */
static int echo_writes(struct cqp_run *run, struct lat_thread *c, uint64_t size)
{
	struct cqp_verb_qp *q = &c->rc->vq[c->qp];
	bool end = false;
	unsigned at = 0;
	int n, ret;

	while (!end) {
		if ((n = cqp_verb_mem_wait(c->comp, q, 1, (uint32_t)size,
					   &at)) < 0)
			return n;
		end = cqp_tail_marks(q->seen) & CQP_TAIL_END;
		for (int k = 0; k < n; k++) {
			if ((ret = make_room(c, run->p->tx_depth)) < 0 ||
			    (ret = post_msg(c, CQP_VERB_WRITE, size,
					    end && k == n - 1 ? CQP_IMM_END
							      : 0)) < 0)
				return ret;
		}
		if (cqp_tail_marks(q->seen) & CQP_TAIL_MEASURE)
			cqp_comp_begin(c->comp);
	}
	return 0;
}

/* Echo every request, in order, until the client's last one; READ and
 * atomics need nothing of this side. */
static int run_server(struct cqp_run *run, struct lat_thread *c, uint64_t size,
		      struct cqp_cost *mine)
{
	uint32_t imm = 0;
	int ret;

	if (cqp_verb_passive(run->verb))
		return cqp_bench_wait_peer(run, c->comp, mine);
	cqp_comp_begin(c->comp);
	if (run->verb == CQP_VERB_WRITE) {
		if ((ret = echo_writes(run, c, size)) < 0)
			return ret;
		imm = CQP_IMM_END;
	}
	while (imm != CQP_IMM_END) {
		if ((ret = take_request(c, run->p->tx_depth)) < 0)
			return ret;
		imm = next_request(c);
		/* Echo first: reposting is off the critical path. */
		if ((ret = post_msg(c, run->verb, size, imm)) < 0 ||
		    (ret = cqp_rc_post_recvs(c->rc, c->qp, 1)) < 0)
			return ret;
		if (imm == CQP_IMM_MEASURE)
			cqp_comp_begin(c->comp);
	}
	if ((ret = make_room(c, 1)) < 0)
		return ret;
	cqp_comp_cost(c->comp, mine);
	return 0;
}

static int run_size(struct cqp_run *run, void *ctx, uint64_t size,
		    struct cqp_row *row, struct cqp_cost *mine)
{
	struct lat_thread *c = &((struct lat_ctx *)ctx)->th[run->thread];
	const struct cqp_params *p = run->p;
	struct cqp_verb_qp *q = &c->rc->vq[c->qp];
	int ret;

	/* --verify: each step's payload is a pattern of its own. */
	if (p->verify)
		cqp_verb_step(run->verb, q, run->is_client, size, p->size);
	if (run->is_client && run->rate)
		ret = run_open_client(run, c, size, row, mine);
	else if (run->is_client)
		ret = run_client(run, c, size, row, mine);
	else
		ret = run_server(run, c, size, mine);
	if (ret == 0 && p->verify && !run->is_client)
		ret = cqp_verb_verify_landed(run->verb, q, size,
					     cqp_rc_buf_size(p), p->size);
	cqp_rc_step_done(c->rc, p, c->qp, 1);
	return ret;
}

/* --threads: the client's row from every thread's samples, exact
 * percentiles while they fit; late sends summed (cqp_workers_merge_row). */
static int merge(struct cqp_run *run, void *ctx, const struct cqp_row *rows,
		 unsigned n, struct cqp_row *out)
{
	struct lat_ctx *c = ctx;
	const struct cqp_params *p = run->p;
	int ret;

	cqp_workers_merge_row(rows, n, out);
	if (!run->is_client)
		return 0;
	rec_begin(run, &c->all, c->th[0].rec.bytes, c->th[0].rec.mode,
		  run->rate);
	for (unsigned t = 0; t < n; t++)
		if ((ret = cqp_lat_rec_merge(&c->all, &c->th[t].rec)) < 0)
			return ret;
	return cqp_lat_rec_finish(&c->all, p, out);
}

int main(int argc, char **argv)
{
	static const struct cqp_bench_ops ops = {
	    .tool = CQP_TOOL_CQ_EVENT_LAT,
	    .ctx_size = sizeof(struct lat_ctx),
	    .max_all_size = CQP_RC_ALL_MAX,
	    .mem_need = cqp_rc_mem_need,
	    .setup = setup,
	    .run_size = run_size,
	    .teardown = teardown,
	    .annotate = cqp_lat_annotate,
	    .threaded = true,
	    .merge = merge,
	};

	return cqp_bench_main(&ops, argc, argv);
}
