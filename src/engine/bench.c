/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/bench.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hwcount.h"
#include "base/kv.h"
#include "base/progress.h"
#include "report/results.h"
#include "engine/alive.h"
#include "engine/workers.h"
#include "verbs/verbs.h"

#define MAX_SIZES 64
/* Rows of one run: sizes (or rates) x modes, with each spin budget of
 * --spin-us a hybrid row of its own. */
#define MAX_STEPS 256

/* One measured phase: a message size in one completion mode (and spin
 * budget), at an open-loop rate (client only; 0: closed loop). */
struct step {
	struct cqp_step_req r; /* what the server is told */
	uint64_t rate;
};

/* A signal handler can only reach static storage.  Every wait of a run
 * ends on it: SIGINT/SIGTERM set STOP_SIGNAL, a server's --max-run-sec
 * timer STOP_RUN_LIMIT (cleared once that run has ended). */
enum { STOP_SIGNAL = 1, STOP_RUN_LIMIT = 2 };
static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = STOP_SIGNAL;
}

static void on_run_limit(int sig)
{
	(void)sig;
	if (!stop_flag)
		stop_flag = STOP_RUN_LIMIT;
}

static void on_wake(int sig)
{
	(void)sig; /* SIGUSR1 breaks a blocking wait: the point is EINTR */
}

