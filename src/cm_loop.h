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
 * did and how long copying and acking took. */
#ifndef CQP_CM_LOOP_H
#define CQP_CM_LOOP_H

#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "watchdog.h"

#define CQP_CM_PDATA_MAX 196 /* the largest private data RDMA CM carries */

/* What an event said, kept past its ack. */
struct cqp_cm_ev {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
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
};

/* What e says, into out (taken at t_ns); private data that does not fit
 * is not copied, its length kept in pdata_oversize. */
void cqp_cm_ev_copy(struct cqp_cm_ev *out, const struct rdma_cm_event *e,
		    uint64_t t_ns);

int cqp_cm_loop_create(struct cqp_cm_loop *l, const struct cqp_cm_loop_cfg *cfg,
		       cqp_cm_handler handle, void *arg);
void cqp_cm_loop_destroy(struct cqp_cm_loop *l);

/* Takes and handles events until done(arg) holds (checked after every
 * event handled) or none came for quiet_ms; *quiet tells which.  With
 * workers, returns only once they have handled everything taken.
 * Handler failures (from any thread) and SIGINT end it with their
 * error. */
int cqp_cm_loop_run(struct cqp_cm_loop *l, bool (*done)(void *arg),
		    uint32_t quiet_ms, bool *quiet);

#endif
