/* SPDX-License-Identifier: BSD-2-Clause */
/* ud_send_lat: UD ping-pong latency in each completion mode.  A datagram
 * may vanish, so every exchange has a deadline (--retry-us): a ping or
 * pong lost on the way is retried with a fresh sequence number and the
 * row counts the lost exchanges; nothing waits forever. */
#include <stdlib.h>
#include <string.h>

#include "engine/bench.h"
#include "base/error.h"
#include "engine/measure.h"
#include "engine/ud.h"

#define REAP_MAX 16
#define QUIET_MS 20 /* server: silence before looking for the client */

/* Immediate data of a ping and its pong: which step, which exchange. */
#define TAG_END	    0x80000000u
#define TAG_MEASURE 0x40000000u
#define TAG_STEP(s) (((uint32_t)(s)&0x3f) << 24)
#define STEP_MASK   0x3f000000u
#define SEQ_MASK    0x00ffffffu

/* An open-loop request of the client. */
struct req {
	uint64_t seq, sched, posted;
	bool live;
};

struct lat_ctx {
	struct cqp_ud ud;
	struct cqp_lat_rec rec;
	uint32_t outstanding; /* sends not yet retired by a completion */
	/* Only every sig_every-th send of a QP asks for a completion (like
	 * perftest's): one CQE per exchange fewer to make and to poll.  Its
	 * wr_id says how many sends it retires. */
	uint32_t sig_every;
	uint32_t *unsignaled; /* per QP: sends since its last signaled one */
	/* Per QP, the step's send prepared once (run_size): a message sets
	 * its immediate, flags and buffer only. */
	struct ibv_send_wr *swr;
	struct ibv_sge *ssge;
	uint32_t unsignaled_all;
	uint64_t posts;	     /* sends ever posted: picks the send slot */
	uint32_t step;	     /* both sides count steps alike */
	uint32_t seq;	     /* client: next ping */
	uint64_t drop_every; /* test hook: server ignores every Nth ping */
	uint64_t pings;
	/* Server: the pings of a batch still to echo, those make_room met
	 * included; room for every receive posted, plus a reap. */
	struct ibv_wc *held;
	unsigned nheld, held_cap;
	/* Client, open loop: the requests not yet answered or given up on,
	 * by sequence % nslot; at most cap of them live at once. */
	struct req *slot;
	uint64_t nslot;
	uint32_t cap, live;
};

static int setup(struct cqp_run *run, void *ctx)
{
	struct lat_ctx *c = ctx;
	const char *drop = getenv("CQPERF_TEST_DROP_EVERY");
	int rc = cqp_ud_setup(&c->ud, run, true, true);

	if (!run->is_client && drop)
		c->drop_every = strtoull(drop, NULL, 10);
	if (rc == 0 && run->is_client)
		rc = cqp_lat_rec_init(&c->rec, run->p, run->samples);
	/* Unsignaled sends of every QP together stay under half the send
	 * queue, so a full queue always holds a signaled one to wait for. */
	if (rc < 0)
		return rc;
	c->sig_every = run->p->tx_depth / (2 * c->ud.nqp);
	if (c->sig_every == 0)
		c->sig_every = 1;
	c->unsignaled = calloc(c->ud.nqp, sizeof(uint32_t));
	c->swr = calloc(c->ud.nqp, sizeof(*c->swr));
	c->ssge = calloc(c->ud.nqp, sizeof(*c->ssge));
	if (!c->unsignaled || !c->swr || !c->ssge)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	if (!run->is_client) {
		c->held_cap = c->ud.nrq * c->ud.rq_depth + REAP_MAX;
		if (!(c->held = calloc(c->held_cap, sizeof(*c->held))))
			return cqp_fail(CQP_E_NOMEM, "out of memory");
	}
	/* A request needs a receive for its reply, and the sends in flight
	 * stay within the send queue (make_room's rule). */
	c->cap = run->p->rx_depth < run->p->tx_depth ? run->p->rx_depth
						     : run->p->tx_depth;
	return 0;
}

/* Room for every request a --retry-us span at `rate` can hold, so that a
 * lost one, live until given up on, never blocks the ones after it. */
