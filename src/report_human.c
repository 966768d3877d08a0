/* SPDX-License-Identifier: BSD-2-Clause */
/* The human report: the settings, the table of rows with each side's
 * cost, and the notes under it (delivery, histograms, threads, the
 * strategy map, noise, the projection).  ~880 lines: the table and its
 * notes share the line and column helpers and the report's shape. */
#include "report_fields.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "perftest.h"
#include "version.h"

/* ---- human ---- */

#define LINE_CAP 1024

struct line {
	char buf[LINE_CAP];
	size_t len;
};

static void line_cell(struct line *l, int width, const char *text)
{
	int n =
	    snprintf(l->buf + l->len, LINE_CAP - l->len, " %-*s ", width, text);

	if (n > 0)
		l->len += (size_t)n < LINE_CAP - l->len ? (size_t)n
							: LINE_CAP - 1 - l->len;
}

/* Emits the line without trailing blanks. */
static void line_emit(struct line *l, FILE *out)
{
	while (l->len > 0 && l->buf[l->len - 1] == ' ')
		l->len--;
	l->buf[l->len] = '\0';
	fprintf(out, "%s\n", l->buf);
}

static void fmt_double(char *buf, size_t cap, const char *fmt, double v)
{
	if (isfinite(v))
		snprintf(buf, cap, fmt, v);
	else
		snprintf(buf, cap, "-");
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

/* Values are left-aligned under their headers, like perftest's. */
static const char *const lat_heads[N_LAT_FIELDS] = {
    "t_min[usec]", "p50", "t_avg", "t_stdev", "p99", "p99.9", "p99.99", "t_max",
};
#define NUM_W	10 /* fits every figure we print (up to ~1e10) */
#define CPU_W	12 /* "client: CPU%" */
#define SPLIT_W 12 /* "idle usr/sys", "100.0/100.0" */
#define SIRQ_W	11 /* "sirq ns/msg" */

/* "user/sys", both % of one core. */
static void split_cell(struct line *l, bool ok, double user, double sys)
{
	char v[32];

	if (ok && isfinite(user) && isfinite(sys))
		snprintf(v, sizeof(v), "%.1f/%.1f", user, sys);
	else
		snprintf(v, sizeof(v), "-");
	line_cell(l, SPLIT_W, v);
}

static void cost_head(struct line *l, const char *side, const struct shape *s)
{
	char head[32];

	snprintf(head, sizeof(head), "%s: CPU%%", side);
	line_cell(l, CPU_W, head);
	line_cell(l, SPLIT_W, "usr/sys");
	if (s->idle) {
		line_cell(l, NUM_W, "idle CPU%");
		line_cell(l, SPLIT_W, "idle usr/sys");
	}
	line_cell(l, SIRQ_W, "sirq ns/msg");
	line_cell(l, SIRQ_W, "kern ns/msg");
	line_cell(l, NUM_W, "compl/wake");
	line_cell(l, NUM_W, "wake/s");
	if (s->lat) {
		line_cell(l, NUM_W, "wake/iter");
		line_cell(l, NUM_W, "spin%");
	}
}

static void cost_cells(struct line *l, const struct cqp_cost *c,
		       const struct shape *s, const struct cqp_row *row)
{
	bool ok = c->valid;
	char v[32];

	/* An unknown side keeps every cell, as "-", so columns line up. */
	fmt_double(v, sizeof(v), "%.1f", ok ? c->cpu_pct : NAN);
	line_cell(l, CPU_W, v);
	split_cell(l, ok, c->cpu_user_pct, c->cpu_sys_pct);
	if (s->idle) {
		fmt_double(v, sizeof(v), "%.1f",
			   ok && c->has_idle ? c->idle_cpu_pct : NAN);
		line_cell(l, NUM_W, v);
		split_cell(l, ok && c->has_idle, c->idle_cpu_user_pct,
			   c->idle_cpu_sys_pct);
	}
	fmt_double(v, sizeof(v), "%.0f",
		   ok ? cqp_softirq_ns_per_msg(c, row) : NAN);
	line_cell(l, SIRQ_W, v);
	fmt_double(v, sizeof(v), "%.0f",
		   ok ? cqp_kernel_ns_per_msg(c, row) : NAN);
	line_cell(l, SIRQ_W, v);
	fmt_double(v, sizeof(v), "%.2f",
		   ok ? cqp_compl_per_wakeup(c, row) : NAN);
	line_cell(l, NUM_W, v);
	fmt_double(v, sizeof(v), "%.0f", ok ? cqp_wakeups_per_s(c, row) : NAN);
	line_cell(l, NUM_W, v);
	if (s->lat) {
		fmt_double(v, sizeof(v), "%.3f",
			   ok ? cqp_wakeups_per_msg(c, row) : NAN);
		line_cell(l, NUM_W, v);
		/* Only a ping-pong says which way each completion came. */
		fmt_double(v, sizeof(v), "%.1f",
			   ok && row->has_lat ? cqp_spin_pct(c, row) : NAN);
		line_cell(l, NUM_W, v);
	}
}

/* ---- -H: the latency distribution under its row ---- */

#define HIST_BINS 24 /* display lines at most */
#define HIST_BAR  50 /* '#' for the fullest line */

struct hist_bin {
	double lo, hi; /* ns; hi exclusive except for the last bin */
	uint64_t count;
};

/* Groups of `group` consecutive log-linear buckets from first to last,
 * each run of empty groups folded into one bin.  Fills at most cap bins;
 * returns how many it took, or cap + 1 when that is not enough. */
static unsigned hist_group(const struct cqp_hist *h, unsigned first,
			   unsigned last, unsigned group, struct hist_bin *bins,
			   unsigned cap)
{
	unsigned n = 0, a, z, i;
	uint64_t lo, width, count;

	for (a = first; a <= last; a = z + 1) {
		z = a + group - 1 < last ? a + group - 1 : last;
		for (count = 0, i = a; i <= z; i++)
			count += h->count[i];
		if (count || n == 0 || bins[n - 1].count) {
			if (n == cap)
				return cap + 1;
			cqp_hist_bucket_range(a, &lo, &width);
			bins[n].lo = (double)lo;
			bins[n++].count = count;
		}
		cqp_hist_bucket_range(z, &lo, &width);
		/* In double: the top bucket's end is 2^64. */
		bins[n - 1].hi = (double)lo + (double)width;
	}
	return n;
}

/* Every bucket is a fixed fraction of its value, so equal groups of
 * buckets make near-geometric bins whose edges, on bucket edges, keep
 * every count exact.  The smallest group that fits gives the most
 * detail; folding empty runs keeps a sparse tail from eating the lines
 * the bulk of the data needs. */
static unsigned hist_bins(const struct cqp_hist *h, struct hist_bin *bins)
{
	unsigned first = CQP_HIST_BUCKETS, last = 0, group, n, i;

	for (i = 0; i < CQP_HIST_BUCKETS; i++)
		if (h->count[i]) {
			if (first == CQP_HIST_BUCKETS)
				first = i;
			last = i;
		}
	if (first == CQP_HIST_BUCKETS)
		return 0;
	/* Ends at the latest with HIST_BINS groups, no folding needed. */
	for (group = 1; (n = hist_group(h, first, last, group, bins,
					HIST_BINS)) > HIST_BINS;
	     group++)
		;
	return n;
}

static void print_hist(const struct cqp_hist *h, FILE *out)
{
	struct hist_bin bins[HIST_BINS];
	char los[HIST_BINS][32], his[HIST_BINS][32], cnt[32];
	unsigned n, b;
	uint64_t most = 0;
	double narrow = INFINITY;
	int dec, wlo = 0, whi = 0, wcnt;

	if (h->n == 0)
		return;
	n = hist_bins(h, bins);
	if (n == 0)
		return;
	for (b = 0; b < n; b++) {
		if (bins[b].count > most)
			most = bins[b].count;
		if (bins[b].count && bins[b].hi - bins[b].lo < narrow)
			narrow = bins[b].hi - bins[b].lo;
	}
	/* The data's own ends are tighter than the outer buckets'. */
	if ((double)h->min > bins[0].lo && (double)h->min < bins[0].hi)
		bins[0].lo = (double)h->min;
	if ((double)h->max >= bins[n - 1].lo && (double)h->max < bins[n - 1].hi)
		bins[n - 1].hi = (double)h->max;
	/* Enough decimals to tell the narrowest bin's edges apart, down
	 * to the nanosecond. */
	dec = isfinite(narrow) ? (int)ceil(-log10(narrow / 1e3)) + 1 : 3;
	dec = dec < 0 ? 0 : dec > 3 ? 3 : dec;
	for (b = 0; b < n; b++) {
		snprintf(los[b], sizeof(los[b]), "%.*f", dec, bins[b].lo / 1e3);
		snprintf(his[b], sizeof(his[b]), "%.*f", dec, bins[b].hi / 1e3);
		wlo = max_int(wlo, (int)strlen(los[b]));
		whi = max_int(whi, (int)strlen(his[b]));
	}
	wcnt = snprintf(cnt, sizeof(cnt), "%" PRIu64, most);
	for (b = 0; b < n; b++) {
		int bar = (int)lround((double)bins[b].count * HIST_BAR /
				      (double)most);

		if (bins[b].count && bar == 0)
			bar = 1; /* a rare outlier still shows */
		fprintf(out, "   %*s..%-*s usec  %*" PRIu64, wlo, los[b], whi,
			his[b], wcnt, bins[b].count);
		if (bar)
			fputs("  ", out);
		while (bar-- > 0)
			fputc('#', out);
		fputc('\n', out);
	}
}

/* ---- UD delivery, in words ---- */

static void fmt_bytes(char *buf, size_t cap, uint64_t v)
{
	if (v >= (1ull << 20))
		snprintf(buf, cap, "%.1f MiB", (double)v / (1 << 20));
	else if (v >= 1024)
		snprintf(buf, cap, "%.1f KiB", (double)v / 1024);
	else
		snprintf(buf, cap, "%" PRIu64 " B", v);
}

/* Why messages went missing, and what the receive side registered. */
static void print_delivery(const struct cqp_report *r, const struct shape *s,
			   FILE *out)
{
	const struct cqp_row *mem = NULL;
	char a[32], b[32];

	for (unsigned i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];
		double loss = cqp_row_loss_pct(row);

		if ((row->client.valid && row->client.has_rx_mem) ||
		    (row->server.valid && row->server.has_rx_mem))
			mem = row;
		if (!isfinite(loss) || loss <= 0)
			continue;
		if (row->rx_dry)
			fprintf(out,
				" Loss at %" PRIu64 " B: %.2f%%; the server's "
				"receives ran out %" PRIu64
				" time%s (raise --rx-depth)\n",
				row->bytes, loss, row->rx_dry,
				row->rx_dry == 1 ? "" : "s");
		else
			fprintf(out,
				" Loss at %" PRIu64 " B: %.2f%% with receives "
				"always posted: dropped by the network or the "
				"device\n",
				row->bytes, loss);
	}
	if (s->bw && r->dev.wire_overhead)
		fprintf(out,
			" Wire efficiency: payload / (payload + %" PRIu32
			" B a packet on %s)\n",
			r->dev.wire_overhead, r->dev.wire);
	if (!s->rx_mem || !mem)
		return;
	fmt_bytes(a, sizeof(a),
		  mem->client.has_rx_mem ? mem->client.rx_mem_bytes : 0);
	fmt_bytes(b, sizeof(b),
		  mem->server.has_rx_mem ? mem->server.rx_mem_bytes : 0);
	fprintf(out, " Receive memory registered: client %s, server %s\n", a,
		b);
}

