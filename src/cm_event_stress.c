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

#include "bench.h"
#include "cm_loop.h"
#include "cm_storm.h"
#include "error.h"

#define QUIET_MS 100
#define SIDE_MAX 32 /* event rows per side */

enum phase { PH_CONNECT, PH_DISCONNECT };

/* Errors counted, not fatal. */
enum err { E_ADDR, E_ROUTE, E_UNREACH, E_CONNECT, E_REJECT, E_OTHER, E_N };
static const char *const err_keys[E_N] = {
    "addr_error",    "route_error",	    "unreachable",
    "connect_error", "rejected_unexpected", "other",
};

struct conn {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	uint32_t seq;
	uint32_t tries;	 /* resolution retries used */
	uint64_t t_call; /* the call whose event we wait for */
	bool established;
	struct conn *prev, *next; /* server: the live list */
};

/* Both sides' state: one struct, each side uses its part. */
struct ctx {
	struct cqp_run *run;
	const struct cqp_params *p;
	pthread_mutex_t mu;
	struct cqp_cm_loop loop;
	bool loop_made;
	struct cqp_cm_verbs verbs;
	struct cqp_cm_stats st;
	uint64_t errors[E_N];
	uint64_t ids_created, ids_destroyed;
	/* client */
	struct sockaddr_storage dst;
	struct conn *conns;
	unsigned n, next, finished;
	enum phase phase;
	uint32_t seq;
	uint64_t attempts, established, rejected, failed, disconnected;
	uint64_t retries, msgs_sent;
	/* server */
	struct rdma_cm_id *listen;
	uint64_t requests, accepted, srejected, sestablished, sdisconnected;
	uint64_t live;
	struct conn *live_list;
	uint64_t oob_checked;
	bool spoke; /* the client sent its results, or died */
};

static void count(struct ctx *c, const struct cqp_cm_ev *ev, uint64_t t_call)
{
	pthread_mutex_lock(&c->mu);
	cqp_cm_stats_add(&c->st, ev->type, t_call ? ev->t_ns - t_call : 0);
	pthread_mutex_unlock(&c->mu);
}

/* An event whose latency is not "since a call" (a request: from taken to
 * answered). */
static void count_lat(struct ctx *c, enum rdma_cm_event_type t, uint64_t lat_ns)
{
	pthread_mutex_lock(&c->mu);
	cqp_cm_stats_add(&c->st, t, lat_ns);
	pthread_mutex_unlock(&c->mu);
}

static void bump(struct ctx *c, uint64_t *counter)
{
	pthread_mutex_lock(&c->mu);
	(*counter)++;
	pthread_mutex_unlock(&c->mu);
}

static void destroy_conn(struct ctx *c, struct conn *k)
{
	cqp_cm_conn_destroy(k->id, k->cq);
	k->id = NULL;
	k->cq = NULL;
	bump(c, &c->ids_destroyed);
}

/* ---- client ---- */

static int start_resolve(struct ctx *c, struct conn *k)
{
	if (rdma_create_id(c->loop.ch, &k->id, k, RDMA_PS_TCP))
		return cqp_fail(CQP_E_DEVICE, "rdma_create_id: %s",
				strerror(errno));
	bump(c, &c->ids_created);
	k->t_call = cqp_now_ns();
	if (rdma_resolve_addr(k->id, NULL, (struct sockaddr *)&c->dst,
			      (int)c->p->cm_timeout_ms))
		return cqp_fail(CQP_E_NET, "rdma_resolve_addr: %s",
				strerror(errno));
	return 0;
}

/* Starts the next connect or disconnect of the phase, if any is left. */
static int start_next(struct ctx *c)
{
	struct conn *k = NULL;

	pthread_mutex_lock(&c->mu);
	while (c->next < c->n) {
		k = &c->conns[c->next++];
		if (c->phase == PH_CONNECT || k->established)
			break;
		c->finished++; /* nothing to tear down */
		k = NULL;
	}
	if (k && c->phase == PH_CONNECT) {
		memset(k, 0, sizeof(*k));
		k->seq = c->seq++;
		c->attempts++;
	}
	pthread_mutex_unlock(&c->mu);
	if (!k)
		return 0;
	if (c->phase == PH_CONNECT)
		return start_resolve(c, k);
	k->t_call = cqp_now_ns();
	if (rdma_disconnect(k->id))
		return cqp_fail(CQP_E_NET, "rdma_disconnect: %s",
				strerror(errno));
	return 0;
}

