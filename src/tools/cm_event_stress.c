/* SPDX-License-Identifier: BSD-2-Clause */
/* cm_event_stress: RDMA CM connect/accept/reject/disconnect storms.  The
 * client drives --connections per round, --concurrency at once, for
 * --rounds; the server accepts or (--reject-pct) rejects.  Every event is
 * copied and acked before it is acted on, private data is verified on
 * both sides, and each side counts every id it made and destroyed and
 * every event it took and acked, so the report can prove nothing leaked. */
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cm_event_stress/cm_ctx.h"
#include "base/cpuacct.h"
#include "base/error.h"
#include "report/results.h"

#define SIDE_MAX 32 /* event rows per side */

static int setup(struct cqp_run *run, void *arg)
{
	struct ctx *c = arg;
	const struct cqp_params *p = run->p;
	struct cqp_cm_loop_cfg cfg = {p->cm_mode, p->cm_batch, p->threads,
				      run->stop};
	int rc;

	c->run = run;
	c->p = p;
	pthread_mutex_init(&c->mu, NULL);
	cqp_cm_stats_init(&c->st);
	run->max_size = UINT64_MAX;
	rc = cqp_cm_loop_create(
	    &c->loop, &cfg, run->is_client ? cm_client_event : cm_server_event,
	    c);
	c->loop_made = true;
	if (rc < 0)
		return rc;
	snprintf(run->dev.name, sizeof(run->dev.name), "(RDMA CM)");
	if (run->is_client) {
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
		/* Test hook: aim RDMA CM elsewhere (an address nobody
		 * answers) to exercise the counted error paths. */
		const char *dst = getenv("CQPERF_TEST_CM_DST");
		char port[8];

		if (!dst || !dst[0])
			dst = p->cm_addr[0] ? p->cm_addr : p->host;
		snprintf(port, sizeof(port), "%u", p->port);
		if ((rc = getaddrinfo(dst, port, &hints, &res)))
			return cqp_fail(CQP_E_NET, "cannot resolve '%s': %s",
					dst, gai_strerror(rc));
		memcpy(&c->cl.dst, res->ai_addr, res->ai_addrlen);
		freeaddrinfo(res);
		c->cl.n = p->connections;
		c->cl.conns = calloc(c->cl.n, sizeof(*c->cl.conns));
		if (!c->cl.conns)
			return cqp_fail(CQP_E_NOMEM, "out of memory");
		/* The server listens before the first connect. */
		return cqp_session_barrier(&run->s->oob, "cm-listening");
	}
	{
		struct sockaddr_in6 any = {.sin6_family = AF_INET6,
					   .sin6_port = htons(p->port)};

		if ((rc = cqp_cm_loop_create_id(&c->loop, &c->sv.listen, NULL,
						RDMA_PS_TCP)) < 0)
			return rc;
		if (rdma_bind_addr(c->sv.listen, (struct sockaddr *)&any) ||
		    rdma_listen(c->sv.listen, 1024))
			return cqp_fail(CQP_E_NET,
					"listening for RDMA CM on port %u: %s",
					p->port, strerror(errno));
	}
	return cqp_session_barrier(&run->s->oob, "cm-listening");
}

static void teardown(struct cqp_run *run, void *arg)
{
	struct ctx *c = arg;

	(void)run;
	if (c->loop_made) {
		/* Workers first: after a failure they may still hold events
		 * of the ids below.  Then ids before their channel: a client
		 * that died, or a run that failed, leaves connections
		 * behind. */
		cqp_cm_loop_stop(&c->loop);
		for (unsigned i = 0; c->cl.conns && i < c->cl.n; i++) {
			struct conn *k = &c->cl.conns[i];

			if (k->id) {
				cqp_cm_conn_free_qp(k->id, k->cq);
				cqp_cm_loop_destroy_id(&c->loop, k->id);
			}
		}
		while (c->sv.live_list)
			cm_server_drop(c, c->sv.live_list);
		if (c->sv.listen)
			cqp_cm_loop_destroy_id(&c->loop, c->sv.listen);
		cqp_cm_loop_destroy(&c->loop);
	}
	cqp_cm_verbs_free(&c->verbs);
	free(c->cl.conns);
	if (c->p)
		pthread_mutex_destroy(&c->mu);
}