static int install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: waits return EINTR */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return cqp_fail(CQP_E_SYS, "sigaction: %s", strerror(errno));
	/* The watchdog's and --threads' wake-up: never the default action
	 * (exit), even before the first watchdog installs it. */
	sa.sa_handler = on_wake;
	if (sigaction(SIGUSR1, &sa, NULL))
		return cqp_fail(CQP_E_SYS, "sigaction: %s", strerror(errno));
	/* --max-run-sec; a SIGINT meanwhile still wins. */
	sa.sa_handler = on_run_limit;
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	if (sigaction(SIGALRM, &sa, NULL))
		return cqp_fail(CQP_E_SYS, "sigaction: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* Sizes a run covers: --all gives powers of two from 2 up to
 * min(max_all_size, max_size), else just --size. */
static unsigned bench_sizes(const struct cqp_params *p, uint64_t max_all_size,
			    uint64_t max_size, uint64_t *sizes, unsigned cap)
{
	uint64_t top = max_all_size < max_size ? max_all_size : max_size;
	unsigned n = 0;

	if (!p->all) {
		sizes[0] = p->size;
		return 1;
	}
	for (uint64_t s = 2; s <= top && n < cap; s *= 2)
		sizes[n++] = s;
	return n;
}

/* The modes a step set of `verb` runs in: --cq-mode (the verb's own
 * where it allows only one, as write's mem), or with --compare-modes
 * each it allows.  READ and atomics in an open loop: one step, since
 * the server has nothing to reap and the load reaps in its own mode. */
static uint32_t verb_step_modes(const struct cqp_params *p, uint32_t verb,
				uint64_t rate, bool one)
{
	uint32_t allowed = cqp_verb_modes(verb);

	if (cqp_verb_passive(verb) && rate)
		return 1u << p->client_cq_mode;
	if (one && !p->compare_modes && allowed & 1u << p->cq_mode)
		return 1u << p->cq_mode;
	if (one && allowed & 1u << CQP_CQ_POLL)
		return 1u << CQP_CQ_POLL;
	if (one)
		return allowed & -allowed; /* its only one */
	/* A list of one verb's modes: every verb runs in its own. */
	return allowed & cqp_params_compare(p) ? allowed & cqp_params_compare(p)
					       : allowed;
}

/* The steps of one size at one rate: per verb, each mode of
 * verb_step_modes, a hybrid step per spin budget.  Returns how many were
 * added, or UINT_MAX when they would not fit. */
static unsigned mode_steps(const struct cqp_params *p, uint64_t size,
			   uint64_t rate, bool one, struct step *steps,
			   unsigned room)
{
	uint32_t verbs = cqp_params_verbs(p);
	unsigned n = 0;

	for (uint32_t v = 0; v < CQP_VERB__N; v++) {
		uint32_t modes = verb_step_modes(p, v, rate, one);

		if (!(verbs & 1u << v))
			continue;
		/* A WRITE's sequence number takes its last 8 bytes. */
		if (v == CQP_VERB_WRITE && size < 8)
			continue;
		for (uint32_t m = 0; m < CQP_CQ__N; m++) {
			unsigned spins = m == CQP_CQ_HYBRID ? p->nspin : 1;

			if (!(modes & 1u << m))
				continue;
			for (unsigned k = 0; k < spins; k++) {
				if (n == room)
					return UINT_MAX;
				steps[n++] = (struct step){
				    {size, m, p->spin_list[k], v}, rate};
			}
		}
	}
	return n;
}

/* Every size, in the chosen mode or, with --compare-modes, in each; with
 * --rates, at each rate (a closed-loop step first when max is one). */
static int plan_steps(const struct cqp_bench_ops *ops,
		      const struct cqp_run *run, struct step *steps,
		      unsigned *nsteps)
{
	const struct cqp_params *p = run->p;
	uint64_t sizes[MAX_SIZES], rates[CQP_MAX_RATES + 1];
	unsigned nsizes =
	    bench_sizes(p, ops->max_all_size, run->max_size, sizes, MAX_SIZES);
	unsigned n = 0, nrates = 0;

	if (p->nrates && p->rates[p->nrates - 1] == CQP_RATE_MAX)
		rates[nrates++] = 0;
	for (unsigned k = 0; k < p->nrates; k++)
		rates[nrates++] = p->rates[k];
	if (!p->nrates)
		rates[nrates++] = p->rate;
	for (unsigned i = 0; i < nsizes; i++)
		for (unsigned k = 0; k < nrates; k++) {
			/* The maximum is the fastest mode's closed loop. */
			bool one =
			    !p->compare_modes || (p->nrates && rates[k] == 0);
			unsigned got = mode_steps(p, sizes[i], rates[k], one,
						  steps + n, MAX_STEPS - n);

			if (got == UINT_MAX)
				return cqp_fail(
				    CQP_E_USAGE,
				    "more than %d rows (sizes x rates x verbs "
				    "x modes x --spin-us budgets): sweep fewer "
				    "at once",
				    MAX_STEPS);
			n += got;
		}
	*nsteps = n;
	return 0;
}

/* --rates max: the closed-loop rate of the same size, measured first. */
static uint64_t resolve_rate(const struct step *st, const struct cqp_row *rows,
			     unsigned nrows)
{
	if (st->rate != CQP_RATE_MAX)
		return st->rate;
	for (unsigned i = nrows; i-- > 0;) {
		const struct cqp_row *r = &rows[i];

		if (!r->open_loop && r->bytes == st->r.size &&
		    r->client.valid && r->client.seconds > 0)
			return (uint64_t)((double)r->iterations /
					  r->client.seconds);
	}
	return 0;
}

/* A step's mode, with its spin budget when there are several. */
static void step_mode(const struct cqp_params *p, const struct step *st,
		      char *buf, size_t cap)
{
	if (st->r.mode == CQP_CQ_HYBRID && p->nspin > 1)
		snprintf(buf, cap, "hybrid:%" PRIu32, st->r.spin_us);
	else
		cqp_mode_word(p, st->r.mode, buf, cap);
}

/* A row's label: its mode where several are compared (with its spin
 * budget where there are several), and its verb with --verbs. */
static void step_label(const struct cqp_params *p, const struct step *st,
		       char *buf, size_t cap)
{
	char mode[24] = "";

	if ((st->r.mode == CQP_CQ_HYBRID && p->nspin > 1) || p->compare_modes ||
	    p->verbs)
		step_mode(p, st, mode, sizeof(mode));
	if (p->verbs)
		snprintf(buf, cap, "%s+%s", cqp_verb_name(st->r.verb), mode);
	else
		snprintf(buf, cap, "%s", mode);
}

/* What a step measures, for the progress line: its size, mode (the
 * server's, with its spin budget when there are several) and, in an
 * open loop, the offered rate. */
static void step_what(const struct cqp_params *p, const struct step *st,
		      char *buf, size_t cap)
{
	char mode[32], rate[32] = "";
	double r = (double)st->rate;

	step_mode(p, st, mode, sizeof(mode));
	if (st->rate >= 1000000)
		snprintf(rate, sizeof(rate), ", %.3gM msg/s", r / 1e6);
	else if (st->rate >= 1000)
		snprintf(rate, sizeof(rate), ", %.3gk msg/s", r / 1e3);
	else if (st->rate)
		snprintf(rate, sizeof(rate), ", %" PRIu64 " msg/s", st->rate);
	else if (p->nrates)
		snprintf(rate, sizeof(rate), ", closed loop");
	snprintf(buf, cap, "%" PRIu64 " B, %s%s%s%s", st->r.size,
		 p->verbs ? cqp_verb_name(st->r.verb) : "", p->verbs ? " " : "",
		 mode, rate);
}

/* With the connection up and no traffic, what does waiting cost in this
 * mode?  Both sides idle at once, after a barrier. */
static int measure_idle(struct cqp_run *run, struct cqp_cost *mine)
{
	int rc = cqp_run_barrier(run, "idle");

	if (rc < 0)
		return rc;
	return cqp_comp_idle(run->comp, run->p->idle_sec, mine);
}

/* This side's port counters since `before`, after the kernel's cache of
 * them has expired (else the step's last packets may be missing). */
static struct cqp_hw_counters *hw_since(const struct cqp_run *run,
					const struct cqp_hw_counters *before)
{
	struct cqp_hw_counters *after, *d;
	unsigned ms;

	if (!before || !before->n)
		return NULL;
	ms = cqp_hw_lifespan_ms(run->dev.name, run->dev.port);
	if (ms) {
		struct timespec ts = {ms / 1000,
				      (long)(ms % 1000 + 1) * 1000000};

		nanosleep(&ts, NULL);
	}
	after = malloc(sizeof(*after));
	d = malloc(sizeof(*d));
	if (!after || !d ||
	    cqp_hw_read_port(run->dev.name, run->dev.port, after) < 0) {
		free(after);
		free(d);
		return NULL;
	}
	cqp_hw_delta(before, after, d);
	free(after);
	return d;
}

/* Once per process: counters of the port the report cannot hold. */
static void hw_note_left_out(const struct cqp_bench_ops *ops,
			     const struct cqp_run *run,
			     const struct cqp_hw_counters *hw)
{
	static bool said;

	if (!hw->left_out || said)
		return;
	said = true;
	cqp_progress_clear(run->progress);
	fprintf(stderr,
		"%s: warning: %s port %u: %u hw_counters left out of the "
		"report (it keeps %d, drops, retransmissions, errors and "
		"congestion first)\n",
		cqp_tool_name(ops->tool), run->dev.name, run->dev.port,
		hw->left_out, CQP_HW_MAX);
}

static struct cqp_hw_counters *hw_decode(const char *text, size_t len)
{
	struct cqp_hw_counters *d = malloc(sizeof(*d));

	if (d && (cqp_hw_decode(d, text, len) < 0 || d->n == 0)) {
		free(d);
		d = NULL;
	}
	return d;
}

static int run_step(const struct cqp_bench_ops *ops, struct cqp_run *run,
		    void *ctx, const struct step *st,
		    const struct cqp_hw_counters *hw_before,
		    struct cqp_row *row)
{
	char rec[CQP_RESULTS_REC];
	struct cqp_kv_writer w;
	struct cqp_cost mine, theirs;
	struct cqp_hw_counters *hw_mine = NULL, *hw_theirs;
	struct cqp_alive alive = {0};
	const char *text;
	uint32_t len;
	int rc;

	memset(row, 0, sizeof(*row));
	memset(&mine, 0, sizeof(mine));
	row->bytes = st->r.size;
	if (cqp_params_verbs(run->p) != 1u << CQP_VERB_SEND)
		snprintf(row->verb, sizeof(row->verb), "%s",
			 cqp_verb_name(st->r.verb));
	run->rate = st->rate;
	run->mode = st->r.mode;
	run->verb = st->r.verb;
	step_label(run->p, st, row->label, sizeof(row->label));
	/* An open loop's client is the load: it reaps its own way. */
	for (unsigned t = 0; t < run->ncomp; t++) {
		bool load = run->is_client && st->rate;

		cqp_comp_set_mode(&run->comp[t],
				  load ? run->p->client_cq_mode : st->r.mode);
		cqp_comp_set_spin(&run->comp[t],
				  load ? run->p->spin_us : st->r.spin_us);
	}
	/* A READ's or atomic's target learns nothing from the step itself:
	 * its requester says it runs (cqp_bench_wait_peer). */
	if (run->is_client && cqp_verb_passive(st->r.verb)) {
		unsigned ms = cqp_alive_period_ms(run->s->oob.timeout_ms);

		if ((rc = cqp_alive_start(&alive, &run->s->oob, ms)) < 0)
			return rc;
	}
	if (ops->threaded && run->ncomp > 1)
		rc = cqp_workers_step(ops, run, ctx, st->r.size, row, &mine);
	else
		rc = ops->run_size(run, ctx, st->r.size, row, &mine);
	cqp_alive_stop(&alive);
	if (rc == 0)
		hw_mine = hw_since(run, hw_before);
	if (rc == 0 && run->p->idle_sec && run->comp)
		rc = measure_idle(run, &mine);
	if (rc < 0) {
		free(hw_mine);
		free(mine.threads);
		return rc;
	}
	if (run->group) {
		rc = cqp_run_group_results(ops, run, ctx, row, &mine, hw_mine);
		if (rc < 0) {
			free(hw_mine);
			free(mine.threads);
		}
		return rc;
	}
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_run_results_encode(run, row, &mine, hw_mine, &w);
	rc = cqp_session_exchange(run->s, CQP_MSG_RESULTS, &w, &text, &len);
	if (rc == 0)
		rc = cqp_results_decode(row, &theirs, text, len);
	if (rc == 0 && run->is_client)
		rc = cqp_held_decode(&run->server_held, &run->has_server_held,
				     text, len);
	if (rc < 0) {
		free(hw_mine);
		free(mine.threads);
		return rc;
	}
	hw_theirs = hw_decode(text, len);
	row->client = run->is_client ? mine : theirs;
	row->server = run->is_client ? theirs : mine;
	row->hw_client = run->is_client ? hw_mine : hw_theirs;
	row->hw_server = run->is_client ? hw_theirs : hw_mine;
	return 0;
}

static void print_report(const struct cqp_bench_ops *ops,
			 const struct cqp_run *run, struct cqp_row *rows,
			 unsigned nrows, const char *error)
{
	static const char *const verb_titles[] = {
	    "SEND", "WRITE with immediate", "WRITE", "READ", "atomic"};
	uint32_t verbs = cqp_params_verbs(run->p);
	const char *base = cqp_tool_desc(ops->tool)->title;
	const char *send = strstr(base, "SEND ");
	char title[96];
	struct cqp_report r = {
	    .tool = ops->tool,
	    .title = title,
	    .params = run->p,
	    .is_client = run->is_client,
	    .dev = run->dev,
	    .rows = rows,
	    .nrows = nrows,
	    .error = error,
	    .summary = run->summary,
	    .nsummary = run->nsummary,
	    .run_client = run->run_client,
	    .run_server = run->run_server,
	    .one_machine = run->group ? cqp_group_local(run->group)
				      : run->s && run->s->oob.peer_local,
	    .server_mem = !run->is_client ? (run->has_held ? &run->held : NULL)
			  : run->has_server_held ? &run->server_held
						 : NULL,
	    .clients = run->group ? run->group->n : 1,
	};

	/* "RC SEND bandwidth" says the verb: the run's, or its verbs. */
	if (send && verbs != 1u << CQP_VERB_SEND)
		snprintf(
		    title, sizeof(title), "%.*s%s %s", (int)(send - base), base,
		    verbs & (verbs - 1) ? "verbs'"
					: verb_titles[__builtin_ctz(verbs)],
		    send + 5);
	else
		snprintf(title, sizeof(title), "%s", base);
	if (ops->annotate)
		ops->annotate(run, &r);
	cqp_report_print(&r, stdout);
	fflush(stdout);
}

int cqp_bench_comps(struct cqp_comp_set *set, struct ibv_context *ctx,
		    struct cqp_run *run, bool receiver)
{
	const struct cqp_params *p = run->p;
	struct cqp_comp_set_req req = {
	    .p = p,
	    .receiver = receiver,
	    .ncq = run->cqs ? run->cqs : p->qps,
	    .depth = cqp_params_cq_depth(p),
	    .stop = run->stop,
	    .abort = &run->sync->abort,
	    .over = &run->sync->over,
	};

	return cqp_comp_set_create(set, ctx, &req);
}

/* The completion engine's look at the peer when completions stop
 * coming (cqp_comp_watch_peer). */
static int peer_look(void *run)
{
	return cqp_run_check_peers(run);
}

/* What setup created: the device's count and the engines' CQs. */
static void count_held(struct cqp_run *run)
{
	if (!run->dev_held)
		return;
	run->held = *run->dev_held;
	run->has_held = true;
	for (unsigned t = 0; t < run->ncomp; t++)
		for (unsigned i = 0; i < run->comp[t].ncq; i++) {
			run->held.cqs++;
			run->held.cqes +=
			    (uint64_t)cqp_comp_cq(&run->comp[t], i)->cqe;
		}
}

/* One client's whole session, on either side.  Returns 0 or a failure;
 * the report (partial on failure) is printed either way once the run got
 * as far as a device. */
static int run_session(const struct cqp_bench_ops *ops, struct cqp_run *run)
{
	struct cqp_row rows[MAX_STEPS];
	struct step steps[MAX_STEPS];
	unsigned nrows = 0, nsteps = 0;
	void *ctx = calloc(1, ops->ctx_size);
	struct cqp_hw_counters *hw_before = calloc(1, sizeof(*hw_before));
	struct cqp_step_sync sync = {0};
	struct cqp_progress progress;
	bool set_up = false;
	int rc;

	run->sync = &sync;
	if (!ctx || !hw_before) {
		free(ctx);
		free(hw_before);
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	}
	rc = ops->setup(run, ctx);
	if (rc < 0) {
		/* Whatever setup got as far as creating goes, so that a
		 * persistent server does not leak a failed client's QPs. */
		ops->teardown(run, ctx);
		goto out;
	}
	set_up = true;
	count_held(run);
	for (unsigned t = 0; t < run->ncomp; t++) {
		const struct cqp_oob *o = cqp_run_oob(run);

		cqp_comp_watch_peer(&run->comp[t], peer_look, run,
				    run->group ? "its clients" : o->peer);
		/* A group's clients on this machine are no noise either,
		 * but the accounting knows one peer: they count as others. */
		cqp_comp_account_peer(&run->comp[t],
				      !run->group && o->peer_local ? o->peer_pid
								   : 0);
	}
	if (ops->run_all) {
		rc = ops->run_all(run, ctx, rows, MAX_STEPS, &nrows);
		goto out;
	}
	if (run->is_client) {
		if (!run->p->all && run->p->size > run->max_size) {
			rc = cqp_fail(CQP_E_USAGE,
				      "--size %" PRIu64 " exceeds the largest "
				      "message %s allows (%" PRIu64 ")",
				      run->p->size, run->dev.name,
				      run->max_size);
			goto out;
		}
		if ((rc = plan_steps(ops, run, steps, &nsteps)) < 0)
			goto out;
		cqp_progress_init(
		    &progress,
		    cqp_progress_wanted(run->p, nsteps, STDERR_FILENO) ? stderr
								       : NULL,
		    nsteps, run->p->duration_s);
		run->progress = &progress;
	}
	for (unsigned i = 0;; i++) {
		struct step st = {{0, 0, 0, 0}, 0};

		if (run->is_client && i < nsteps) {
			char what[64];

			st = steps[i];
			st.rate = resolve_rate(&st, rows, nrows);
			step_what(run->p, &st, what, sizeof(what));
			cqp_progress_step(run->progress, i, what, cqp_now_ns());
		}
		/* Before the barrier: the /proc reads stall no traffic. */
		if (run->comp && (!run->is_client || i < nsteps)) {
			for (unsigned t = 0; t < run->ncomp; t++)
				cqp_comp_prepare(&run->comp[t]);
			if (hw_before &&
			    cqp_hw_read_port(run->dev.name, run->dev.port,
					     hw_before) < 0)
				hw_before->n = 0;
			if (hw_before)
				hw_note_left_out(ops, run, hw_before);
		}
		rc = run->group ? cqp_group_step(run->group, &st.r)
				: cqp_session_step(run->s, &st.r);
		if (rc < 0 || st.r.size == 0)
			break;
		if (i >= MAX_STEPS || st.r.size > run->max_size) {
			rc = cqp_fail(CQP_E_PROTO,
				      "peer asked for size %" PRIu64
				      " (largest: %" PRIu64 ")",
				      st.r.size, run->max_size);
			break;
		}
		rc = run_step(ops, run, ctx, &st, hw_before, &rows[nrows]);
		if (rc < 0) {
			cqp_rows_free(&rows[nrows], 1);
			break;
		}
		nrows++;
	}
out:
	/* Off the screen before anything else is said, on every way out. */
	cqp_progress_end(run->progress);
	run->progress = NULL;
	/* A run the server's --max-run-sec stopped: the client is told. */
	if (rc < 0 && stop_flag == STOP_RUN_LIMIT &&
	    cqp_errcode() == CQP_E_INTERRUPTED)
		rc = cqp_fail(CQP_E_TIMEOUT,
			      "ended the client's run at this server's "
			      "--max-run-sec of %" PRIu32 " s",
			      run->p->max_run_s);
	if (rc < 0 && run->group)
		cqp_group_abort(run->group);
	else if (rc < 0)
		cqp_session_abort(run->s);
	if (set_up)
		ops->teardown(run, ctx);
	free(ctx);
	free(hw_before);
	if (set_up || run->is_client)
		print_report(ops, run, rows, nrows,
			     rc < 0 ? cqp_errmsg() : NULL);
	cqp_rows_free(rows, nrows);
	return rc;
}

static const char *tool_name(const struct cqp_bench_ops *ops)
{
	return cqp_tool_name(ops->tool);
}

/* --samples: a file that cannot be written is known before a server is
 * bothered. */
static int open_samples(const struct cqp_params *p, FILE **out)
{
	*out = NULL;
	if (!p->samples[0])
		return 0;
	*out = fopen(p->samples, "w");
	if (!*out)
		return cqp_fail(CQP_E_USAGE,
				"--samples %s: cannot write it: %s", p->samples,
				strerror(errno));
	return 0;
}

/* Before it listens or connects, each side opens what its run will use:
 * a device that is not there, a port that is down or no RDMA device at
 * all then fails at once, where it was typed, not after a connection or
 * on the other node.  *dev: what it found, for say_serving. */
static int device_check(const struct cqp_params *p, struct cqp_device_info *dev)
{
	struct cqp_dev d;
	int rc = cqp_dev_open(&d, p->ib_dev, p->ib_port ? p->ib_port : 1,
			      p->gid_index, NULL);

	if (rc < 0)
		return rc;
	*dev = d.info;
	cqp_dev_close(&d);
	return 0;
}

static int client(const struct cqp_bench_ops *ops, struct cqp_params *p)
{
	struct cqp_session s;
	struct cqp_run run = {
	    .p = p, .s = &s, .is_client = true, .stop = &stop_flag};
	struct cqp_device_info dev;
	/* A bad --samples path is bad usage, whatever the device. */
	int rc = open_samples(p, &run.samples);

	if (rc == 0)
		rc = device_check(p, &dev);
	if (rc < 0) {
		if (run.samples)
			fclose(run.samples);
		return rc;
	}
	rc = cqp_session_connect(&s, p, ops->tool, &stop_flag);

	if (rc < 0) {
		cqp_session_abort(&s);
		if (p->output == CQP_OUT_JSON)
			print_report(ops, &run, NULL, 0, cqp_errmsg());
	} else {
		rc = run_session(ops, &run);
	}
	cqp_session_close(&s);
	if (run.samples)
		fclose(run.samples);
	return rc;
}

/* --max-run-sec: a timer that signals this (the run's) thread, so its
 * blocking wait returns EINTR and every wait of the run sees stop_flag.
 * *armed: whether there is a timer to delete. */
static int run_limit_arm(const struct cqp_params *p, timer_t *t, bool *armed)
{
	struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID,
			      .sigev_signo = SIGALRM};
	struct itimerspec its = {.it_value = {.tv_sec = p->max_run_s}};

	*armed = false;
	if (!p->max_run_s)
		return 0;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &ev, t))
		return cqp_fail(CQP_E_SYS, "timer_create: %s", strerror(errno));
	if (timer_settime(*t, 0, &its, NULL)) {
		timer_delete(*t);
		return cqp_fail(CQP_E_SYS, "timer_settime: %s",
				strerror(errno));
	}
	*armed = true;
	return 0;
}