static int size_slots(struct lat_ctx *c, uint64_t rate, uint32_t retry_us)
{
	uint64_t n = c->cap + rate * retry_us / 1000000 + 1;
	void *s;

	if (n > (1u << 20))
		n = 1u << 20;
	if (n <= c->nslot)
		return 0;
	if (!(s = realloc(c->slot, n * sizeof(*c->slot))))
		return cqp_fail(CQP_E_NOMEM, "no memory for %llu requests",
				(unsigned long long)n);
	c->slot = s;
	c->nslot = n;
	return 0;
}

static void teardown(struct cqp_run *run, void *ctx)
{
	struct lat_ctx *c = ctx;

	(void)run;
	free(c->unsignaled);
	c->unsignaled = NULL;
	free(c->swr);
	c->swr = NULL;
	free(c->ssge);
	c->ssge = NULL;
	free(c->held);
	c->held = NULL;
	free(c->slot);
	c->slot = NULL;
	cqp_lat_rec_free(&c->rec);
	cqp_ud_teardown(&c->ud);
}

/* Every QP's send of this step's size, prepared once. */
static void prep_sends(struct lat_ctx *c, uint32_t size)
{
	for (unsigned qp = 0; qp < c->ud.nqp; qp++) {
		struct ibv_send_wr *wr = &c->swr[qp];

		cqp_ud_prep_send(&c->ud, qp, 0, size, wr, &c->ssge[qp]);
		wr->opcode = IBV_WR_SEND_WITH_IMM;
		wr->send_flags |= IBV_SEND_SOLICITED;
	}
}

/* One ping or pong on QP qp, solicited so that a peer armed for
 * solicited events wakes for it; signaled every sig_every-th. */
static int post_msg(struct lat_ctx *c, unsigned qp, uint32_t size, uint32_t imm,
		    bool verify)
{
	struct cqp_ud *ud = &c->ud;
	struct ibv_send_wr *wr = &c->swr[qp], *bad;
	/* Sends complete in order and fewer than tx-depth are in flight,
	 * so slot posts % tx-depth is never one still being sent. */
	uint8_t *buf = cqp_ud_send_buf(ud, qp, c->posts);
	int err;

	c->ssge[qp].addr = (uintptr_t)buf;
	if (verify)
		cqp_pattern_fill(buf, size, imm);
	wr->imm_data = imm;
	if (++c->unsignaled[qp] == c->sig_every) {
		wr->send_flags |= IBV_SEND_SIGNALED;
		wr->wr_id = c->sig_every;
		c->unsignaled[qp] = 0;
		c->unsignaled_all -= c->sig_every - 1;
	} else {
		wr->send_flags &= ~(unsigned)IBV_SEND_SIGNALED;
		c->unsignaled_all++;
	}
	err = ibv_post_send(ud->qps[qp], wr, &bad);
	if (err)
		return cqp_fail(CQP_E_DEVICE, "ibv_post_send on QP %u: %s",
				ud->qps[qp]->qp_num, strerror(err));
	c->outstanding++;
	c->posts++;
	return 0;
}

/* A receive that must carry imm's pattern (--verify). */
static int check_payload(const struct cqp_ud *ud, const struct ibv_wc *wc,
			 uint32_t size)
{
	int64_t bad =
	    cqp_pattern_check(cqp_ud_recv_payload(ud, wc), size, wc->imm_data);

	if (bad >= 0)
		return cqp_fail(CQP_E_PROTO,
				"--verify: message 0x%08x: byte %lld differs",
				wc->imm_data, (long long)bad);
	return 0;
}

/* Receives reaped: checked and queued for reposting. */
static int settle(struct lat_ctx *c, const struct ibv_wc *got, int ngot,
		  uint32_t size)
{
	for (int k = 0; k < ngot; k++) {
		int rc =
		    cqp_ud_recv_done(&c->ud, c->ud.rx, &got[k], size, false);

		if (rc < 0)
			return rc;
	}
	return 0;
}

/* A send completion retires the sends it stands for (its wr_id). */
static inline bool retired(struct lat_ctx *c, const struct ibv_wc *wc)
{
	if (wc->opcode & IBV_WC_RECV)
		return false;
	c->outstanding -= (uint32_t)wc->wr_id;
	return true;
}

/* Reaps, off the ping-pong's path: send completions are retired,
 * receives handed back through *got (room for REAP_MAX: the poll's own
 * array) and queued for reposting.  sends: awaits our own sends, which
 * wake no one armed for solicited events, for up to a second after ns;
 * else waits until ns at the latest (the open loop's next send).
 * Returns how many completions of either kind were reaped, 0 on
 * silence. */