/* ---- open loop: a rate the load did not reach ---- */

static void print_open_loop(const struct cqp_report *r, FILE *out)
{
	for (unsigned i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];
		bool short_of = row->achieved_rate < 0.98 * row->offered_rate;

		if (!row->open_loop || (!row->late_sends && !short_of))
			continue;
		fprintf(out, " %s%s%s: %.0f/s offered, %.0f/s achieved",
			short_of ? "Rate not reached" : "Late sends",
			row->label[0] ? " in " : "", row->label,
			row->offered_rate, row->achieved_rate);
		if (row->late_sends)
			fprintf(out,
				", %" PRIu64 " request%s sent late (the window "
				"was full); latency still counts from the "
				"schedule",
				row->late_sends,
				row->late_sends == 1 ? "" : "s");
		fputc('\n', out);
	}
}

/* ---- --per-thread: each thread's share ---- */

static void print_threads(const struct cqp_report *r, FILE *out)
{
	if (!r->params || !r->params->per_thread)
		return;
	for (unsigned i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		for (int side = 0; side < 2; side++) {
			const struct cqp_cost *c =
			    side ? &row->server : &row->client;

			if (!c->valid || !c->nthreads)
				continue;
			fprintf(out, " Threads, %s, %" PRIu64 " B%s%s:\n",
				side ? "server" : "client", row->bytes,
				row->label[0] ? " " : "", row->label);
			for (unsigned t = 0; t < c->nthreads; t++) {
				const struct cqp_thread_cost *tc =
				    &c->threads[t];

				fprintf(out,
					"  #%u on CPU %" PRId32 ": %" PRIu64
					" completions, %" PRIu64
					" wakeups, CPU %.1f %% (usr/sys "
					"%.1f/%.1f), %" PRIu64 " foreign, "
					"%.0f us lock wait\n",
					t, tc->cpu, tc->completions,
					tc->wakeups, tc->cpu_pct,
					tc->cpu_user_pct, tc->cpu_sys_pct,
					tc->foreign_completions,
					tc->lock_wait_us);
			}
		}
	}
}