/* A connection's connect (or disconnect) is over: start another. */
static int finish(struct ctx *c, uint64_t *outcome)
{
	pthread_mutex_lock(&c->mu);
	if (outcome)
		(*outcome)++;
	c->finished++;
	pthread_mutex_unlock(&c->mu);
	return start_next(c);
}

static int connect_conn(struct ctx *c, struct conn *k)
{
	uint8_t pd[CQP_PD_REQ_MAX];
	struct rdma_conn_param cp;
	int rc;

	if (!c->p->no_qp &&
	    (rc = cqp_cm_qp_create(&c->verbs, &c->mu, k->id, c->p->msgs, false,
				   &k->cq)) < 0)
		return rc;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.private_data_len = cqp_pd_fill(pd, sizeof(pd), CQP_PD_REQ, k->seq);
	cp.responder_resources = cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	/* --no-qp: a number no QP and no server connection uses, or the CM
	 * takes the REP for a stale connection. */
	cp.qp_num = 0x100000 | (k->seq & 0xfffff);
	k->t_call = cqp_now_ns();
	if (rdma_connect(k->id, &cp))
		return cqp_fail(CQP_E_NET, "rdma_connect: %s", strerror(errno));
	return 0;
}

/* A resolution failed: retry it on a fresh id, or give the connection
 * up. */
static int resolve_failed(struct ctx *c, struct conn *k, enum err e)
{
	bump(c, &c->errors[e]);
	destroy_conn(c, k);
	if (k->tries < c->p->retries) {
		k->tries++;
		bump(c, &c->retries);
		return start_resolve(c, k);
	}
	return finish(c, &c->failed);
}

static int on_established(struct ctx *c, struct conn *k,
			  const struct cqp_cm_ev *ev)
{
	uint32_t seq;
	int rc = cqp_pd_check(ev->pdata, ev->pdata_len, CQP_PD_ACC, &seq);

	if (rc == 0 && seq != k->seq)
		rc = cqp_fail(CQP_E_PROTO, "connection %u was accepted as %u",
			      k->seq, seq);
	if (rc == 0 && c->p->msgs) {
		rc = cqp_cm_send_msgs(&c->verbs, k->id, k->cq, c->p->msgs,
				      (int)c->p->timeout_s * 1000);
		if (rc == 0) {
			pthread_mutex_lock(&c->mu);
			c->msgs_sent += c->p->msgs;
			pthread_mutex_unlock(&c->mu);
		}
	}
	if (rc < 0)
		return rc;
	k->established = true;
	return finish(c, &c->established);
}

static int on_rejected(struct ctx *c, struct conn *k,
		       const struct cqp_cm_ev *ev)
{
	uint32_t seq;

	destroy_conn(c, k);
	/* Ours carries our private data; any other reject is an error. */
	if (ev->pdata_len &&
	    cqp_pd_check(ev->pdata, ev->pdata_len, CQP_PD_REJ, &seq) == 0) {
		if (seq != k->seq)
			return cqp_fail(CQP_E_PROTO,
					"connection %u was rejected as %u",
					k->seq, seq);
		return finish(c, &c->rejected);
	}
	cqp_errclear();
	bump(c, &c->errors[E_REJECT]);
	return finish(c, &c->failed);
}

static int client_event(void *arg, const struct cqp_cm_ev *ev)
{
	struct ctx *c = arg;
	struct conn *k = ev->id->context;

	count(c, ev, ev->type == RDMA_CM_EVENT_TIMEWAIT_EXIT ? 0 : k->t_call);
	switch (ev->type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		k->t_call = cqp_now_ns();
		if (rdma_resolve_route(k->id, (int)c->p->cm_timeout_ms))
			return cqp_fail(CQP_E_NET, "rdma_resolve_route: %s",
					strerror(errno));
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		return connect_conn(c, k);
	case RDMA_CM_EVENT_ADDR_ERROR:
		return resolve_failed(c, k, E_ADDR);
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return resolve_failed(c, k, E_ROUTE);
	case RDMA_CM_EVENT_ESTABLISHED:
		return on_established(c, k, ev);
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/* --no-qp: the application completes the handshake. */
		if (rdma_establish(k->id))
			return cqp_fail(CQP_E_NET, "rdma_establish: %s",
					strerror(errno));
		return on_established(c, k, ev);
	case RDMA_CM_EVENT_REJECTED:
		return on_rejected(c, k, ev);
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		bump(c, &c->errors[ev->type == RDMA_CM_EVENT_UNREACHABLE
				       ? E_UNREACH
				       : E_CONNECT]);
		destroy_conn(c, k);
		return finish(c, &c->failed);
	case RDMA_CM_EVENT_DISCONNECTED:
		if (c->phase != PH_DISCONNECT || !k->established)
			return cqp_fail(CQP_E_PROTO,
					"the server dropped connection %u",
					k->seq);
		k->established = false;
		destroy_conn(c, k);
		return finish(c, &c->disconnected);
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:
		bump(c, &c->errors[E_OTHER]);
		return 0;
	}
}