static int reap(struct lat_ctx *c, uint64_t ns, uint32_t size,
		struct ibv_wc *got, int *ngot, bool sends)
{
	struct cqp_comp *comp = c->ud.comps.comp;
	int n = sends ? cqp_comp_reap_sends_from(comp, got, REAP_MAX, ns, 1000)
		      : cqp_comp_wait_until(comp, got, REAP_MAX, ns),
	    m = 0, rc;

	/* Polled in place: receives packed to the front. */
	for (int k = 0; k < n; k++)
		if (!retired(c, &got[k]) && m++ != k)
			got[m - 1] = got[k];
	*ngot = m;
	if (m && (rc = settle(c, got, m, size)) < 0)
		return rc;
	return n;
}

/* The send queue must not fill with completions nobody reaped yet.
 * Receives met on the way are queued in c->held when keep (the server:
 * pings, to echo like the others), else dropped (the client: the late
 * pong of a try already counted lost). */
static int make_room(struct lat_ctx *c, uint32_t room, uint32_t size,
		     uint32_t tx_depth, bool keep)
{
	struct ibv_wc got[REAP_MAX];
	int ngot;

	while (c->outstanding + room > tx_depth) {
		int rc = reap(c, cqp_now_ns(), size, got, &ngot, true);

		if (rc < 0)
			return rc;
		if (!keep || !ngot)
			continue;
		/* Unreachable: no more receives are posted than held_cap. */
		if (c->nheld + (unsigned)ngot > c->held_cap)
			return cqp_fail(CQP_E_PROTO,
					"more pings reaped than receives "
					"posted (%u)",
					c->held_cap - REAP_MAX);
		memcpy(c->held + c->nheld, got, (size_t)ngot * sizeof(*got));
		c->nheld += (unsigned)ngot;
	}
	/* Receives it met are reposted by the caller, after its critical
	 * step: the server calls this between a ping and its pong. */
	return 0;
}

/* Reaps every send completion still due, so the next phase starts from
 * a quiet CQ; unsignaled sends raise none, and the next signaled send of
 * their QP retires them. */
static int quiesce(struct lat_ctx *c, uint32_t size)
{
	struct ibv_wc got[REAP_MAX];
	int ngot;

	while (c->outstanding > c->unsignaled_all) {
		int rc = reap(c, cqp_now_ns(), size, got, &ngot, true);

		if (rc < 0)
			return rc;
	}
	return cqp_ud_recv_flush(&c->ud, c->ud.rx);
}

/* Waits until wait_ms after t0 for the pong carrying imm: 1 when it
 * came, *seen the time it was reaped; 0 when the deadline passed.  No
 * clock is read while waiting. */
static int wait_pong(struct lat_ctx *c, uint32_t imm, uint32_t size,
		     uint64_t t0, uint32_t wait_ms, bool verify, uint64_t *seen)
{
	struct ibv_wc got[REAP_MAX];

	for (;;) {
		int n = cqp_comp_reap_recv_from(c->ud.comps.comp, got, REAP_MAX,
						t0, wait_ms),
		    rc;
		bool came = false, clocked = false;

		if (n <= 0)
			return n;
		for (int k = 0; k < n; k++) {
			if (retired(c, &got[k]))
				continue;
			/* Stopped before the bookkeeping, which is not the
			 * network's (perftest's clock reads are as close to
			 * its poll). */
			if (!clocked) {
				*seen = cqp_now_ns();
				clocked = true;
			}
			/* Else a late pong of an earlier try: counted. */
			if (!came && got[k].imm_data == imm) {
				if (verify && (rc = check_payload(
						   &c->ud, &got[k], size)) < 0)
					return rc;
				came = true;
			}
			/* Checked first: the slot is the device's again. */
			if ((rc = cqp_ud_recv_again(&c->ud, c->ud.rx, &got[k],
						    size)) < 0)
				return rc;
		}
		if (came)
			return 1;
	}
}

/* One exchange, retried until a pong comes back; returns when the try
 * that came back was posted and its round trip, and counts the tries that
 * were lost. */
