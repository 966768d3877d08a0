/* SPDX-License-Identifier: BSD-2-Clause */
/* cm_event_stress's own state, shared by its client, server and report
 * files: the connections, both sides' tallies, and the bookkeeping every
 * event handler does under the one lock. */
#ifndef CQP_CM_CTX_H
#define CQP_CM_CTX_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/bench.h"
#include "engine/cm_loop.h"
#include "engine/cm_storm.h"

#define QUIET_MS 100 /* silence before either side looks at the oob channel */

enum phase { PH_CONNECT, PH_DISCONNECT };

/* Errors counted, not fatal. */
enum err { E_ADDR, E_ROUTE, E_UNREACH, E_CONNECT, E_REJECT, E_OTHER, E_N };
extern const char *const cm_err_keys[E_N];

struct conn {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	uint32_t seq;
	uint32_t tries;	 /* resolution retries used */
	uint64_t t_call; /* the call whose event we wait for */
	bool established;
	struct conn *prev, *next; /* server: the live list */
};

/* The client's part: its connections and what became of them. */
struct cm_client {
	struct sockaddr_storage dst;
	struct conn *conns;
	unsigned n, next, finished;
	enum phase phase;
	uint32_t seq;
	uint64_t attempts, established, rejected, failed, disconnected;
	uint64_t retries, msgs_sent;
};

/* The server's part: the listener, the live connections, its tallies. */
struct cm_server {
	struct rdma_cm_id *listen;
	uint64_t requests, accepted, rejected, established, disconnected;
	uint64_t live;
	struct conn *live_list;
	uint64_t oob_checked;
	bool spoke; /* the client sent its results, or died */
};

/* Both sides' state: what both keep, then the side's own part. */
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
	struct cm_client cl;
	struct cm_server sv;
};

/* Bookkeeping under c->mu. */
void cm_count(struct ctx *c, const struct cqp_cm_ev *ev, uint64_t t_call);
void cm_count_lat(struct ctx *c, enum rdma_cm_event_type t, uint64_t lat_ns);
void cm_bump(struct ctx *c, uint64_t *counter);
/* -d: the device RDMA CM bound id to (it picks it from the address) must
 * be the one named; CQP_E_USAGE saying so, and naming the peer, when it
 * is not. */
int cm_device_check(const struct ctx *c, struct rdma_cm_id *id);
/* Destroys the connection's QP and CQ, lets its id go (the loop destroys
 * it once no event of it waits), and counts the id. */
void cm_destroy_conn(struct ctx *c, struct conn *k);

/* Client (cm_client.c): the event handler, and one phase of a round. */
int cm_client_event(void *arg, const struct cqp_cm_ev *ev);
int cm_run_phase(struct ctx *c, enum phase ph, double *seconds);

/* Server (cm_server.c): the event handler, the serving loop until the
 * client has spoken, and dropping a live connection. */
int cm_server_event(void *arg, const struct cqp_cm_ev *ev);
int cm_serve(struct ctx *c, double *seconds);
void cm_server_drop(struct ctx *c, struct conn *k);

#endif