static bool phase_done(void *arg)
{
	struct ctx *c = arg;
	bool done;

	pthread_mutex_lock(&c->mu);
	done = c->finished == c->n;
	pthread_mutex_unlock(&c->mu);
	return done;
}

/* One phase: up to --concurrency at once until every connection is
 * through.  Returns its duration. */
static int run_phase(struct ctx *c, enum phase ph, double *seconds)
{
	uint64_t t0 = cqp_now_ns(), last = t0;
	bool quiet;
	int rc = 0;

	c->phase = ph;
	c->next = 0;
	c->finished = 0;
	for (unsigned i = 0; i < c->p->concurrency && rc == 0; i++)
		rc = start_next(c);
	while (rc == 0 && !phase_done(c)) {
		uint64_t before = c->loop.events;

		rc = cqp_cm_loop_run(&c->loop, phase_done, QUIET_MS, &quiet);
		if (c->loop.events != before)
			last = cqp_now_ns();
		if (rc == 0 && quiet &&
		    cqp_now_ns() - last >
			(uint64_t)c->p->timeout_s * 1000000000)
			rc = cqp_fail(CQP_E_TIMEOUT,
				      "no RDMA CM event for %u s (%u of %u "
				      "connections through)",
				      c->p->timeout_s, c->finished, c->n);
	}
	*seconds += (double)(cqp_now_ns() - t0) / 1e9;
	return rc;
}

/* ---- server ---- */

static bool reject_next(struct ctx *c, uint64_t k)
{
	/* Exactly floor(requests * P / 100) of the requests. */
	return (k + 1) * c->p->reject_pct / 100 > k * c->p->reject_pct / 100;
}

static int on_request(struct ctx *c, const struct cqp_cm_ev *ev)
{
	uint8_t pd[CQP_PD_REP_MAX];
	struct rdma_conn_param cp;
	struct conn *k;
	uint32_t seq;
	uint64_t idx;
	int rc = cqp_pd_check(ev->pdata, ev->pdata_len, CQP_PD_REQ, &seq);

	if (c->spoke) {
		/* Queued before a client died: not worth a QP any more. */
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		cqp_errclear();
		return 0;
	}
	pthread_mutex_lock(&c->mu);
	idx = c->requests++;
	c->ids_created++; /* RDMA CM made the request's id */
	pthread_mutex_unlock(&c->mu);
	if (rc < 0)
		return rc;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.responder_resources = cp.initiator_depth = 1;
	cp.rnr_retry_count = 7;
	if (reject_next(c, idx)) {
		uint8_t len = cqp_pd_fill(pd, sizeof(pd), CQP_PD_REJ, seq);

		count_lat(c, ev->type, cqp_now_ns() - ev->t_ns);
		rc = rdma_reject(ev->id, pd, len);
		cqp_cm_conn_destroy(ev->id, NULL);
		bump(c, &c->ids_destroyed);
		bump(c, &c->srejected);
		return rc ? cqp_fail(CQP_E_NET, "rdma_reject: %s",
				     strerror(errno))
			  : 0;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	k->id = ev->id;
	k->seq = seq;
	ev->id->context = k;
	pthread_mutex_lock(&c->mu);
	c->live++;
	k->next = c->live_list;
	if (k->next)
		k->next->prev = k;
	c->live_list = k;
	pthread_mutex_unlock(&c->mu);
	if (!c->p->no_qp &&
	    (rc = cqp_cm_qp_create(&c->verbs, &c->mu, ev->id, c->p->msgs, true,
				   &k->cq)) < 0)
		return rc;
	cp.private_data_len = cqp_pd_fill(pd, sizeof(pd), CQP_PD_ACC, seq);
	cp.qp_num = 0x200000 | (seq & 0xfffff);
	k->t_call = cqp_now_ns();
	count_lat(c, ev->type, k->t_call - ev->t_ns);
	if (rdma_accept(ev->id, &cp))
		return cqp_fail(CQP_E_NET, "rdma_accept: %s", strerror(errno));
	bump(c, &c->accepted);
	return 0;
}

static void server_drop(struct ctx *c, struct conn *k)
{
	destroy_conn(c, k);
	pthread_mutex_lock(&c->mu);
	c->live--;
	if (k->prev)
		k->prev->next = k->next;
	else
		c->live_list = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&c->mu);
	free(k);
}