static int exchange(struct cqp_run *run, struct lat_ctx *c, unsigned qp,
		    uint32_t size, uint32_t flags, uint64_t *posted,
		    uint64_t *rtt, uint64_t *lost)
{
	const struct cqp_params *p = run->p;
	uint32_t retry_ms = (p->retry_us + 999) / 1000;
	uint64_t give_up = 0; /* from the first try's post: no extra clock */

	for (;;) {
		uint32_t imm =
		    flags | TAG_STEP(c->step) | (c->seq++ & SEQ_MASK);
		uint64_t t0, seen = 0;
		int rc = make_room(c, 1, size, p->tx_depth, false);

		if (rc < 0)
			return rc;
		t0 = cqp_now_ns();
		if (!give_up)
			give_up = t0 + (uint64_t)p->timeout_s * 1000000000ull;
		if ((rc = post_msg(c, qp, size, imm, p->verify)) < 0 ||
		    (rc = wait_pong(c, imm, size, t0, retry_ms, p->verify,
				    &seen)) < 0)
			return rc;
		if (rc == 1) {
			*rtt = seen - t0;
			*posted = t0;
			return cqp_ud_recv_flush(&c->ud, c->ud.rx);
		}
		if ((rc = cqp_ud_recv_flush(&c->ud, c->ud.rx)) < 0)
			return rc;
		++*lost;
		if (cqp_now_ns() >= give_up)
			return cqp_fail(CQP_E_TIMEOUT,
					"no answer from server %s for %u s "
					"(%llu tries lost)",
					run->s->oob.peer, p->timeout_s,
					(unsigned long long)*lost);
	}
}

static int run_client(struct cqp_run *run, struct lat_ctx *c, uint64_t size,
		      struct cqp_row *row, struct cqp_cost *mine)
{
	const struct cqp_params *p = run->p;
	uint64_t lost = 0, warm_lost = 0;
	struct cqp_lat_loop l;
	int rc;

	cqp_lat_rec_begin(&c->rec, p, size,
			  cqp_cq_mode_name(c->ud.comps.comp->cfg.mode), 0);
	cqp_ud_recv_begin(c->ud.rx);
	for (cqp_lat_loop_init(&l, p, c->ud.comps.comp);; l.i++) {
		uint64_t rtt = 0, posted = 0;

		cqp_lat_loop_next(&l);
		if (l.first)
			warm_lost = lost;
		rc = exchange(
		    run, c, (unsigned)(l.i % c->ud.nqp), (uint32_t)size,
		    (l.last ? TAG_END : 0) | (l.first ? TAG_MEASURE : 0),
		    &posted, &rtt, &lost);
		if (rc < 0)
			return rc;
		if (l.measured)
			cqp_lat_rec_add(&c->rec, posted, posted + rtt);
		if (l.last)
			break;
	}
	if ((rc = quiesce(c, (uint32_t)size)) < 0)
		return rc;
	cqp_comp_cost(c->ud.comps.comp, mine);
	row->has_lost = true;
	row->lost = lost - warm_lost;
	return cqp_lat_rec_finish(&c->rec, p, row);
}

/* The open loop's replies: a reply to a request in flight is timed; one
 * to a request already given up on is dropped.  Then requests older than
 * --retry-us are given up on, oldest first, and counted lost.  Returns
 * the completions reaped (0: silence). */
static int take_replies(struct cqp_run *run, struct lat_ctx *c, uint32_t size,
			uint64_t *oldest, uint64_t sent, uint64_t *lost,
			uint64_t until)
{
	const struct cqp_params *p = run->p;
	struct ibv_wc got[REAP_MAX];
	uint64_t now, retry_ns = (uint64_t)p->retry_us * 1000;
	int ngot, n = reap(c, until, size, got, &ngot, false), rc;

	if (n < 0)
		return n;
	now = cqp_now_ns();
	for (int k = 0; k < ngot; k++) {
		uint32_t imm = got[k].imm_data;
		/* The wire has 24 bits of the sequence. */
		uint64_t seq = cqp_seq_unwrap(sent, imm, SEQ_MASK);
		struct req *r = &c->slot[seq % c->nslot];

		if ((imm & STEP_MASK) != TAG_STEP(c->step) || seq >= sent ||
		    !r->live || r->seq != seq)
			continue;
		if (p->verify &&
		    (rc = check_payload(&c->ud, &got[k], size)) < 0)
			return rc;
		r->live = false;
		c->live--;
		/* Past --retry-us (read late, after a sleep): lost all the
		 * same, as if the scan below had come first. */
		if (now - r->posted >= retry_ns)
			*lost += r->seq >= p->warmup;
		else if (r->seq >= p->warmup)
			cqp_lat_rec_add_open(&c->rec, r->sched, r->posted, now);
	}
	while (*oldest < sent) {
		struct req *r = &c->slot[*oldest % c->nslot];

		if (r->live && now - r->posted < retry_ns)
			break;
		if (r->live) {
			r->live = false;
			c->live--;
			*lost += r->seq >= p->warmup;
		}
		++*oldest;
	}
	if (ngot && (rc = cqp_ud_recv_flush(&c->ud, c->ud.rx)) < 0)
		return rc;
	return n;
}

