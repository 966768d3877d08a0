/* SPDX-License-Identifier: BSD-2-Clause */
/* A server's group of clients (--clients K): K out-of-band channels that
 * asked for the same parameters, joined within --join-timeout, and the
 * steps a session takes with one client taken with all of them -- a
 * barrier is every client's, a step starts for all K at once.  While a
 * group runs, a thread answers anyone else who connects: "server full".
 * Each client speaks the ordinary session (session.h): it cannot tell it
 * is one of many, except that its accept tells it to wait for the rest. */
#ifndef CQP_GROUP_H
#define CQP_GROUP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "oob/session.h"

struct cqp_group {
	struct cqp_session *s; /* the listening one: params, tool, buffer */
	struct cqp_oob *m;     /* the clients, in the order they joined */
	unsigned n;
	pthread_t door;
	bool door_open;
	atomic_int door_stop;
};

/* Gathers s->p->clients clients on s's listening socket.  The first
 * sets the parameters (as a lone client does, into s->p, waiting as long
 * as it takes); the rest must come within --join-timeout and ask for the
 * same, or are refused naming the option; one that fails its hello or
 * is refused does not disturb the others.  Then every client hears
 * "joined" and the door opens: anyone else is refused, "server full: K
 * clients".  A group that does not fill fails (CQP_E_TIMEOUT), naming how
 * many came, and tells those that did.  say: log refusals on stderr
 * under this name (NULL: quiet). */
int cqp_group_join(struct cqp_group *g, struct cqp_session *s,
		   cqp_mem_need_fn mem_need, const char *say);
/* Closes the door and every client's channel. */
void cqp_group_end(struct cqp_group *g);

/* Every client's BARRIER(name), then ours to every client. */
int cqp_group_barrier(struct cqp_group *g, const char *name);
/* Every client's announcement of the next step, which must be the same
 * (size 0: all said BYE), then the start to all of them at once. */
int cqp_group_step(struct cqp_group *g, struct cqp_step_req *st);
/* The session's exchanges with client i, on its channel: a record of
 * `type` (*text in the session's buffer until the next receive), the
 * endpoints, the port facts. */
int cqp_group_exchange(struct cqp_group *g, unsigned i, uint16_t type,
		       const struct cqp_kv_writer *mine, const char **text,
		       uint32_t *len);
int cqp_group_exchange_endpoints(struct cqp_group *g, unsigned i,
				 const struct cqp_endpoint *local,
				 struct cqp_endpoint *remote, unsigned n);
int cqp_group_exchange_port(struct cqp_group *g, unsigned i,
			    const struct cqp_port_facts *mine,
			    struct cqp_port_facts *theirs);
/* Tells every client why we give up (best effort). */
void cqp_group_abort(struct cqp_group *g);
/* Every client runs on this machine. */
bool cqp_group_local(const struct cqp_group *g);

#endif