static int server_event(void *arg, const struct cqp_cm_ev *ev)
{
	struct ctx *c = arg;
	struct conn *k = ev->id->context;

	switch (ev->type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return on_request(c, ev);
	case RDMA_CM_EVENT_ESTABLISHED:
		count(c, ev, k->t_call);
		k->established = true;
		bump(c, &c->sestablished);
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
		count(c, ev, 0);
		bump(c, &c->sdisconnected);
		server_drop(c, k);
		return 0;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		count(c, ev, k ? k->t_call : 0);
		bump(c, &c->errors[ev->type == RDMA_CM_EVENT_UNREACHABLE
				       ? E_UNREACH
				       : E_CONNECT]);
		if (k)
			server_drop(c, k);
		return 0;
	default:
		count(c, ev, 0);
		return 0;
	}
}

/* The client has sent its results (or died): looked at every 50 ms,
 * busy or not, since a dying client's connections keep events coming. */
static bool client_spoke(void *arg)
{
	struct ctx *c = arg;
	uint64_t now = cqp_now_ns();

	if (c->spoke || now - c->oob_checked < 50000000)
		return c->spoke;
	c->oob_checked = now;
	c->spoke = cqp_oob_pending(&c->run->s->oob);
	return c->spoke;
}

static bool none_live(void *arg)
{
	struct ctx *c = arg;
	bool done;

	pthread_mutex_lock(&c->mu);
	done = c->live == 0;
	pthread_mutex_unlock(&c->mu);
	return done;
}

/* Serves until the client, done, sends its results; then lets its last
 * disconnects arrive (a client that died leaves them to us). */
static int serve(struct ctx *c, double *seconds)
{
	uint64_t t0 = cqp_now_ns(), last = t0;
	bool quiet;
	int rc;

	for (;;) {
		uint64_t before = c->loop.events;

		rc = cqp_cm_loop_run(&c->loop, client_spoke, QUIET_MS, &quiet);
		if (rc < 0)
			return rc;
		if (c->loop.events != before)
			last = cqp_now_ns();
		if (!quiet || client_spoke(c))
			break;
		if (cqp_now_ns() - last >
		    (uint64_t)c->p->timeout_s * 1000000000)
			return cqp_fail(CQP_E_TIMEOUT,
					"no RDMA CM event and no word from the "
					"client for %u s",
					c->p->timeout_s);
	}
	*seconds = (double)(last - t0) / 1e9;
	/* The last disconnects may still be on their way; a dead client's
	 * connections may never end, and teardown destroys them. */
	for (int i = 0; i < 20 && !none_live(c); i++)
		if ((rc = cqp_cm_loop_run(&c->loop, none_live, 100, &quiet)) <
		    0)
			return rc;
	return 0;
}

