/* SPDX-License-Identifier: BSD-2-Clause */
/* A run's peers, as its steps meet them: a look for one that hung up or
 * failed while traffic flows, a passive target's wait for its requester,
 * barriers, and a server group's results (--clients): each client's heard
 * and answered with what the server counted of its traffic. */
#include "engine/bench.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hwcount.h"
#include "base/kv.h"
#include "engine/fanin.h"
#include "report/results.h"

/* The completion engine's look at the peer when completions stop
 * coming (see cqp_comp_watch_peer): a peer that hung up or reported a
 * failure ends the wait, naming it.  Anything else it sent (its results:
 * it is done and ours are due) stays for the session to read. */
/* --threads: every thread's engine looks at the session, one at a time. */
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;

static int peer_look(struct cqp_session *s, struct cqp_oob *o)
{
	uint16_t type;
	int r = cqp_oob_peek(o, &type);

	if (r == 1 && type == CQP_MSG_ERROR)
		/* Reads the ERROR and fails with the peer's reason. */
		r = cqp_oob_expect(o, CQP_MSG_RESULTS, s->buf,
				   CQP_OOB_MAX_PAYLOAD, NULL);
	return r;
}

int cqp_run_check_peers(struct cqp_run *run)
{
	int r = 0;

	pthread_mutex_lock(&peer_lock);
	if (run->group)
		for (unsigned i = 0; r >= 0 && i < run->group->n; i++)
			r = peer_look(run->s, &run->group->m[i]);
	else
		r = peer_look(run->s, &run->s->oob);
	pthread_mutex_unlock(&peer_lock);
	/* This look comes every CQP_COMP_PEER_NS or so while a step runs:
	 * the progress line's clock, with no wakeup of its own. */
	if (r >= 0)
		cqp_progress_tick(run->progress, cqp_now_ns());
	return r < 0 ? r : 0;
}

bool cqp_run_peers_spoke(const struct cqp_run *run)
{
	if (!run->group)
		return cqp_oob_pending(&run->s->oob);
	for (unsigned i = 0; i < run->group->n; i++)
		if (!cqp_oob_pending(&run->group->m[i]))
			return false;
	return true;
}

const char *cqp_run_silent(const struct cqp_run *run, char *buf, size_t cap)
{
	size_t len = 0;

	if (!run->group) {
		snprintf(buf, cap, "client %s", run->s->oob.peer);
		return buf;
	}
	buf[0] = '\0';
	for (unsigned i = 0; i < run->group->n && len + 1 < cap; i++) {
		int k;

		if (cqp_oob_pending(&run->group->m[i]))
			continue;
		k = snprintf(buf + len, cap - len, "%s%s",
			     len ? ", " : "client ", run->group->m[i].peer);
		len += k > 0 ? (size_t)k : 0;
	}
	return buf;
}

int cqp_run_barrier(struct cqp_run *run, const char *name)
{
	return run->group ? cqp_group_barrier(run->group, name)
			  : cqp_session_barrier(&run->s->oob, name);
}

/* The ALIVE frames waiting at the head of the session, taken (one thread
 * at a time); 1 when the next frame is another (the requester's results,
 * or its ERROR), 0 when none is left, or a failure. */
static int take_alive(struct cqp_run *run)
{
	struct cqp_oob *o = &run->s->oob;
	uint16_t type;
	int r;

	pthread_mutex_lock(&peer_lock);
	while ((r = cqp_oob_peek(o, &type)) == 1 && type == CQP_MSG_ALIVE) {
		if ((r = cqp_oob_recv(o, &type, run->s->buf,
				      CQP_OOB_MAX_PAYLOAD, NULL)) < 0)
			break;
		atomic_store(&run->sync->alive_ns, cqp_now_ns());
	}
	pthread_mutex_unlock(&peer_lock);
	return r;
}

int cqp_bench_wait_peer(struct cqp_run *run, struct cqp_comp *comp,
			struct cqp_cost *mine)
{
	struct cqp_oob *o = &run->s->oob;
	struct pollfd pfd = {.fd = o->fd, .events = POLLIN};
	uint64_t limit = (uint64_t)run->p->timeout_s * 1000000000ull;
	uint64_t start = cqp_now_ns();
	int rc = 0;