/* After the run (or the accept it was waiting in): the next client
 * gets a fresh limit. */
static void run_limit_end(timer_t *t, bool armed)
{
	if (armed)
		timer_delete(*t);
	if (stop_flag == STOP_RUN_LIMIT)
		stop_flag = 0;
}

/* Once listening: what it serves and where (stderr; not with --quiet). */
static void say_serving(const struct cqp_bench_ops *ops,
			const struct cqp_params *p,
			const struct cqp_device_info *d)
{
	const char *me = tool_name(ops);

	if (p->quiet)
		return;
	fprintf(stderr,
		"%s: serving on %s port %u (%s%sGID %d %s), TCP %u\n"
		"%s: waiting for a client (Ctrl-C to stop)\n",
		me, d->name, d->port, d->gid_type, d->gid_type[0] ? ", " : "",
		d->gid_index, d->gid, p->port, me);
}

/* One line per client served (stderr; not with --quiet): who, what it
 * asked for; a failed run has its own line (the error). */
static void say_served(const struct cqp_bench_ops *ops,
		       const struct cqp_params *p, const struct cqp_run *run,
		       const char *asked)
{
	if (p->quiet)
		return;
	/* The run's report first, whole: where both streams go to one
	 * file (a launcher's log), the line must not split a document. */
	fflush(stdout);
	if (run->group)
		cqp_report_say(stderr, "%s: %u clients, first %s (%s): done",
			       tool_name(ops), run->group->n,
			       run->group->m[0].peer, asked);
	else
		cqp_report_say(stderr, "%s: client %s (%s): done",
			       tool_name(ops), run->s->oob.peer, asked);
}

