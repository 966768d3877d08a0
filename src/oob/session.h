/* SPDX-License-Identifier: BSD-2-Clause */
/* The client/server choreography over the out-of-band channel, shared by
 * every binary: connect and hello, parameter negotiation, per-size steps,
 * symmetric exchanges (endpoints, results), and orderly or failed ends. */
#ifndef CQP_SESSION_H
#define CQP_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "base/kv.h"
#include "oob/oob.h"
#include "base/options.h"

struct cqp_session {
	enum cqp_tool tool;
	struct cqp_params *p;
	struct cqp_oob oob;
	int lfd;
	bool is_client;
	char *buf; /* receive buffer, CQP_OOB_MAX_PAYLOAD + 1 bytes */
};

/* Memory a parameter set makes one side allocate, for --max-mem: the
 * buffers it registers, and an estimate of the queues the driver
 * allocates for it (cqp_queue_mem). */
struct cqp_mem_need {
	uint64_t buffers;
	uint64_t queues;
};
typedef struct cqp_mem_need (*cqp_mem_need_fn)(const struct cqp_params *p);

/* Client: connect (retrying until --timeout, or until a signal or *stop,
 * which a signal handler sets), hello, send the negotiated parameters and
 * wait for the server's accept. */
int cqp_session_connect(struct cqp_session *s, struct cqp_params *p,
			enum cqp_tool tool, const volatile sig_atomic_t *stop);
/* Server: listen on --port. */
int cqp_session_listen(struct cqp_session *s, struct cqp_params *p,
		       enum cqp_tool tool);
/* Server: wait for the next client, hello, adopt and validate its
 * parameters (same bounds as the command line, plus --max-mem), and
 * answer accept or reject with the reason.  A rejected client is
 * CQP_E_REJECTED; the listening socket stays usable. */
int cqp_session_accept(struct cqp_session *s, cqp_mem_need_fn mem_need);

/* The accept's key that tells a client its server gathers a group, with
 * how long (ms) it may yet wait for the rest before saying "joined". */
#define CQP_GROUP_WAIT_KEY "group_wait_ms"
#define CQP_GROUP_JOINED   "joined" /* the barrier that starts a group */

/* Server: wait up to wait_ms (< 0: forever) for a client on the listening
 * socket, hello, and take its parameters into `into` (validated, and
 * against --max-mem), leaving the answer to the caller; o is then open.
 * A client refused here has had its REJECT (CQP_E_REJECTED). */
int cqp_session_admit(struct cqp_session *s, struct cqp_oob *o,
		      struct cqp_params *into, int wait_ms,
		      cqp_mem_need_fn mem_need);
/* Send o a REJECT with the current error as its reason, and close it:
 * CQP_E_REJECTED, naming the client. */
int cqp_session_refuse(struct cqp_oob *o);
struct cqp_step_req;
/* Server: the next step as client o announces it (size 0: BYE),
 * checked; the answer is the caller's. */
int cqp_session_step_heard(struct cqp_session *s, struct cqp_oob *o,
			   struct cqp_step_req *st);

/* Send ours, receive theirs (the client sends first so large records
 * cannot deadlock).  *text points into s->buf until the next call. */
int cqp_session_exchange(struct cqp_session *s, uint16_t type,
			 const struct cqp_kv_writer *mine, const char **text,
			 uint32_t *len);

/* Our QP endpoints for theirs (n each side), by cqp_session_exchange. */
struct cqp_endpoint;
int cqp_session_exchange_endpoints(struct cqp_session *s,
				   const struct cqp_endpoint *local,
				   struct cqp_endpoint *remote, unsigned n);

/* Our port facts for theirs, by cqp_session_exchange. */
struct cqp_port_facts;
int cqp_session_exchange_port(struct cqp_session *s,
			      const struct cqp_port_facts *mine,
			      struct cqp_port_facts *theirs);

/* What one step measures, as the client announces it. */
struct cqp_step_req {
	uint64_t size; /* 0: the run is over */
	uint32_t mode; /* enum cqp_cq_mode */
	uint32_t spin_us;
	uint32_t verb; /* enum cqp_verb */
};
/* Per-step start: the client announces the next step (size 0: the run
 * is over, sent as BYE); the server learns it.  Both then pass a
 * barrier. */
int cqp_session_step(struct cqp_session *s, struct cqp_step_req *st);

/* Tell the peer why we are giving up (best effort). */
void cqp_session_abort(struct cqp_session *s);
/* Close the client connection (the server keeps listening). */
void cqp_session_end(struct cqp_session *s);
void cqp_session_close(struct cqp_session *s);

/* Hello: both sides send {proto, tool, version} and check the other's.
 * A different tool or protocol version fails with CQP_E_VERSION naming
 * what the peer runs. */
int cqp_session_hello(struct cqp_oob *o, const char *tool, const char *version);

/* Both sides send BARRIER(name) and wait for the peer's. */
int cqp_session_barrier(struct cqp_oob *o, const char *name);
/* Its halves: send ours; wait for the peer's and check its name. */
int cqp_session_barrier_say(struct cqp_oob *o, const char *name);
int cqp_session_barrier_heard(struct cqp_oob *o, const char *name);

#endif