/* Open loop: requests go out on the schedule up to the window; a reply
 * that does not come within --retry-us is counted lost, not retried (the
 * schedule does not wait) and not in the percentiles. */
static int run_open_client(struct cqp_run *run, struct lat_ctx *c,
			   uint64_t size, struct cqp_row *row,
			   struct cqp_cost *mine)
{
	const struct cqp_params *p = run->p;
	uint64_t oldest = 0, lost = 0, heard, wake;
	uint64_t retry_ns = (uint64_t)p->retry_us * 1000;
	struct cqp_open_loop ol;
	int rc;

	if ((rc = size_slots(c, run->rate, p->retry_us)) < 0)
		return rc;
	memset(c->slot, 0, c->nslot * sizeof(*c->slot));
	c->live = 0;
	cqp_lat_rec_begin(&c->rec, p, size, cqp_cq_mode_name(run->mode),
			  run->rate);
	cqp_ud_recv_begin(c->ud.rx);
	heard = cqp_now_ns();
	cqp_ol_begin(&ol, p, run->rate, heard, heard ^ c->step);
	while (!ol.ending || oldest < ol.sent) {
		uint64_t now = cqp_now_ns();
		bool first, last;

		while (cqp_ol_due(&ol, now)) {
			struct req *r = &c->slot[ol.sent % c->nslot];
			uint32_t imm;

			if (c->live >= c->cap || r->live ||
			    c->outstanding + 1 > p->tx_depth) {
				cqp_ol_blocked(&ol);
				break;
			}
			cqp_ol_next(&ol, now, &first, &last);
			if (first)
				cqp_comp_begin(c->ud.comps.comp);
			imm = (last ? TAG_END : 0) | (first ? TAG_MEASURE : 0) |
			      TAG_STEP(c->step) |
			      (uint32_t)(ol.sent & SEQ_MASK);
			if ((rc = post_msg(c, (unsigned)(ol.sent % c->ud.nqp),
					   (uint32_t)size, imm, p->verify)) < 0)
				return rc;
			*r = (struct req){ol.sent, 0, now, true};
			r->sched = cqp_ol_posted(&ol, last, now);
			c->live++;
			now = cqp_now_ns();
		}
		/* Awake for the next request, and for the oldest one's
		 * --retry-us. */
		wake = cqp_ol_wake(&ol, now);
		if (oldest < ol.sent && c->slot[oldest % c->nslot].live &&
		    c->slot[oldest % c->nslot].posted + retry_ns < wake)
			wake = c->slot[oldest % c->nslot].posted + retry_ns;
		rc = take_replies(run, c, (uint32_t)size, &oldest, ol.sent,
				  &lost, wake);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			heard = now;
		} else if (now - heard >
			   (uint64_t)p->timeout_s * 1000000000ull) {
			return cqp_fail(CQP_E_TIMEOUT,
					"no reply from the server for %u s",
					p->timeout_s);
		} else if ((rc = cqp_comp_check_peer(c->ud.comps.comp, now)) <
			   0) {
			return rc;
		}
	}
	if ((rc = quiesce(c, (uint32_t)size)) < 0)
		return rc;
	cqp_comp_cost(c->ud.comps.comp, mine);
	row->has_lost = true;
	row->lost = lost;
	if ((rc = cqp_lat_rec_finish(&c->rec, p, row)) < 0)
		return rc;
	cqp_ol_finish(&ol, row);
	/* The load sent, lost requests included: they were offered. */
	if (row->iterations)
		row->achieved_rate *=
		    (double)(row->iterations + lost) / (double)row->iterations;
	return 0;
}

/* Echo every ping of this step until the client's last one; then wait
 * for stragglers until the client, done, sends its results. */