/* Each side's own tallies, in a fixed order per role. */
static const char *const client_keys[] = {
    "events",	     "events_acked",	  "events_dropped",   "ids_created",
    "ids_destroyed", "copy_ns_per_event", "ack_ns_per_event", "attempts",
    "established",   "rejected",	  "failed",	      "disconnected",
    "retries",	     "msgs_sent",
};
static const char *const server_keys[] = {
    "events",	     "events_acked",	  "events_dropped",   "ids_created",
    "ids_destroyed", "copy_ns_per_event", "ack_ns_per_event", "requests",
    "accepted",	     "rejected",	  "established",      "disconnected",
    "live",
};
#define N_CLIENT_KEYS (sizeof(client_keys) / sizeof(client_keys[0]))
#define N_SERVER_KEYS (sizeof(server_keys) / sizeof(server_keys[0]))
#define N_TALLY	      (N_CLIENT_KEYS + E_N)
#define PER_EVENT(k)  (strstr((k), "_per_event") != NULL)

static unsigned tally_keys(bool client, const char **keys)
{
	unsigned n = client ? N_CLIENT_KEYS : N_SERVER_KEYS;

	for (unsigned i = 0; i < n; i++)
		keys[i] = client ? client_keys[i] : server_keys[i];
	for (unsigned e = 0; e < E_N; e++)
		keys[n + e] = cm_err_keys[e];
	return n + E_N;
}

static unsigned tallies(const struct ctx *c, double *v)
{
	const struct cqp_cm_loop *l = &c->loop;
	double acked = l->acked ? (double)l->acked : 1;
	const double client[] = {
	    l->events,	       l->acked,	 l->dropped,
	    c->ids_created,    c->ids_destroyed, l->copy_ns / acked,
	    l->ack_ns / acked, c->cl.attempts,	 c->cl.established,
	    c->cl.rejected,    c->cl.failed,	 c->cl.disconnected,
	    c->cl.retries,     c->cl.msgs_sent,
	};
	const double server[] = {
	    l->events,	       l->acked,	  l->dropped,
	    c->ids_created,    c->ids_destroyed,  l->copy_ns / acked,
	    l->ack_ns / acked, c->sv.requests,	  c->sv.accepted,
	    c->sv.rejected,    c->sv.established, c->sv.disconnected,
	    c->sv.live,
	};
	bool cl = c->run->is_client;
	unsigned n = cl ? N_CLIENT_KEYS : N_SERVER_KEYS;

	memcpy(v, cl ? client : server, n * sizeof(*v));
	for (unsigned e = 0; e < E_N; e++)
		v[n + e] = (double)c->errors[e];
	return n + E_N;
}

/* Run-wide rates, from the client's clocks. */
static const char *const rate_keys[] = {"connections", "conn_per_s",
					"teardown_per_s", "events_per_s"};
#define N_RATES (sizeof(rate_keys) / sizeof(rate_keys[0]))

static void rates(const struct ctx *c, const double secs[2], double *v)
{
	double all = secs[0] + secs[1];

	v[0] = (double)c->cl.established;
	v[1] = secs[0] > 0 ? (double)c->cl.established / secs[0] : 0;
	v[2] = secs[1] > 0 ? (double)c->cl.disconnected / secs[1] : 0;
	v[3] = all > 0 ? (double)c->loop.events / all : 0;
}

static void fig(struct cqp_run *run, const char *group, const char *key,
		double v)
{
	struct cqp_figure *f;

	if (run->nsummary == CQP_RUN_FIGURES)
		return;
	f = &run->summary[run->nsummary++];
	snprintf(f->group, sizeof(f->group), "%s", group);
	snprintf(f->key, sizeof(f->key), "%s", key);
	f->value = v;
	f->integer = !PER_EVENT(key) && !strstr(key, "_per_s");
}

/* Figures named keys from a kv record (the peer's). */
static void figs_from(struct cqp_run *run, const char *group,
		      const char *const *keys, unsigned n, const char *text,
		      size_t len)
{
	for (unsigned i = 0; i < n; i++) {
		double x = NAN;

		if (cqp_kv_get_double(text, len, keys[i], &x) < 0)
			cqp_errclear();
		fig(run, group, keys[i], x);
	}
}

/* Both sides' rows and tallies to both sides; secs (client only): the
 * connect and teardown phases' durations. */
static int exchange(struct cqp_run *run, struct ctx *c, const double secs[2],
		    double seconds, const struct cqp_cost *cost,
		    struct cqp_row *rows, unsigned *nrows, unsigned cap)
{
	bool cl = run->is_client;
	char *buf = malloc(64 * 1024);
	struct cqp_kv_writer w;
	struct cqp_row mine[SIDE_MAX];
	const char *keys[N_TALLY], *peer_keys[N_TALLY], *text;
	double v[N_TALLY], rv[N_RATES];
	unsigned n, np, nmine;
	uint32_t len;
	int rc;

