/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/measure.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "verbs/completion.h"
#include "base/error.h"
#include "base/strategy.h"

#define SAMPLE_CAP (64u << 20) /* -n beyond this keeps a histogram only */

int cqp_lat_rec_init(struct cqp_lat_rec *r, const struct cqp_params *p,
		     FILE *samples)
{
	memset(r, 0, sizeof(*r));
	r->out = samples;
	if (r->out) {
		fputs("seq,scheduled_ns,posted_ns,completed_ns,latency_ns,"
		      "bytes,mode,rate\n",
		      r->out);
	}
	if (p->duration_s)
		return 0;
	if (cqp_samples_init(&r->samples,
			     p->iters < SAMPLE_CAP ? p->iters : SAMPLE_CAP) ||
	    ((p->rate || p->nrates) &&
	     cqp_samples_init(&r->svc,
			      p->iters < SAMPLE_CAP ? p->iters : SAMPLE_CAP)))
		return cqp_fail(CQP_E_NOMEM, "no memory for %llu samples",
				(unsigned long long)p->iters);
	return 0;
}

void cqp_lat_rec_free(struct cqp_lat_rec *r)
{
	cqp_samples_free(&r->samples);
	cqp_samples_free(&r->svc);
	free(r->times);
	r->out = NULL;
	r->times = NULL;
}

void cqp_lat_rec_begin(struct cqp_lat_rec *r, const struct cqp_params *p,
		       uint64_t bytes, const char *mode, uint64_t rate)
{
	r->samples.n = 0;
	r->svc.n = 0;
	r->measured = 0;
	r->ntimes = 0;
	r->bytes = bytes;
	r->mode = mode;
	r->rate = rate;
	r->open = rate != 0;
	/* A response time is a whole round trip: halving it would hide
	 * half of a stall. */
	r->scale = p->rtt || r->open ? 1.0 : 0.5;
	/* A plain -n run needs only the samples. */
	r->need_hist = p->duration_s || p->histogram || p->iters > SAMPLE_CAP;
	cqp_hist_init(&r->hist);
	cqp_hist_init(&r->svc_hist);
}

/* Kept for --samples; a store that cannot grow drops the file's tail
 * (the figures keep every sample), which write_samples says. */
static void keep_times(struct cqp_lat_rec *r, uint64_t sched, uint64_t posted,
		       uint64_t done)
{
	if (r->ntimes == r->cap_times) {
		size_t cap = r->cap_times ? 2 * r->cap_times : 4096;
		void *t = realloc(r->times, cap * sizeof(*r->times));

		if (!t)
			return;
		r->times = t;
		r->cap_times = cap;
	}
	r->times[r->ntimes][0] = sched;
	r->times[r->ntimes][1] = posted;
	r->times[r->ntimes][2] = done;
	r->ntimes++;
}

/* Closed loop: the schedule is the post, and the rate column is empty. */
static int write_samples(struct cqp_lat_rec *r)
{
	char rate[24] = "";

	if (r->rate)
		snprintf(rate, sizeof(rate), "%" PRIu64, r->rate);
	for (size_t i = 0; i < r->ntimes; i++) {
		uint64_t ts = r->times[i][0], t1 = r->times[i][2];

		fprintf(r->out,
			"%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.1f,%" PRIu64
			",%s,%s\n",
			i, ts, r->times[i][1], t1, (double)(t1 - ts) * r->scale,
			r->bytes, r->mode ? r->mode : "", rate);
	}
	if (fflush(r->out) || ferror(r->out))
		return cqp_fail(CQP_E_SYS, "--samples: writing: %s",
				strerror(errno));
	if (r->ntimes < r->measured)
		return cqp_fail(CQP_E_NOMEM,
				"--samples: no memory for %" PRIu64
				" samples' times",
				r->measured);
	return 0;
}

void cqp_lat_rec_more(struct cqp_lat_rec *r, uint64_t posted_ns,
		      uint64_t done_ns, double ns)
{
	if (r->out || r->keep)
		keep_times(r, posted_ns, posted_ns, done_ns);
	if (r->need_hist)
		cqp_hist_add(&r->hist, (uint64_t)llround(ns));
}

void cqp_lat_rec_add_open(struct cqp_lat_rec *r, uint64_t sched_ns,
			  uint64_t posted_ns, uint64_t done_ns)
{
	double svc = (double)(done_ns - posted_ns);

	if (!r->measured)
		r->first_sched = sched_ns;
	r->last_done = done_ns;
	if (r->svc.cap)
		cqp_samples_add(&r->svc, svc);
	if (r->need_hist)
		cqp_hist_add(&r->svc_hist, done_ns - posted_ns);
	if (r->out || r->keep)
		keep_times(r, sched_ns, posted_ns, done_ns);
	/* Every sample of the step is kept or none: keep_times is done. */
	r->measured++;
	if (r->samples.cap)
		cqp_samples_add(&r->samples, (double)(done_ns - sched_ns));
	if (r->need_hist)
		cqp_hist_add(&r->hist, done_ns - sched_ns);
}