/* ---- the strategy map ---- */

static void print_strategy(const struct cqp_strategy *st, FILE *out)
{
	if (!st->n)
		return;
	fprintf(out,
		" Strategy: at each rate, the least server CPU with a p99 "
		"within %.0f %% of the best:\n",
		st->slack_pct);
	for (unsigned i = 0; i < st->n; i++) {
		const struct cqp_choice *c = &st->c[i];
		const char *sep = " (";

		fprintf(out, "  at %.0f/s: %s, p99 %.1f us, server CPU %.1f %%",
			c->offered_rate, cqp_chosen_mode(c),
			c->mode[c->chosen].p99_us,
			c->mode[c->chosen].server_cpu_pct);
		for (unsigned k = 0; k < c->n; k++) {
			if (k == c->chosen)
				continue;
			fprintf(out, "%s%s %.1f us, %.1f %%", sep,
				c->mode[k].mode, c->mode[k].p99_us,
				c->mode[k].server_cpu_pct);
			sep = "; ";
		}
		fputs(*sep == ';' ? ")\n" : "\n", out);
	}
	for (unsigned i = 0; i < st->n; i++)
		if (cqp_crossover(st, i))
			fprintf(out,
				" Crossover: %s up to %.0f/s, %s from %.0f/s\n",
				cqp_chosen_mode(&st->c[i - 1]),
				st->c[i - 1].offered_rate,
				cqp_chosen_mode(&st->c[i]),
				st->c[i].offered_rate);
}

