/* SPDX-License-Identifier: BSD-2-Clause */
#include "oob/group.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/kv.h"
#include "base/version.h"
#include "oob/wait.h"

/* How long the door gives a caller to say who it is: a refusal must not
 * wait on a client that says nothing. */
#define DOOR_HELLO_MS 2000
#define DOOR_POLL_MS  200

/* A refusal during the join or at the door, on stderr: the operator sees
 * who knocked and why; the group goes on. */
static void say_refused(const char *say)
{
	if (say)
		fprintf(stderr, "%s: %s (the group goes on)\n", say,
			cqp_errmsg());
	cqp_errclear();
}

static int accept_member(struct cqp_group *g, unsigned i, int64_t deadline)
{
	char rec[64];
	struct cqp_kv_writer w;
	int64_t left = deadline - cqp_oob_now_ms();

	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_u64(&w, CQP_GROUP_WAIT_KEY, left > 0 ? (uint64_t)left : 0);
	return cqp_oob_send(&g->m[i], CQP_MSG_ACCEPT, w.buf, (uint32_t)w.len);
}

/* A client whose parameters are not the group's is refused, naming the
 * first option that differs. */
static int same_test(struct cqp_group *g, const struct cqp_params *q,
		     struct cqp_oob *o)
{
	char va[512], vb[512];
	const char *name =
	    cqp_params_differ(g->s->p, q, g->s->tool, va, vb, sizeof(va));

	if (!name)
		return 0;
	cqp_fail(CQP_E_USAGE,
		 "--%s %s, where the group of %u clients runs --%s %s: its "
		 "clients run one test",
		 name, vb, g->s->p->clients, name, va);
	return cqp_session_refuse(o);
}

static void *door(void *arg)
{
	struct cqp_group *g = arg;
	const char *tool = cqp_tool_name(g->s->tool);
	char buf[8192];
	sigset_t all;

	/* Signals are the run's thread's: its waits must see them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (!atomic_load(&g->door_stop)) {
		struct cqp_oob o;
		uint32_t len;

		if (cqp_oob_accept(g->s->lfd, DOOR_POLL_MS, &o) < 0) {
			cqp_errclear();
			continue;
		}
		o.timeout_ms = DOOR_HELLO_MS;
		if (cqp_session_hello(&o, tool, CQP_VERSION) == 0 &&
		    cqp_oob_expect(&o, CQP_MSG_PARAMS, buf, sizeof(buf),
				   &len) == 0) {
			cqp_fail(CQP_E_REJECTED, "server full: %u clients",
				 g->n);
			cqp_session_refuse(&o);
			say_refused(g->s->p->quiet ? NULL : tool);
		} else {
			cqp_oob_close(&o);
			cqp_errclear();
		}
	}
	return NULL;
}

static int joined(struct cqp_group *g, const char *say)
{
	int rc = 0;

	for (unsigned i = 0; rc == 0 && i < g->n; i++)
		rc = cqp_session_barrier_say(&g->m[i], CQP_GROUP_JOINED);
	if (rc < 0)
		return rc;
	atomic_store(&g->door_stop, 0);
	if (pthread_create(&g->door, NULL, door, g) == 0)
		g->door_open = true;
	else if (say)
		fprintf(stderr,
			"%s: no thread to refuse latecomers: they wait for "
			"the next group\n",
			say);
	return 0;
}

int cqp_group_join(struct cqp_group *g, struct cqp_session *s,
		   cqp_mem_need_fn mem_need, const char *say)
{
	unsigned k = s->p->clients;
	int64_t deadline;
	int rc;

	memset(g, 0, sizeof(*g));
	g->s = s;
	g->m = calloc(k, sizeof(*g->m));
	if (!g->m)
		return cqp_fail(CQP_E_NOMEM, "out of memory for %u clients", k);
	for (unsigned i = 0; i < k; i++)
		g->m[i].fd = -1;
	/* The first sets the test, as a lone client does: no deadline. */
	rc = cqp_session_admit(s, &g->m[0], s->p, -1, mem_need);
	if (rc < 0)
		return rc;
	g->n = 1;
	deadline = cqp_oob_now_ms() + (int64_t)s->p->join_timeout_s * 1000;
	rc = accept_member(g, 0, deadline);
	while (rc == 0 && g->n < k) {
		struct cqp_params q = *s->p;
		struct cqp_oob *o = &g->m[g->n];
		int64_t left = deadline - cqp_oob_now_ms();

		if (left <= 0) {
			rc = cqp_fail(CQP_E_TIMEOUT,
				      "--join-timeout %" PRIu32
				      " s: %u of %u clients came",
				      s->p->join_timeout_s, g->n, k);
			break;
		}
		rc = cqp_session_admit(s, o, &q, (int)left, mem_need);
		if (rc == 0)
			rc = same_test(g, &q, o);
		if (rc == 0) {
			rc = accept_member(g, g->n, deadline);
			if (rc == 0)
				g->n++;
			continue;
		}
		if (cqp_errcode() == CQP_E_INTERRUPTED)
			break;
		/* Timed out waiting: said at the loop's top, with the
		 * count.  Anyone else was one bad caller. */
		rc = 0;
		if (cqp_oob_now_ms() < deadline)
			say_refused(s->p->quiet ? NULL : say);
		else
			cqp_errclear();
	}
	if (rc == 0)
		rc = joined(g, say);
	if (rc < 0)
		cqp_group_abort(g);
	return rc;
}