	if (!buf)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	nmine = cqp_cm_stats_rows(&c->st, cl ? "client" : "server", seconds,
				  mine, 0, SIDE_MAX);
	n = tally_keys(cl, keys);
	tallies(c, v);
	cqp_kv_writer_init(&w, buf, 64 * 1024);
	cqp_cm_rows_encode(mine, nmine, &w);
	cqp_cost_encode_as(cost, "cost_", &w);
	for (unsigned i = 0; i < n; i++)
		cqp_kv_add_double(&w, keys[i], v[i]);
	if (cl) {
		rates(c, secs, rv);
		for (unsigned i = 0; i < N_RATES; i++)
			cqp_kv_add_double(&w, rate_keys[i], rv[i]);
	}
	rc = cqp_session_exchange(run->s, CQP_MSG_RESULTS, &w, &text, &len);
	if (rc == 0 && cl) {
		memcpy(rows, mine, nmine * sizeof(*rows));
		rc = cqp_cm_rows_decode(text, len, "server", rows, nmine, cap,
					nrows);
	} else if (rc == 0) {
		rc = cqp_cm_rows_decode(text, len, "client", rows, 0, cap,
					nrows);
		for (unsigned i = 0; i < nmine && *nrows < cap; i++)
			rows[(*nrows)++] = mine[i];
	}
	if (rc == 0) {
		struct cqp_cost theirs;

		*(cl ? &run->run_client : &run->run_server) = *cost;
		/* Without the peer's figures the run still reports. */
		if (cqp_cost_decode_as(&theirs, "cost_", text, len) == 0)
			*(cl ? &run->run_server : &run->run_client) = theirs;
		else
			cqp_errclear();
		np = tally_keys(!cl, peer_keys);
		if (cl)
			for (unsigned i = 0; i < N_RATES; i++)
				fig(run, "", rate_keys[i], rv[i]);
		else
			figs_from(run, "", rate_keys, N_RATES, text, len);
		if (cl) {
			for (unsigned i = 0; i < n; i++)
				fig(run, "client", keys[i], v[i]);
			figs_from(run, "server", peer_keys, np, text, len);
		} else {
			figs_from(run, "client", peer_keys, np, text, len);
			for (unsigned i = 0; i < n; i++)
				fig(run, "server", keys[i], v[i]);
		}
	}
	free(buf);
	return rc;
}

/* After a failure: what this side saw until then. */
static void partial(struct cqp_run *run, struct ctx *c, double seconds,
		    struct cqp_row *rows, unsigned *nrows, unsigned cap)
{
	const char *keys[N_TALLY];
	double v[N_TALLY];
	unsigned n = tally_keys(run->is_client, keys);
	const char *side = run->is_client ? "client" : "server";

	tallies(c, v);
	*nrows = cqp_cm_stats_rows(&c->st, side, seconds, rows, 0, cap);
	run->nsummary = 0;
	for (unsigned i = 0; i < n; i++)
		fig(run, side, keys[i], v[i]);
}

static int run_all(struct cqp_run *run, void *arg, struct cqp_row *rows,
		   unsigned cap, unsigned *nrows)
{
	struct ctx *c = arg;
	double secs[2] = {0, 0}, seconds = 0;
	struct cqp_cpu_acct acct;
	struct cqp_cost cost = {.valid = true};
	int rc = 0;

	*nrows = 0;
	/* The whole storm is the measured phase (cqperf(7) CPU ACCOUNTING). */
	cqp_acct_init(&acct, run->p->cpu);
	cqp_acct_set_peer(&acct,
			  run->s->oob.peer_local ? run->s->oob.peer_pid : 0);
	cqp_acct_begin(&acct);
	if (!run->is_client) {
		rc = cm_serve(c, &seconds);
	} else {
		for (uint32_t r = 0; r < c->p->rounds && rc == 0; r++) {
			rc = cm_run_phase(c, PH_CONNECT, &secs[0]);
			if (rc == 0)
				rc = cm_run_phase(c, PH_DISCONNECT, &secs[1]);
		}
		seconds = secs[0] + secs[1];
	}
	cqp_acct_end(&acct, &cost);
	cqp_acct_free(&acct);
	if (rc == 0)
		rc = exchange(run, c, secs, seconds, &cost, rows, nrows, cap);
	if (rc < 0) {
		partial(run, c, seconds, rows, nrows, cap);
		*(run->is_client ? &run->run_client : &run->run_server) = cost;
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct cqp_bench_ops ops = {
	    .tool = CQP_TOOL_CM_EVENT_STRESS,
	    .ctx_size = sizeof(struct ctx),
	    .setup = setup,
	    .run_all = run_all,
	    .teardown = teardown,
	};

	return cqp_bench_main(&ops, argc, argv);
}