/* ---- a machine busy with something else ---- */

/* One line per side whose machine, in some row, was busier than this
 * process, its peer there, irq and softirq explain: the largest share. */
static void print_noise(const struct cqp_report *r, FILE *out)
{
	for (int side = 0; side < 2; side++) {
		const struct cqp_cost *run =
		    side ? &r->run_server : &r->run_client;
		double worst = -1;

		for (unsigned i = 0; i <= r->nrows; i++) {
			const struct cqp_cost *c = i == r->nrows ? run
						   : side ? &r->rows[i].server
							  : &r->rows[i].client;

			if (c->valid && c->has_sys && c->noisy &&
			    c->others_busy_pct > worst)
				worst = c->others_busy_pct;
		}
		if (worst >= 0)
			fprintf(out,
				" Warning: %s machine: %.0f %% of a core used "
				"by other processes during the run; figures "
				"are suspect\n",
				side ? "server" : "client", worst);
	}
}

/* A run-wide cost (cm_event_stress) in words, a line per side. */
static void print_run_cost(const struct cqp_report *r, FILE *out)
{
	for (int side = 0; side < 2; side++) {
		const struct cqp_cost *c =
		    side ? &r->run_server : &r->run_client;

		if (!c->valid)
			continue;
		fprintf(out,
			" CPU, %s: thread %.1f %% (usr/sys %.1f/%.1f), "
			"process %.1f %%",
			side ? "server" : "client", c->cpu_pct, c->cpu_user_pct,
			c->cpu_sys_pct, c->proc_cpu_pct);
		if (c->has_sys)
			fprintf(out,
				"; machine: busy %.1f, irq %.1f, softirq %.1f, "
				"kernel threads %.1f, others %.1f (%% of a "
				"core)",
				c->sys_busy_pct, c->sys_irq_pct,
				c->sys_softirq_pct, c->sys_kthread_pct,
				c->others_busy_pct);
		fputc('\n', out);
	}
}