void cqp_group_end(struct cqp_group *g)
{
	if (g->door_open) {
		atomic_store(&g->door_stop, 1);
		pthread_join(g->door, NULL);
		g->door_open = false;
	}
	for (unsigned i = 0; g->m && i < g->n; i++)
		cqp_oob_close(&g->m[i]);
	free(g->m);
	g->m = NULL;
	g->n = 0;
}

int cqp_group_barrier(struct cqp_group *g, const char *name)
{
	int rc = 0;

	for (unsigned i = 0; rc == 0 && i < g->n; i++)
		rc = cqp_session_barrier_heard(&g->m[i], name);
	for (unsigned i = 0; rc == 0 && i < g->n; i++)
		rc = cqp_session_barrier_say(&g->m[i], name);
	return rc;
}

int cqp_group_step(struct cqp_group *g, struct cqp_step_req *st)
{
	int rc = 0;

	for (unsigned i = 0; rc == 0 && i < g->n; i++) {
		struct cqp_step_req r = {0};

		rc = cqp_session_step_heard(g->s, &g->m[i], i ? &r : st);
		if (rc < 0 || i == 0)
			continue;
		/* A BYE carries nothing but its size, 0. */
		if (r.size != st->size ||
		    (r.size &&
		     (r.mode != st->mode || r.spin_us != st->spin_us ||
		      r.verb != st->verb)))
			rc = cqp_fail(
			    CQP_E_PROTO,
			    "client %s announced size %" PRIu64 " mode %" PRIu32
			    ", client %s size %" PRIu64 " mode %" PRIu32
			    ": a group steps together",
			    g->m[i].peer, r.size, r.mode, g->m[0].peer,
			    st->size, st->mode);
	}
	for (unsigned i = 0; rc == 0 && st->size && i < g->n; i++)
		rc = cqp_oob_send(&g->m[i], CQP_MSG_BARRIER, "", 0);
	return rc;
}

void cqp_group_abort(struct cqp_group *g)
{
	for (unsigned i = 0; i < g->n; i++)
		if (g->m[i].fd >= 0)
			cqp_oob_send_error(&g->m[i], cqp_errmsg());
}

bool cqp_group_local(const struct cqp_group *g)
{
	for (unsigned i = 0; i < g->n; i++)
		if (!g->m[i].peer_local)
			return false;
	return g->n > 0;
}

/* Client i as a session of its own, for the session's exchanges: the
 * group's parameters and buffer, that client's channel (not to close). */
static struct cqp_session member(const struct cqp_group *g, unsigned i)
{
	struct cqp_session v = *g->s;

	v.oob = g->m[i];
	v.lfd = -1;
	return v;
}

int cqp_group_exchange(struct cqp_group *g, unsigned i, uint16_t type,
		       const struct cqp_kv_writer *mine, const char **text,
		       uint32_t *len)
{
	struct cqp_session v = member(g, i);

	return cqp_session_exchange(&v, type, mine, text, len);
}

int cqp_group_exchange_endpoints(struct cqp_group *g, unsigned i,
				 const struct cqp_endpoint *local,
				 struct cqp_endpoint *remote, unsigned n)
{
	struct cqp_session v = member(g, i);

	return cqp_session_exchange_endpoints(&v, local, remote, n);
}

int cqp_group_exchange_port(struct cqp_group *g, unsigned i,
			    const struct cqp_port_facts *mine,
			    struct cqp_port_facts *theirs)
{
	struct cqp_session v = member(g, i);

	return cqp_session_exchange_port(&v, mine, theirs);
}