	cqp_comp_begin(comp);
	for (;;) {
		uint64_t heard = atomic_load(&run->sync->alive_ns), now;

		if (*run->stop)
			return cqp_fail(CQP_E_INTERRUPTED, "interrupted");
		if (atomic_load(&run->sync->abort))
			return cqp_fail(CQP_E_INTERRUPTED,
					"stopped: another thread failed");
		/* A second at most: SIGINT may reach another thread. */
		if (poll(&pfd, 1, 1000) < 0 && errno != EINTR)
			return cqp_fail(CQP_E_SYS, "poll: %s", strerror(errno));
		if ((rc = take_alive(run)) < 0)
			break;
		if (rc == 1)
			break;
		now = cqp_now_ns();
		if (now - (heard > start ? heard : start) > limit)
			return cqp_fail(CQP_E_TIMEOUT,
					"no word from %s for %u s in a %s "
					"step (its requester says ALIVE "
					"while it runs): the client is "
					"frozen or gone",
					o->peer, run->p->timeout_s,
					cqp_verb_name(run->verb));
	}
	if (rc < 0)
		return rc;
	/* The peer's failure, or a hangup, ends the step as such. */
	if ((rc = cqp_run_check_peers(run)) < 0)
		return rc;
	cqp_comp_cost(comp, mine);
	return 0;
}

void cqp_run_results_encode(const struct cqp_run *run,
			    const struct cqp_row *row,
			    const struct cqp_cost *mine,
			    const struct cqp_hw_counters *hw,
			    struct cqp_kv_writer *w)
{
	cqp_results_encode(row, mine, w);
	if (!run->is_client && run->has_held)
		cqp_held_encode(&run->held, w);
	if (hw)
		cqp_hw_encode(hw, w);
}

/* Client i's figures as the group's row lists them. */
static struct cqp_client_figs client_figs(const struct cqp_oob *o,
					  const struct cqp_row *r,
					  const struct cqp_cost *c)
{
	struct cqp_client_figs f = {
	    .msg_rate_mpps = r->has_bw ? r->msg_rate_mpps : NAN,
	    .bw_avg_gbps = r->has_bw ? r->bw_avg_gbps : NAN,
	    .has_delivery = r->has_delivery,
	    .sent = r->sent,
	    .received = r->received,
	    .rx_dry = r->rx_dry,
	    .cpu_pct = c->valid ? c->cpu_pct : NAN,
	};

	snprintf(f.addr, sizeof(f.addr), "%s", o->peer);
	return f;
}

/* A group's results: each client's heard, and answered with what this
 * server counted of that client's traffic.  The row becomes the group's:
 * the clients' rates summed, the server's counts over all of them, and
 * each client's own figures with Jain's index over their rates. */
int cqp_run_group_results(const struct cqp_bench_ops *ops, struct cqp_run *run,
			  void *ctx, struct cqp_row *row,
			  const struct cqp_cost *mine,
			  struct cqp_hw_counters *hw_mine)
{
	struct cqp_group *g = run->group;
	size_t cap = CQP_RESULTS_REC;
	char *rec = malloc(cap);
	double *rates = calloc(g->n, sizeof(*rates));
	struct cqp_client_figs *cf = calloc(g->n, sizeof(*cf));
	struct cqp_row sum = *row;
	int rc = 0;

	if (!rec || !rates || !cf)
		rc =
		    cqp_fail(CQP_E_NOMEM, "out of memory for %u clients", g->n);
	sum.sent = 0;
	sum.iterations = 0;
	sum.msg_rate_mpps = sum.bw_avg_gbps = sum.bw_peak_gbps = 0;
	for (unsigned i = 0; rc == 0 && i < g->n; i++) {
		struct cqp_row own = *row;
		struct cqp_cost theirs = {0};
		struct cqp_kv_writer w;
		const char *text;
		uint32_t len;

		/* Where the server counts by client (UD's delivery). */
		if (ops->client_row)
			ops->client_row(run, ctx, i, &own);
		cqp_kv_writer_init(&w, rec, cap);
		cqp_run_results_encode(run, &own, mine, hw_mine, &w);
		rc = cqp_group_exchange(g, i, CQP_MSG_RESULTS, &w, &text, &len);
		if (rc == 0)
			rc = cqp_results_decode(&own, &theirs, text, len);
		free(theirs.threads);
		if (rc < 0)
			break;
		cf[i] = client_figs(&g->m[i], &own, &theirs);
		rates[i] = own.has_bw ? own.msg_rate_mpps : 0;
		sum.has_bw |= own.has_bw;
		sum.sent += own.sent;
		sum.fanout = own.fanout;
		sum.iterations += own.iterations;
		sum.msg_rate_mpps += own.msg_rate_mpps;
		sum.bw_avg_gbps += own.bw_avg_gbps;
		sum.bw_peak_gbps += own.bw_peak_gbps;
	}
	free(rec);
	if (rc < 0) {
		free(rates);
		free(cf);
		return rc;
	}
	*row = sum;
	row->clients = cf;
	row->nclients = g->n;
	row->fairness = cqp_jain(rates, g->n);
	free(rates);
	/* Each client's CPU is in its own entry; the row's client column
	 * would be one of K. */
	memset(&row->client, 0, sizeof(row->client));
	row->server = *mine;
	row->hw_server = hw_mine;
	return 0;
}