/* ---- run-wide figures ---- */

static void fmt_figure(char *buf, size_t cap, const struct cqp_figure *f)
{
	if (f->integer)
		snprintf(buf, cap, "%.0f", f->value);
	else
		fmt_double(buf, cap, "%.2f", f->value);
}

/* " Summary: a 1, b 2.00" then a line per group. */
static void print_summary(const struct cqp_report *r, FILE *out)
{
	const char *group = NULL;
	char v[48];

	for (unsigned i = 0; i < r->nsummary; i++) {
		const struct cqp_figure *f = &r->summary[i];

		if (!group || strcmp(group, f->group) != 0) {
			if (group)
				fputc('\n', out);
			fprintf(out,
				" %s:", f->group[0] ? f->group : "Summary");
			group = f->group;
		} else {
			fputc(',', out);
		}
		fmt_figure(v, sizeof(v), f);
		fprintf(out, " %s %s", f->key, v);
	}
	if (group)
		fputc('\n', out);
}

/* ---- the load projection, in words ---- */

/* Three significant figures and a decimal prefix: "3.05 M", "47.7 k". */
static void fmt_rate(char *buf, size_t cap, double v)
{
	static const char *const prefix[] = {"", " k", " M", " G", " T"};
	unsigned i = 0;

	if (!isfinite(v)) {
		snprintf(buf, cap, "-");
		return;
	}
	while (v >= 999.5 && i < 4) {
		v /= 1e3;
		i++;
	}
	if (v < 9.995)
		snprintf(buf, cap, "%.2f%s", v, prefix[i]);
	else if (v < 99.95)
		snprintf(buf, cap, "%.1f%s", v, prefix[i]);
	else
		snprintf(buf, cap, "%.0f%s", v, prefix[i]);
}

static void fmt_bps(char *buf, size_t cap, uint64_t bps)
{
	if (bps >= 1000000000)
		snprintf(buf, cap, "%.6g Gb/s", (double)bps / 1e9);
	else if (bps >= 1000000)
		snprintf(buf, cap, "%.6g Mb/s", (double)bps / 1e6);
	else
		snprintf(buf, cap, "%.6g kb/s", (double)bps / 1e3);
}

static void print_check(const struct cqp_projection_check *pc, FILE *out)
{
	char rate[32], model[32], measured[32];

	if (!pc->valid)
		return;
	fmt_rate(rate, sizeof(rate), pc->rate);
	fmt_rate(model, sizeof(model), pc->model_wakeups_per_s);
	fmt_rate(measured, sizeof(measured), pc->measured_wakeups_per_s);
	fprintf(out,
		" Projection check at %s msg/s (server): model %s wakeups/s, "
		"%.1f%% of a core; measured %s wakeups/s, %.1f%%\n",
		rate, model, pc->model_cpu_pct, measured, pc->measured_cpu_pct);
}

