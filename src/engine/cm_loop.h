/* SPDX-License-Identifier: BSD-2-Clause */
/* Taking RDMA CM events, the way --cm-mode says:
 *
 *  block     one blocking rdma_get_cm_event per event;
 *  nonblock  O_NONBLOCK channel served with epoll, drained to EAGAIN on
 *            every wakeup;
 *  batch     up to --cm-batch events taken, all copied and acked, then
 *            the copies processed.
 *
 * In every mode an event is copied (private data included: the library
 * frees it at the ack) and acked before anything acts on it, so no id is
 * ever destroyed with an event outstanding.  With --threads T the copies
 * go to T workers, each id always to the same one so its events stay in
 * order, while this thread alone takes and acks.  The loop counts what it
 * did and how long copying and acking took.
 *
 * A copy outlives its ack: in a batch or a worker's queue, the handler of
 * an id's DISCONNECTED may let the id go while its TIMEWAIT_EXIT waits
 * behind.  So the loop owns every id's context: a record that counts the
 * id's copies not yet handled.  cqp_cm_loop_destroy_id marks the id gone;
 * its copies still waiting are dropped, never handed to a handler, and
 * the last one's release destroys the id.  The count is taken before the
 * ack, and rdma_destroy_id waits for the acks of events already taken, so
 * a destroy and a take of the same id's event cannot cross. */
#ifndef CQP_CM_LOOP_H
#define CQP_CM_LOOP_H

#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "verbs/watchdog.h"

#define CQP_CM_PDATA_MAX 196 /* the largest private data RDMA CM carries */

struct cqp_cm_ref; /* the loop's record of one id */

/* What an event said, kept past its ack. */
struct cqp_cm_ev {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id; /* its context is the loop's: see ctx */
	struct rdma_cm_id *listen_id;
	void *ctx; /* the id's context (create_id, set_ctx), when handled */
	struct cqp_cm_ref *ref;
	uint8_t pdata[CQP_CM_PDATA_MAX];
	uint8_t pdata_len; /* what pdata holds */
	/* What arrived, when it was more than pdata holds (then nothing of
	 * it was kept): a peer that is not cqperf, over iWARP. */
	uint8_t pdata_oversize;
	uint64_t t_ns; /* when it was taken */
};

/* Acts on one event; a negative cqp error ends the run. */
typedef int (*cqp_cm_handler)(void *arg, const struct cqp_cm_ev *ev);

struct cqp_cm_loop_cfg {
	uint32_t mode; /* enum cqp_cm_mode */
	uint32_t batch;
	uint32_t threads;
	volatile sig_atomic_t *stop;
};

struct cqp_cm_worker;

struct cqp_cm_loop {
	struct cqp_cm_loop_cfg cfg;
	struct rdma_event_channel *ch;
	cqp_cm_handler handle;
	void *arg;
	int epfd;
	struct cqp_watchdog wd;
	pthread_mutex_t ref_mu; /* guards every id's record */
	bool ref_made;
	uint32_t delay_us;	 /* test hook: see cqp_cm_loop_create */
	struct cqp_cm_ev *batch; /* batch mode's copies */
	struct cqp_cm_worker *workers;
	unsigned nworkers;
	pthread_mutex_t err_mu; /* guards the first worker failure */
	bool err_made;
	int err_code;
	char err_msg[512];
	/* What this thread did. */
	uint64_t events, acked;
	uint64_t copy_ns, ack_ns;
	uint64_t dropped; /* copies of destroyed ids' events (ref_mu) */
};

/* What e says, into out (taken at t_ns); private data that does not fit
 * is not copied, its length kept in pdata_oversize. */
void cqp_cm_ev_copy(struct cqp_cm_ev *out, const struct rdma_cm_event *e,
		    uint64_t t_ns);

int cqp_cm_loop_create(struct cqp_cm_loop *l, const struct cqp_cm_loop_cfg *cfg,
		       cqp_cm_handler handle, void *arg);
/* Ends the workers; copies they had not handled yet are released
 * unhandled.  Before destroying ids outside the loop (a teardown). */
void cqp_cm_loop_stop(struct cqp_cm_loop *l);
/* Stops, then frees the loop; every id must be destroyed by now. */
void cqp_cm_loop_destroy(struct cqp_cm_loop *l);

/* Every id on the loop's channel comes from here or from a
 * CONNECT_REQUEST, and goes through cqp_cm_loop_destroy_id: its context
 * is the loop's record.  ctx is what handlers get as ev->ctx. */
int cqp_cm_loop_create_id(struct cqp_cm_loop *l, struct rdma_cm_id **id,
			  void *ctx, enum rdma_port_space ps);
void cqp_cm_loop_set_ctx(struct cqp_cm_loop *l, struct rdma_cm_id *id,
			 void *ctx);
/* The id is gone for its owner: no event of it reaches a handler any
 * more, and it is destroyed (its QP already) once no copy of its events
 * is left. */
void cqp_cm_loop_destroy_id(struct cqp_cm_loop *l, struct rdma_cm_id *id);
/* A call on an id from a thread its events do not go to (the client
 * starts the next connection from any worker): the event the call causes
 * may be handled, and the id let go, before the call returns.  Held, the
 * id outlives the call; the unhold may destroy it. */
struct cqp_cm_ref *cqp_cm_loop_hold(struct cqp_cm_loop *l,
				    struct rdma_cm_id *id);
void cqp_cm_loop_unhold(struct cqp_cm_loop *l, struct cqp_cm_ref *r);

/* Takes and handles events until done(arg) holds (checked after every
 * event handled) or none came for quiet_ms; *quiet tells which.  With
 * workers, returns only once they have handled everything taken.
 * Handler failures (from any thread) and SIGINT end it with their
 * error. */
int cqp_cm_loop_run(struct cqp_cm_loop *l, bool (*done)(void *arg),
		    uint32_t quiet_ms, bool *quiet);

#endif