int cqp_lat_rec_merge(struct cqp_lat_rec *into, const struct cqp_lat_rec *from)
{
	if (from->measured &&
	    (!into->measured || from->first_sched < into->first_sched))
		into->first_sched = from->first_sched;
	if (from->last_done > into->last_done)
		into->last_done = from->last_done;
	into->measured += from->measured;
	cqp_hist_merge(&into->hist, &from->hist);
	cqp_hist_merge(&into->svc_hist, &from->svc_hist);
	if (cqp_samples_append(&into->samples, &from->samples) ||
	    cqp_samples_append(&into->svc, &from->svc))
		return cqp_fail(CQP_E_NOMEM, "no memory for the threads' "
					     "latency samples");
	for (size_t i = 0; i < from->ntimes; i++)
		keep_times(into, from->times[i][0], from->times[i][1],
			   from->times[i][2]);
	return 0;
}

int cqp_lat_rec_finish(struct cqp_lat_rec *r, const struct cqp_params *p,
		       struct cqp_row *row)
{
	struct cqp_summary sum;
	int rc;

	if (r->out && (rc = write_samples(r)) < 0)
		return rc;
	/* Exact percentiles when every sample was kept; else the histogram,
	 * whose bound cqperf(7) documents. */
	if (r->samples.cap && r->samples.n == r->measured)
		cqp_samples_summary(&r->samples, &sum);
	else
		cqp_hist_summary(&r->hist, &sum);
	row->has_lat = true;
	row->iterations = r->measured;
	cqp_summary_ns_to_us(&sum, &row->lat_us);
	if (r->open) {
		if (r->svc.cap && r->svc.n == r->measured)
			cqp_samples_summary(&r->svc, &sum);
		else
			cqp_hist_summary(&r->svc_hist, &sum);
		row->open_loop = true;
		row->offered_rate = (double)r->rate;
		/* Answered requests over the time from the first one's due
		 * time to the last reply: a service that falls behind shows
		 * it, a late start (the warm-up's tail) does not. */
		row->achieved_rate =
		    r->measured && r->last_done > r->first_sched
			? (double)r->measured * 1e9 /
			      (double)(r->last_done - r->first_sched)
			: NAN;
		cqp_summary_ns_to_us(&sum, &row->service_lat_us);
	}
	if (p->histogram) {
		/* The row outlives this step and the binary's context. */
		row->hist = malloc(sizeof(*row->hist));
		if (!row->hist)
			return cqp_fail(CQP_E_NOMEM,
					"no memory for a histogram");
		*row->hist = r->hist;
	}
	return 0;
}

void cqp_ol_begin(struct cqp_open_loop *o, const struct cqp_params *p,
		  uint64_t rate, uint64_t now, uint64_t seed)
{
	struct cqp_arrival_shape shape;

	memset(o, 0, sizeof(*o));
	o->p = p;
	cqp_params_arrival(p, &shape);
	cqp_arrivals_init(&o->a, &shape, rate, now, seed);
	o->due = cqp_arrivals_next(&o->a);
}

void cqp_ol_blocked(struct cqp_open_loop *o)
{
	o->late += !o->late_marked && o->sent >= o->p->warmup;
	o->late_marked = true;
}

void cqp_ol_next(struct cqp_open_loop *o, uint64_t now, bool *first, bool *last)
{
	const struct cqp_params *p = o->p;

	*first = o->sent == p->warmup;
	if (*first) {
		/* The spread of the measured requests' gaps only. */
		cqp_arrivals_mark(&o->a);
		if (p->duration_s)
			o->end_ns =
			    now + (uint64_t)p->duration_s * 1000000000ull;
	}
	*last = p->duration_s ? o->sent >= p->warmup && now >= o->end_ns
			      : o->sent + 1 == p->warmup + p->iters;
}

uint64_t cqp_ol_posted(struct cqp_open_loop *o, bool last, uint64_t now)
{
	uint64_t due = o->due < now ? o->due : now;

	o->sent++;
	o->late_marked = false;
	o->ending = last;
	o->due = cqp_arrivals_next(&o->a);
	return due;
}

void cqp_ol_finish(const struct cqp_open_loop *o, struct cqp_row *row)
{
	row->late_sends = o->late;
	row->arrival_cv = cqp_arrivals_cv(&o->a);
}

