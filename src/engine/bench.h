/* SPDX-License-Identifier: BSD-2-Clause */
/* The driver every benchmark binary runs: parse options, then as client
 * or server walk the session (negotiate, set up, one step per message
 * size, exchange results, report) and turn failures into exit codes.  A
 * binary's main supplies only what is unique to it, as cqp_bench_ops. */
#ifndef CQP_BENCH_H
#define CQP_BENCH_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "verbs/completion.h"
#include "base/options.h"
#include "base/progress.h"
#include "report/report.h"
#include "oob/group.h"
#include "oob/session.h"

/* Immediate data marking the phases of a step on the wire. */
#define CQP_IMM_END	0xffffffffu /* the step's last message */
#define CQP_IMM_MEASURE 0xfffffffeu /* the first measured message */

#define CQP_RUN_FIGURES 64

/* What the threads of a step share (--threads), zeroed by
 * cqp_workers_step.  `abort`: a thread failed, the rest stop.  With
 * --shared-channel a thread may reap another's messages, so the end and
 * the measure mark are the step's: `ended` counts QPs whose last message
 * was reaped (by any thread), `over` is set once all were (it wakes the
 * rest), `measuring` at the first measure mark. */
struct cqp_step_sync {
	atomic_int abort;
	atomic_uint ended;
	atomic_int over, measuring;
	/* A passive target: when the requester last said ALIVE (ns). */
	_Atomic uint64_t alive_ns;
};

struct cqp_run {
	struct cqp_params *p;
	struct cqp_session *s;
	/* A server's --clients group (NULL: one client, at s->oob). */
	struct cqp_group *group;
	/* CQs per thread when not one per QP (an RC group's server: its
	 * clients' -q, each shared by their QPs); 0: -q. */
	unsigned cqs;
	bool is_client;
	volatile sig_atomic_t *stop; /* SIGINT/SIGTERM seen */
	struct cqp_device_info dev;  /* filled by setup */
	uint64_t max_size;	     /* largest message the setup allows */
	struct cqp_comp *comp;	     /* set by setup: modes switch, idle */
	unsigned ncomp;		     /* engines at comp: one per thread */
	/* --threads: this thread's index (its engine is comp, its QPs the
	 * t-th group). */
	unsigned thread;
	struct cqp_step_sync *sync; /* the step's, one for all its threads */
	struct cqp_figure summary[CQP_RUN_FIGURES]; /* run-wide figures */
	unsigned nsummary;
	struct cqp_cost run_client, run_server; /* run_all tools' CPU */
	FILE *samples; /* client: --samples, opened before connecting */
	uint64_t rate; /* client: this step's open-loop rate; 0 closed */
	uint32_t mode; /* this step's completion mode (the server's) */
	uint32_t verb; /* this step's --verb */
	/* client on a terminal: the progress line; NULL: none */
	struct cqp_progress *progress;
	/* What this side holds on the device: the device's count as setup
	 * goes (cqp_path_open points dev_held at it; NULL: no device), and
	 * after setup with the CQs (held).  The client keeps the server's,
	 * from its results. */
	const struct cqp_held *dev_held;
	struct cqp_held held, server_held;
	bool has_held, has_server_held;
};