/* The next client, or with --clients the next group of them. */
static int admit(const struct cqp_bench_ops *ops, struct cqp_run *run,
		 struct cqp_group *g)
{
	int rc;

	if (run->p->clients <= 1)
		return cqp_session_accept(run->s, ops->mem_need);
	rc = cqp_group_join(g, run->s, ops->mem_need, tool_name(ops));
	run->group = g;
	return rc;
}

static int server(const struct cqp_bench_ops *ops, struct cqp_params *p)
{
	struct cqp_session s;
	struct cqp_device_info dev;
	int rc = device_check(p, &dev);

	if (rc < 0)
		return rc;
	rc = cqp_session_listen(&s, p, ops->tool);
	if (rc < 0) {
		cqp_session_close(&s);
		return rc;
	}
	say_serving(ops, p, &dev);
	while (!stop_flag) {
		struct cqp_run run = {
		    .p = p, .s = &s, .is_client = false, .stop = &stop_flag};
		struct cqp_group g;

		rc = admit(ops, &run, &g);
		if (rc < 0 && cqp_errcode() == CQP_E_INTERRUPTED && stop_flag) {
			/* Stopped while idle: the normal end of a server. */
			rc = 0;
			break;
		}
		if (rc == 0) {
			timer_t limit;
			bool armed;

			/* What the clients asked, before a group's
			 * setup grows its queues for all of them. */
			char asked[256];

			cqp_params_asked(p, ops->tool, asked, sizeof(asked));
			rc = run_limit_arm(p, &limit, &armed);
			if (rc == 0)
				rc = run_session(ops, &run);
			run_limit_end(&limit, armed);
			if (rc == 0)
				say_served(ops, p, &run, asked);
		}
		if (run.group)
			cqp_group_end(run.group);
		cqp_session_end(&s);
		if (!p->persistent ||
		    (rc < 0 && cqp_errcode() == CQP_E_INTERRUPTED))
			break;
		if (rc < 0)
			fprintf(stderr, "%s: %s (still serving)\n",
				tool_name(ops), cqp_errmsg());
		cqp_errclear();
		rc = 0;
	}
	cqp_session_close(&s);
	return rc;
}

