/* SPDX-License-Identifier: BSD-2-Clause */
/* A READ's or an atomic's target takes no part in the step: nothing
 * tells it the requester still runs.  The requester says so on the
 * out-of-band socket (ALIVE frames, from a thread of their own, off the
 * measured path), and the target's wait ends at --timeout without one:
 * a frozen or hostile client cannot hold a server for ever. */
#ifndef CQP_ALIVE_H
#define CQP_ALIVE_H

#include "oob/oob.h"

#include <pthread.h>
#include <stdbool.h>

struct cqp_alive {
	struct cqp_oob *o;
	unsigned period_ms;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, running;
};

/* The ALIVE period for a --timeout of timeout_ms: four a timeout, one a
 * second at most. */
unsigned cqp_alive_period_ms(int timeout_ms);

/* Starts sending ALIVE on o every period_ms until cqp_alive_stop.  A
 * thread that cannot be started is a failure (the target would time
 * out on a long step). */
int cqp_alive_start(struct cqp_alive *a, struct cqp_oob *o, unsigned period_ms);
/* Stops and joins; nothing is sent after it returns.  Safe on an
 * alive that never started. */
void cqp_alive_stop(struct cqp_alive *a);

#endif