void cqp_bw_row(struct cqp_row *row, const struct cqp_bw_result *res)
{
	row->has_bw = true;
	row->iterations = res->msgs;
	row->bw_avg_gbps = res->avg_bps * 8 / 1e9;
	row->bw_peak_gbps = res->peak_bps * 8 / 1e9;
	row->msg_rate_mpps = res->msg_rate / 1e6;
	row->bw_seconds = res->seconds;
}

/* The side that reaped in event mode in the last row where one did:
 * what one sleep-wake-reap cycle costs.  In ping-pong both sides do,
 * and the client's counts; in an open loop the server's mode is the
 * row's (the client is the load). */
static const struct cqp_cost *event_cost(const struct cqp_run *run,
					 const struct cqp_report *r,
					 const struct cqp_row **of)
{
	for (unsigned i = r->nrows; i-- > 0;) {
		const struct cqp_row *row = &r->rows[i];
		const struct cqp_cost *c =
		    row->open_loop ? &row->server : &row->client;
		bool event = run->p->compare_modes
				 ? strcmp(row->label, "event") == 0
				 : run->p->cq_mode == CQP_CQ_EVENT;

		if (event && c->valid && c->wakeups) {
			*of = row;
			return c;
		}
	}
	return NULL;
}

/* The projection at --project's line rate, from one wakeup's cost. */
static void project(const struct cqp_params *p, uint64_t bytes, double cost_us,
		    bool have_cost, struct cqp_projection *pr)
{
	pr->have_cost = have_cost;
	pr->wakeup_cost_us = cost_us;
	pr->valid = pr->have_cost || p->project_bps;
	if (!p->project_bps)
		return;
	pr->rate_bps = p->project_bps;
	pr->bytes = bytes;
	pr->batch = p->poll_batch;
	pr->compl_per_s = (double)pr->rate_bps / 8.0 / (double)pr->bytes;
	pr->wakeups_per_s = pr->compl_per_s / pr->batch;
	if (pr->have_cost)
		pr->core_pct = pr->wakeups_per_s * pr->wakeup_cost_us / 1e4;
}

static double cost_per_wakeup_us(const struct cqp_cost *c)
{
	return c->cpu_pct / 100.0 * c->seconds * 1e6 / (double)c->wakeups;
}

void cqp_lat_annotate(const struct cqp_run *run, struct cqp_report *r)
{
	const struct cqp_params *p = run->p;
	const struct cqp_row *row = NULL;
	const struct cqp_cost *c = event_cost(run, r, &row);

	cqp_strategy_pick(r->rows, r->nrows, p->p99_slack, &r->strategy);
	memset(&r->projection, 0, sizeof(r->projection));
	r->projection.server_side = row && row->open_loop;
	project(p, row ? row->bytes : p->size, c ? cost_per_wakeup_us(c) : 0,
		c != NULL, &r->projection);
}

void cqp_bw_annotate(const struct cqp_run *run, struct cqp_report *r)
{
	const struct cqp_params *p = run->p;
	const struct cqp_row *row = NULL;
	struct cqp_projection_check *pc = &r->check;
	double t;

	memset(&r->projection, 0, sizeof(r->projection));
	memset(pc, 0, sizeof(*pc));
	for (unsigned i = r->nrows; !row && i-- > 0;)
		if (r->rows[i].server.valid && r->rows[i].server.wakeups)
			row = &r->rows[i];
	if (!p->project_bps)
		return;
	r->projection.server_side = true;
	project(p, row ? row->bytes : p->size,
		row ? cost_per_wakeup_us(&row->server) : 0, row != NULL,
		&r->projection);
	if (!row || !row->open_loop || !(row->server.seconds > 0))
		return;
	t = cost_per_wakeup_us(&row->server);
	pc->valid = true;
	pc->rate = row->achieved_rate;
	pc->wakeup_cost_us = t;
	pc->model_wakeups_per_s = pc->rate < 1e6 / t ? pc->rate : 1e6 / t;
	pc->model_cpu_pct = pc->model_wakeups_per_s * t / 1e4;
	pc->measured_wakeups_per_s =
	    (double)row->server.wakeups / row->server.seconds;
	pc->measured_cpu_pct = row->server.cpu_pct;
}

void cqp_lat_loop_init(struct cqp_lat_loop *l, const struct cqp_params *p,
		       struct cqp_comp *comp)
{
	*l = (struct cqp_lat_loop){.p = p, .comp = comp};
}

void cqp_lat_loop_mark(struct cqp_lat_loop *l)
{
	const struct cqp_params *p = l->p;

	if (l->first) {
		cqp_comp_begin(l->comp);
		if (p->duration_s)
			l->end_ns = cqp_now_ns() +
				    (uint64_t)p->duration_s * 1000000000ull;
	}
	l->last = p->duration_s ? l->measured && cqp_now_ns() >= l->end_ns
				: l->i + 1 == p->warmup + p->iters;
}