/* ---- both ---- */

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
	    &c->loop, &cfg, run->is_client ? client_event : server_event, c);
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
			dst = p->host;
		snprintf(port, sizeof(port), "%u", p->port);
		if ((rc = getaddrinfo(dst, port, &hints, &res)))
			return cqp_fail(CQP_E_NET, "cannot resolve '%s': %s",
					dst, gai_strerror(rc));
		memcpy(&c->dst, res->ai_addr, res->ai_addrlen);
		freeaddrinfo(res);
		c->n = p->connections;
		c->conns = calloc(c->n, sizeof(*c->conns));
		if (!c->conns)
			return cqp_fail(CQP_E_NOMEM, "out of memory");
		/* The server listens before the first connect. */
		return cqp_oob_barrier(&run->s->oob, "cm-listening");
	}
	{
		struct sockaddr_in6 any = {.sin6_family = AF_INET6,
					   .sin6_port = htons(p->port)};

		if (rdma_create_id(c->loop.ch, &c->listen, NULL, RDMA_PS_TCP))
			return cqp_fail(CQP_E_DEVICE, "rdma_create_id: %s",
					strerror(errno));
		if (rdma_bind_addr(c->listen, (struct sockaddr *)&any) ||
		    rdma_listen(c->listen, 1024))
			return cqp_fail(CQP_E_NET,
					"listening for RDMA CM on port %u: %s",
					p->port, strerror(errno));
	}
	return cqp_oob_barrier(&run->s->oob, "cm-listening");
}

static void teardown(struct cqp_run *run, void *arg)
{
	struct ctx *c = arg;

	(void)run;
	/* Ids before their channel: a client that died, or a run that
	 * failed, leaves connections behind. */
	for (unsigned i = 0; c->conns && i < c->n; i++)
		if (c->conns[i].id)
			cqp_cm_conn_destroy(c->conns[i].id, c->conns[i].cq);
	while (c->live_list)
		server_drop(c, c->live_list);
	if (c->listen)
		rdma_destroy_id(c->listen);
	if (c->loop_made)
		cqp_cm_loop_destroy(&c->loop);
	cqp_cm_verbs_free(&c->verbs);
	free(c->conns);
	if (c->p)
		pthread_mutex_destroy(&c->mu);
}

/* Each side's own tallies, in a fixed order per role. */
static const char *const client_keys[] = {
    "events",	     "events_acked",	  "ids_created",
    "ids_destroyed", "copy_ns_per_event", "ack_ns_per_event",
    "attempts",	     "established",	  "rejected",
    "failed",	     "disconnected",	  "retries",
    "msgs_sent",
};
static const char *const server_keys[] = {
    "events",	     "events_acked",	  "ids_created",
    "ids_destroyed", "copy_ns_per_event", "ack_ns_per_event",
    "requests",	     "accepted",	  "rejected",
    "established",   "disconnected",	  "live",
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
		keys[n + e] = err_keys[e];
	return n + E_N;
}

static unsigned tallies(const struct ctx *c, double *v)
{
	const struct cqp_cm_loop *l = &c->loop;
	double acked = l->acked ? (double)l->acked : 1;
	const double client[] = {
	    l->events,	      l->acked,		  c->ids_created,
	    c->ids_destroyed, l->copy_ns / acked, l->ack_ns / acked,
	    c->attempts,      c->established,	  c->rejected,
	    c->failed,	      c->disconnected,	  c->retries,
	    c->msgs_sent,
	};
	const double server[] = {
	    l->events,	      l->acked,		  c->ids_created,
	    c->ids_destroyed, l->copy_ns / acked, l->ack_ns / acked,
	    c->requests,      c->accepted,	  c->srejected,
	    c->sestablished,  c->sdisconnected,	  c->live,
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

	v[0] = (double)c->established;
	v[1] = secs[0] > 0 ? (double)c->established / secs[0] : 0;
	v[2] = secs[1] > 0 ? (double)c->disconnected / secs[1] : 0;
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
		    double seconds, struct cqp_row *rows, unsigned *nrows,
		    unsigned cap)
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
	int rc = 0;

	*nrows = 0;
	if (!run->is_client) {
		rc = serve(c, &seconds);
	} else {
		for (uint32_t r = 0; r < c->p->rounds && rc == 0; r++) {
			rc = run_phase(c, PH_CONNECT, &secs[0]);
			if (rc == 0)
				rc = run_phase(c, PH_DISCONNECT, &secs[1]);
		}
		seconds = secs[0] + secs[1];
	}
	if (rc == 0)
		rc = exchange(run, c, secs, seconds, rows, nrows, cap);
	if (rc < 0)
		partial(run, c, seconds, rows, nrows, cap);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct cqp_bench_ops ops = {
	    .tool = CQP_TOOL_CM_EVENT_STRESS,
	    .title = "RDMA CM event storm",
	    .ctx_size = sizeof(struct ctx),
	    .setup = setup,
	    .run_all = run_all,
	    .teardown = teardown,
	};

	return cqp_bench_main(&ops, argc, argv);
}