struct cqp_bench_ops {
	enum cqp_tool tool;    /* its row in base/tools.h: name, title... */
	size_t ctx_size;       /* the binary's own state */
	uint64_t max_all_size; /* --all stops here (or max_size) */
	cqp_mem_need_fn mem_need;
	int (*setup)(struct cqp_run *run, void *ctx);
	/* One measured step.  Fills the row's figures and this side's
	 * completion cost. */
	int (*run_size)(struct cqp_run *run, void *ctx, uint64_t size,
			struct cqp_row *row, struct cqp_cost *mine);
	void (*teardown)(struct cqp_run *run, void *ctx);
	/* Optional, instead of run_size: the whole run at once, for tools
	 * whose rows are not steps (cm_event_stress: a row per side and
	 * event type).  Fills at most cap rows and run->summary. */
	int (*run_all)(struct cqp_run *run, void *ctx, struct cqp_row *rows,
		       unsigned cap, unsigned *nrows);
	/* run_size runs once per --threads thread, in parallel, each on its
	 * own copy of run (thread, comp); rows and costs are merged. */
	bool threaded;
	/* Optional, with threaded: the step's row from its threads' (a
	 * latency tool merges their samples; ctx holds them); the default
	 * is cqp_workers_merge_row. */
	int (*merge)(struct cqp_run *run, void *ctx, const struct cqp_row *rows,
		     unsigned n, struct cqp_row *out);
	/* Optional, for --clients: the server's row as client i should
	 * see it (what it counted of that client's traffic). */
	void (*client_row)(const struct cqp_run *run, void *ctx, unsigned i,
			   struct cqp_row *row);
	/* Optional: add what the rows imply (e.g. a projection). */
	void (*annotate)(const struct cqp_run *run, struct cqp_report *r);
};

/* The run's engines (cqp_comp_set_create): -q CQs of the parameters'
 * depth per --threads thread, stopped by the run's signal flag and its
 * step's abort, ended by its step's over. */
int cqp_bench_comps(struct cqp_comp_set *set, struct ibv_context *ctx,
		    struct cqp_run *run, bool receiver);

/* A step whose side has nothing to reap (the target of READ and
 * atomics): waits, asleep, until the peer's results arrive (its step is
 * over), and reports the cost of that wait in comp's terms (no polls, no
 * wakeups: what the verb costs this CPU).  SIGINT, the peer's failure or
 * hangup end it. */
int cqp_bench_wait_peer(struct cqp_run *run, struct cqp_comp *comp,
			struct cqp_cost *mine);

/* The channel to the peer: the client's server, a server's (first)
 * client. */
static inline struct cqp_oob *cqp_run_oob(const struct cqp_run *run)
{
	return run->group ? &run->group->m[0] : &run->s->oob;
}
/* A peer that hung up or sent its ERROR: that failure, naming it (the
 * rest of what peers sent stays unread).  A group's server looks while
 * the others' traffic still flows: a lost client ends the step now. */
int cqp_run_check_peers(struct cqp_run *run);
/* Every peer has sent something we have not read (its results, once its
 * step is over) or hung up. */
bool cqp_run_peers_spoke(const struct cqp_run *run);
/* The peers still silent (all of them with one), for a message. */
const char *cqp_run_silent(const struct cqp_run *run, char *buf, size_t cap);
/* A barrier with the peer, or with every client of a group. */
int cqp_run_barrier(struct cqp_run *run, const char *name);

/* A step's results record: this side's row figures and cost, a server's
 * queues, the port counters (hw may be NULL). */
#define CQP_RESULTS_REC (16384 + CQP_HW_KV_MAX)
struct cqp_kv_writer;
struct cqp_hw_counters;
void cqp_run_results_encode(const struct cqp_run *run,
			    const struct cqp_row *row,
			    const struct cqp_cost *mine,
			    const struct cqp_hw_counters *hw,
			    struct cqp_kv_writer *w);
/* A group's server, after a step (--clients): each client's results
 * heard and answered with what this server counted of its traffic
 * (ops->client_row); the row becomes the group's (rates summed, each
 * client's own figures, fairness), its cost `mine`, its port counters
 * hw_mine (taken). */
int cqp_run_group_results(const struct cqp_bench_ops *ops, struct cqp_run *run,
			  void *ctx, struct cqp_row *row,
			  const struct cqp_cost *mine,
			  struct cqp_hw_counters *hw_mine);

/* The whole of main(): returns the process exit status. */
int cqp_bench_main(const struct cqp_bench_ops *ops, int argc, char **argv);

#endif