static void print_projection(const struct cqp_projection *pr, FILE *out)
{
	char rate[32], per_s[32], wakes[32];

	if (!pr->valid)
		return;
	/* cq_event_lat costs a wakeup from the client's event-mode row,
	 * whichever side prints. */
	if (pr->have_cost)
		fprintf(out,
			" Wakeup cost: %.2f usec of CPU per wakeup (event "
			"mode, %s)\n",
			pr->wakeup_cost_us,
			pr->server_side ? "server" : "client");
	if (!pr->rate_bps)
		return; /* no --project: the cost alone */
	fmt_bps(rate, sizeof(rate), pr->rate_bps);
	fmt_rate(per_s, sizeof(per_s), pr->compl_per_s);
	fmt_rate(wakes, sizeof(wakes), pr->wakeups_per_s);
	fprintf(out,
		" Projection at %s, %" PRIu64 " B messages, %" PRIu32
		" completion%s per wakeup: %s completions/s, %s wakeups/s",
		rate, pr->bytes, pr->batch, pr->batch == 1 ? "" : "s", per_s,
		wakes);
	if (pr->have_cost)
		fprintf(out, ", %.1f%% of a core\n", pr->core_pct);
	else
		fputs("; no event-mode figures to cost a wakeup (use "
		      "--cq-mode event or --compare-modes)\n",
		      out);
}

static void rule(FILE *out, size_t width)
{
	size_t i;

	for (i = 0; i < width; i++)
		fputc('-', out);
	fputc('\n', out);
}

/* Does this tool use the params field at offset?  True when the option
 * table has no row for it (nothing says otherwise). */
static bool tool_uses(enum cqp_tool tool, size_t offset)
{
	const struct cqp_option *o;
	bool seen = false;

	for (o = cqp_options; o->name; o++) {
		/* These rows have no field of their own at offset. */
		if (o->type == CQP_OPT_HELP || o->type == CQP_OPT_VERSION ||
		    o->type == CQP_OPT_CQMOD || o->offset != offset)
			continue;
		if (o->tools & tool)
			return true;
		seen = true;
	}
	return !seen;
}

static void print_settings(const struct cqp_report *r, const struct shape *s,
			   FILE *out)
{
	const struct cqp_device_info *d = &r->dev;
	const struct cqp_params *p = r->params;
	char hint[160];

	fprintf(out, " %s (%s, cqperf %s)\n", r->title ? r->title : "cqperf",
		cqp_tool_name(r->tool), CQP_VERSION);
	if (r->tool == CQP_TOOL_CM_EVENT_STRESS) {
		fputs(" Device: RDMA CM's choice for each connection\n", out);
		return;
	}
	fprintf(out, " Device: %s  port %" PRIu32 "  GID index %" PRId32,
		d->name[0] ? d->name : "(unknown)", d->port, d->gid_index);
	if (d->gid[0])
		fprintf(out, " (%s%s%s)", d->gid, d->gid_type[0] ? ", " : "",
			d->gid_type);
	fprintf(out, "  active MTU %" PRIu32, d->active_mtu);
	if (d->path_mtu)
		fprintf(out, "  path MTU %" PRIu32, d->path_mtu);
	fprintf(out, "  link %s%s",
		d->link_layer[0] ? d->link_layer : "(unknown)",
		d->path_mtu && !d->grh ? " (LID routed)" : "");
	if (d->has_inline)
		fprintf(out, "  inline %" PRIu32, d->inline_size);
	fputc('\n', out);
	if (p && tool_uses(r->tool, offsetof(struct cqp_params, cq_mode))) {
		char spins[96];

		cqp_option_format(cqp_option_find("spin-us"), p, spins,
				  sizeof(spins));
		fprintf(
		    out,
		    " Completions: mode %s  poll batch %" PRIu32
		    "  ack batch %" PRIu32 "  spin %s"
		    " us  solicited %s  nonblock %s",
		    p->compare_modes ? "per row" : cqp_cq_mode_name(p->cq_mode),
		    p->poll_batch, p->ack_batch, spins,
		    p->solicited ? "on" : "off", p->nonblock ? "on" : "off");
		if (p->cq_mod_count)
			fprintf(out,
				"  CQ moderation %" PRIu32 "/%" PRIu32 " us",
				p->cq_mod_count, p->cq_mod_usec);
		fputc('\n', out);
	}
	if (cqp_perftest_diff(r->tool, p, d, hint, sizeof(hint)))
		fprintf(out, " Unlike perftest: %s; see cqperf(7), PERFTEST\n",
			hint);
	if (p && (p->rate || p->nrates)) {
		char kind[32], rates[256];

		cqp_option_format(cqp_option_find("arrival"), p, kind,
				  sizeof(kind));
		if (p->rate)
			snprintf(rates, sizeof(rates), "%" PRIu64, p->rate);
		else
			cqp_option_format(cqp_option_find("rates"), p, rates,
					  sizeof(rates));
		if (s->bw)
			fprintf(out,
				" Paced: %s messages/s over all QPs, %s "
				"arrivals; the sender polls (load), the "
				"receiver reaps in %s\n",
				rates, kind, cqp_cq_mode_name(p->cq_mode));
		else
			fprintf(out,
				" Open loop: %s requests/s, %s arrivals, at "
				"most %" PRIu32 " in flight; the client %s "
				"(load), the server reaps in %s (the "
				"service)\n",
				rates, kind,
				p->tx_depth < p->rx_depth ? p->tx_depth
							  : p->rx_depth,
				p->client_cq_mode == CQP_CQ_POLL ? "polls"
				: p->client_cq_mode == CQP_CQ_EVENT
				    ? "sleeps on events"
				    : "spins, then sleeps (hybrid)",
				p->compare_modes
				    ? "each row's mode"
				    : cqp_cq_mode_name(p->cq_mode));
		if (s->lat)
			fputs(" Latency: response time = reply - scheduled "
			      "send (a whole round trip); svc = reply - actual "
			      "post; in usec\n",
			      out);
		return;
	}
	/* Halved or not, the figures must say which they are. */
	if (s->lat)
		fputs(p && p->rtt ? " Latency: full round trip, in usec\n"
				  : " Latency: one-way = round trip / 2, in "
				    "usec\n",
		      out);
}