static int run_server(struct cqp_run *run, struct lat_ctx *c, uint64_t size,
		      struct cqp_cost *mine)
{
	const struct cqp_params *p = run->p;
	uint64_t quiet_since = cqp_now_ns(), now;
	bool done = false, heard = false;
	int rc, n;

	cqp_ud_recv_begin(c->ud.rx);
	cqp_comp_begin(c->ud.comps.comp);
	for (;;) {
		/* QUIET_MS from the last completion: no clock is read per
		 * ping. */
		n = cqp_comp_reap_recv_from(c->ud.comps.comp, c->held, REAP_MAX,
					    0, QUIET_MS);
		if (n < 0)
			return n;
		if (n == 0) {
			if (cqp_oob_pending(&run->s->oob))
				break;
			now = cqp_now_ns();
			if (heard)
				quiet_since = now;
			heard = false;
			if (now - quiet_since >
			    (uint64_t)p->timeout_s * 1000000000ull)
				return cqp_fail(CQP_E_TIMEOUT,
						"no ping and no word from "
						"client %s for %u s",
						run->s->oob.peer, p->timeout_s);
			continue;
		}
		heard = true;
		/* Our pongs' sends first, wherever they are in the batch: a
		 * ping before one must not have make_room wait for it. */
		for (int k = 0; k < n; k++)
			retired(c, &c->held[k]);
		/* make_room may add pings behind the batch: every one gets
		 * its pong, in the order they came. */
		c->nheld = (unsigned)n;
		for (unsigned k = 0; k < c->nheld; k++) {
			const struct ibv_wc *wc = &c->held[k];
			uint32_t imm = wc->imm_data;

			/* A send; a retry of the previous step's last ping. */
			if (!(wc->opcode & IBV_WC_RECV) ||
			    (imm & STEP_MASK) != TAG_STEP(c->step))
				continue;
			if (p->verify && (rc = check_payload(
					      &c->ud, wc, (uint32_t)size)) < 0)
				return rc;
			if (c->drop_every && ++c->pings % c->drop_every == 0)
				continue;
			if ((rc = make_room(c, 1, (uint32_t)size, p->tx_depth,
					    true)) < 0 ||
			    (rc = post_msg(c, cqp_ud_qp_index(&c->ud, wc),
					   (uint32_t)size, imm, p->verify)) < 0)
				return rc;
			if ((imm & TAG_MEASURE) && !done)
				cqp_comp_begin(c->ud.comps.comp);
			if ((imm & TAG_END) && !done) {
				/* The measured phase ends here, whatever
				 * stragglers follow. */
				done = true;
				cqp_comp_cost(c->ud.comps.comp, mine);
			}
		}
		/* Bookkeeping and reposting are off the critical path: the
		 * pongs are out.  (make_room's finds were queued already.) */
		for (int k = 0; k < n; k++)
			if ((c->held[k].opcode & IBV_WC_RECV) &&
			    (rc = cqp_ud_recv_again(&c->ud, c->ud.rx,
						    &c->held[k],
						    (uint32_t)size)) < 0)
				return rc;
		if ((rc = cqp_ud_recv_flush(&c->ud, c->ud.rx)) < 0)
			return rc;
	}
	if (!done)
		cqp_comp_cost(c->ud.comps.comp, mine);
	return quiesce(c, (uint32_t)size);
}

static int run_size(struct cqp_run *run, void *ctx, uint64_t size,
		    struct cqp_row *row, struct cqp_cost *mine)
{
	struct lat_ctx *c = ctx;
	int rc;

	prep_sends(c, (uint32_t)size);
	rc = run->is_client && run->rate
		 ? run_open_client(run, c, size, row, mine)
	     : run->is_client ? run_client(run, c, size, row, mine)
			      : run_server(run, c, size, mine);

	c->step++;
	mine->has_rx_mem = true;
	mine->rx_mem_bytes = c->ud.rbuf.len;
	return rc;
}

int main(int argc, char **argv)
{
	static const struct cqp_bench_ops ops = {
	    .tool = CQP_TOOL_UD_SEND_LAT,
	    .ctx_size = sizeof(struct lat_ctx),
	    .max_all_size = 4096,
	    .mem_need = cqp_ud_mem_need,
	    .setup = setup,
	    .run_size = run_size,
	    .teardown = teardown,
	    .annotate = cqp_lat_annotate,
	};

	return cqp_bench_main(&ops, argc, argv);
}