int cqp_bench_main(const struct cqp_bench_ops *ops, int argc, char **argv)
{
	struct cqp_params p;
	int rc = cqp_params_parse(&p, ops->tool, argc, argv, stdout);
	long online;

	if (rc == CQP_PARSE_HELP || rc == CQP_PARSE_VERSION)
		return 0;
	if (rc < 0) {
		/* A mistake on the command line: one message folded for a
		 * terminal, and where the words are explained. */
		cqp_report_say(stderr,
			       "%s: %s; `%s --help` says what each option "
			       "and word means",
			       tool_name(ops), cqp_errmsg(), tool_name(ops));
		return cqp_exit_status(cqp_errcode());
	}
	if (rc == 0)
		rc = cqp_clock_init(p.clock);
	if (rc == 0)
		rc = install_signals();
	if (rc == 0)
		rc = cqp_pin_cpu(p.cpu);
	online = sysconf(_SC_NPROCESSORS_ONLN);
	if (rc == 0 && p.nthreads > online)
		fprintf(stderr,
			"%s: warning: --threads %u on %ld online CPUs: "
			"threads share CPUs\n",
			tool_name(ops), p.nthreads, online);
	if (rc == 0)
		rc = p.host[0] ? client(ops, &p) : server(ops, &p);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", tool_name(ops), cqp_errmsg());
		return cqp_exit_status(cqp_errcode());
	}
	return 0;
}