void cqp_report_human(const struct cqp_report *r, FILE *out)
{
	bool gbits = r->params && r->params->report_gbits;
	struct shape s = cqp_report_shape(r);
	struct line l = {.len = 0};
	size_t width;
	unsigned i, k;
	int label_w = 4;
	char v[64];

	/* With no rows (an early failure) the header still says what
	 * kind of table it would have been. */
	if (!s.bw && !s.lat && !s.event)
		s.bw = true;
	for (i = 0; i < r->nrows; i++)
		label_w = max_int(label_w, (int)strlen(r->rows[i].label));

	if (s.event) {
		line_cell(&l, 6, "side");
		line_cell(&l, label_w, "event");
		line_cell(&l, NUM_W, "count");
		line_cell(&l, NUM_W, "events/s");
	} else {
		if (s.label)
			line_cell(&l, label_w, "mode");
		line_cell(&l, NUM_W, "#bytes");
		line_cell(&l, 11, "#iterations");
	}
	if (s.open) {
		line_cell(&l, NUM_W, "offered/s");
		line_cell(&l, NUM_W, "achieved/s");
		line_cell(&l, 6, "late");
	}
	if (s.bw) {
		line_cell(&l, 15,
			  gbits ? "BW peak[Gb/sec]" : "BW peak[MB/sec]");
		line_cell(&l, 18,
			  gbits ? "BW average[Gb/sec]" : "BW average[MB/sec]");
		line_cell(&l, 13, "MsgRate[Mpps]");
	}
	if (s.delivery) {
		line_cell(&l, 7, "loss%");
		if (s.bw)
			line_cell(&l, 9, "wire eff%");
	}
	if (s.lost)
		line_cell(&l, 7, "lost");
	if (s.lat)
		for (k = 0; k < N_LAT_FIELDS; k++)
			line_cell(&l, max_int(NUM_W, (int)strlen(lat_heads[k])),
				  lat_heads[k]);
	if (s.open && s.lat) {
		line_cell(&l, NUM_W, "svc p50");
		line_cell(&l, NUM_W, "svc p99");
	}
	if (s.client)
		cost_head(&l, "client", &s);
	if (s.server)
		cost_head(&l, "server", &s);

	width = l.len;
	while (width > 0 && l.buf[width - 1] == ' ')
		width--;
	if (width < 80)
		width = 80;
	rule(out, width);
	print_settings(r, &s, out);
	rule(out, width);
	line_emit(&l, out);

	for (i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		l.len = 0;
		if (s.event) {
			line_cell(&l, 6, row->side);
			line_cell(&l, label_w, row->label);
			snprintf(v, sizeof(v), "%" PRIu64, row->count);
			line_cell(&l, NUM_W, v);
			fmt_double(v, sizeof(v), "%.0f", row->rate_per_s);
			line_cell(&l, NUM_W, v);
		} else {
			if (s.label)
				line_cell(&l, label_w,
					  row->label[0] ? row->label : "-");
			snprintf(v, sizeof(v), "%" PRIu64, row->bytes);
			line_cell(&l, NUM_W, v);
			snprintf(v, sizeof(v), "%" PRIu64, row->iterations);
			line_cell(&l, 11, v);
		}
		if (s.open) {
			fmt_double(v, sizeof(v), "%.0f",
				   row->open_loop ? row->offered_rate : NAN);
			line_cell(&l, NUM_W, v);
			fmt_double(v, sizeof(v), "%.0f",
				   row->open_loop ? row->achieved_rate : NAN);
			line_cell(&l, NUM_W, v);
			snprintf(v, sizeof(v), "%" PRIu64, row->late_sends);
			line_cell(&l, 6, row->open_loop ? v : "-");
		}
		if (s.bw) {
			/* MB = 2^20 bytes, as perftest prints. */
			double f = gbits ? 1.0 : 1e9 / 8 / 1048576.0;

			fmt_double(v, sizeof(v), "%.2f",
				   row->has_bw ? row->bw_peak_gbps * f : NAN);
			line_cell(&l, 15, v);
			fmt_double(v, sizeof(v), "%.2f",
				   row->has_bw ? row->bw_avg_gbps * f : NAN);
			line_cell(&l, 18, v);
			fmt_double(v, sizeof(v), "%.6f",
				   row->has_bw ? row->msg_rate_mpps : NAN);
			line_cell(&l, 13, v);
		}
		if (s.delivery) {
			fmt_double(v, sizeof(v), "%.2f", cqp_row_loss_pct(row));
			line_cell(&l, 7, v);
			if (s.bw) {
				fmt_double(
				    v, sizeof(v), "%.1f",
				    row->has_delivery
					? cqp_wire_eff_pct(row->bytes,
							   r->dev.wire_overhead)
					: NAN);
				line_cell(&l, 9, v);
			}
		}
		if (s.lost) {
			if (row->has_lost)
				snprintf(v, sizeof(v), "%" PRIu64, row->lost);
			else
				snprintf(v, sizeof(v), "-");
			line_cell(&l, 7, v);
		}
		if (s.lat)
			for (k = 0; k < N_LAT_FIELDS; k++) {
				fmt_double(
				    v, sizeof(v), "%.2f",
				    row->has_lat
					? cqp_lat_value(&row->lat_us,
							&cqp_lat_fields[k])
					: NAN);
				line_cell(
				    &l,
				    max_int(NUM_W, (int)strlen(lat_heads[k])),
				    v);
			}
		if (s.open && s.lat) {
			fmt_double(v, sizeof(v), "%.2f",
				   row->open_loop ? row->service_lat_us.p50
						  : NAN);
			line_cell(&l, NUM_W, v);
			fmt_double(v, sizeof(v), "%.2f",
				   row->open_loop ? row->service_lat_us.p99
						  : NAN);
			line_cell(&l, NUM_W, v);
		}
		if (s.client)
			cost_cells(&l, &row->client, &s, row);
		if (s.server)
			cost_cells(&l, &row->server, &s, row);
		line_emit(&l, out);
		if (r->params && r->params->histogram && row->hist)
			print_hist(row->hist, out);
	}
	rule(out, width);
	print_noise(r, out);
	print_threads(r, out);
	print_open_loop(r, out);
	print_delivery(r, &s, out);
	print_summary(r, out);
	print_run_cost(r, out);
	print_projection(&r->projection, out);
	print_check(&r->check, out);
	print_strategy(&r->strategy, out);
	if (r->error)
		fprintf(out, "partial results: %s\n", r->error);
}
