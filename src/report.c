#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "error.h"
#include "hwcount.h"
#include "json.h"
#include "perftest.h"
#include "kv.h"

#ifndef CQP_VERSION
#define CQP_VERSION "dev"
#endif

/* ---- one description of the cost record, for JSON, CSV and kv ---- */

enum field_type { FIELD_DOUBLE, FIELD_U64, FIELD_U32, FIELD_BOOL };

static const struct cost_field {
	const char *key;
	enum field_type type;
	size_t offset;
	/* An optional figure exists only when the bool at `present` is
	 * set: older peers and runs that skip it send no key at all. */
	bool optional;
	size_t present;
} cost_fields[] = {
#define REQ(key, type, member)                                                 \
	{                                                                      \
		key, type, offsetof(struct cqp_cost, member), false, 0         \
	}
#define OPT(key, type, member, flag)                                           \
	{                                                                      \
		key, type, offsetof(struct cqp_cost, member), true,            \
		    offsetof(struct cqp_cost, flag)                            \
	}
    REQ("cpu_pct", FIELD_DOUBLE, cpu_pct),
    REQ("seconds", FIELD_DOUBLE, seconds),
    REQ("cpu_user_pct", FIELD_DOUBLE, cpu_user_pct),
    REQ("cpu_sys_pct", FIELD_DOUBLE, cpu_sys_pct),
    REQ("proc_cpu_pct", FIELD_DOUBLE, proc_cpu_pct),
    OPT("sys_busy_pct", FIELD_DOUBLE, sys_busy_pct, has_sys),
    OPT("sys_irq_pct", FIELD_DOUBLE, sys_irq_pct, has_sys),
    OPT("sys_softirq_pct", FIELD_DOUBLE, sys_softirq_pct, has_sys),
    OPT("sys_kthread_pct", FIELD_DOUBLE, sys_kthread_pct, has_sys),
    OPT("others_busy_pct", FIELD_DOUBLE, others_busy_pct, has_sys),
    OPT("noisy", FIELD_BOOL, noisy, has_sys),
    OPT("cpu_irq_pct", FIELD_DOUBLE, cpu_irq_pct, has_cpu),
    OPT("cpu_softirq_pct", FIELD_DOUBLE, cpu_softirq_pct, has_cpu),
    REQ("completions", FIELD_U64, completions),
    REQ("polls", FIELD_U64, polls),
    REQ("empty_polls", FIELD_U64, empty_polls),
    REQ("wakeups", FIELD_U64, wakeups),
    REQ("events_acked", FIELD_U64, events_acked),
    REQ("spin_completions", FIELD_U64, spin_completions),
    REQ("sleep_completions", FIELD_U64, sleep_completions),
    OPT("idle_cpu_pct", FIELD_DOUBLE, idle_cpu_pct, has_idle),
    OPT("idle_cpu_user_pct", FIELD_DOUBLE, idle_cpu_user_pct, has_idle),
    OPT("idle_cpu_sys_pct", FIELD_DOUBLE, idle_cpu_sys_pct, has_idle),
    OPT("rx_mem_bytes", FIELD_U64, rx_mem_bytes, has_rx_mem),
    REQ("channels", FIELD_U64, channels),
    OPT("foreign_completions", FIELD_U64, foreign_completions, has_shared),
    OPT("lock_waits", FIELD_U64, lock_waits, has_shared),
    OPT("lock_wait_us", FIELD_DOUBLE, lock_wait_us, has_shared),
#undef REQ
#undef OPT
};
#define N_COST_FIELDS (sizeof(cost_fields) / sizeof(cost_fields[0]))

static double field_double(const struct cqp_cost *c, const struct cost_field *f)
{
	return *(const double *)((const char *)c + f->offset);
}

static uint64_t field_u64(const struct cqp_cost *c, const struct cost_field *f)
{
	const char *v = (const char *)c + f->offset;

	return f->type == FIELD_BOOL ? *(const bool *)v : *(const uint64_t *)v;
}

static bool field_present(const struct cqp_cost *c, const struct cost_field *f)
{
	return !f->optional || *(const bool *)((const char *)c + f->present);
}

/* Derived figures: NaN when undefined, which JSON renders as null and
 * the other formats as "-" or an empty cell. */
static double compl_per_wakeup(const struct cqp_cost *c,
			       const struct cqp_row *row)
{
	(void)row;
	return c->wakeups ? (double)c->completions / (double)c->wakeups : NAN;
}

/* Per message (bandwidth) or exchange (latency) of the row. */
static double wakeups_per_msg(const struct cqp_cost *c,
			      const struct cqp_row *row)
{
	return row && row->iterations
		   ? (double)c->wakeups / (double)row->iterations
		   : NAN;
}

static double wakeups_per_s(const struct cqp_cost *c, const struct cqp_row *row)
{
	(void)row;
	return c->seconds > 0 ? (double)c->wakeups / c->seconds : NAN;
}

/* Hybrid: the share of completions caught while spinning rather than
 * after sleeping. */
static double spin_pct(const struct cqp_cost *c, const struct cqp_row *row)
{
	uint64_t all = c->spin_completions + c->sleep_completions;

	(void)row;
	return all ? 100.0 * (double)c->spin_completions / (double)all : NAN;
}

/* Nanoseconds of share_pct (of one core, over the side's window) per
 * message or exchange of the row. */
static double ns_per_msg(const struct cqp_cost *c, const struct cqp_row *row,
			 double share_pct)
{
	if (!row || !row->iterations)
		return NAN;
	return share_pct / 100.0 * c->seconds * 1e9 / (double)row->iterations;
}

static double cpu_ns_per_msg(const struct cqp_cost *c,
			     const struct cqp_row *row)
{
	return ns_per_msg(c, row, c->cpu_pct);
}

/* Softirq of the whole machine: on rxe the data path itself. */
static double softirq_ns_per_msg(const struct cqp_cost *c,
				 const struct cqp_row *row)
{
	return c->has_sys ? ns_per_msg(c, row, c->sys_softirq_pct) : NAN;
}

/* All the kernel's work outside processes: irq, softirq and kernel
 * threads (ksoftirqd's ticks in softirq may count in two of them). */
static double kernel_ns_per_msg(const struct cqp_cost *c,
				const struct cqp_row *row)
{
	return c->has_sys ? ns_per_msg(c, row,
				       c->sys_irq_pct + c->sys_softirq_pct +
					   c->sys_kthread_pct)
			  : NAN;
}

/* The derived figures, in JSON and CSV (never sent: the receiver
 * computes them from the raw ones). */
static const struct derived_field {
	const char *key;
	double (*value)(const struct cqp_cost *c, const struct cqp_row *row);
} derived_fields[] = {
    {"compl_per_wakeup", compl_per_wakeup},
    {"wakeups_per_s", wakeups_per_s},
    {"wakeups_per_msg", wakeups_per_msg},
    {"spin_pct", spin_pct},
    {"cpu_ns_per_msg", cpu_ns_per_msg},
    {"softirq_ns_per_msg", softirq_ns_per_msg},
    {"kernel_ns_per_msg", kernel_ns_per_msg},
};
#define N_DERIVED_FIELDS (sizeof(derived_fields) / sizeof(derived_fields[0]))

/* ---- the load projection as named fields ---- */

enum proj_need { NEED_RATE = 1u << 0, NEED_COST = 1u << 1 };

static const struct proj_field {
	const char *key;
	enum field_type type;
	size_t offset;
	unsigned need; /* enum proj_need: unknown without it */
} proj_fields[] = {
    {"rate_bps", FIELD_U64, offsetof(struct cqp_projection, rate_bps),
     NEED_RATE},
    {"bytes", FIELD_U64, offsetof(struct cqp_projection, bytes), NEED_RATE},
    {"batch", FIELD_U32, offsetof(struct cqp_projection, batch), NEED_RATE},
    {"compl_per_s", FIELD_DOUBLE, offsetof(struct cqp_projection, compl_per_s),
     NEED_RATE},
    {"wakeups_per_s", FIELD_DOUBLE,
     offsetof(struct cqp_projection, wakeups_per_s), NEED_RATE},
    {"wakeup_cost_us", FIELD_DOUBLE,
     offsetof(struct cqp_projection, wakeup_cost_us), NEED_COST},
    {"core_pct", FIELD_DOUBLE, offsetof(struct cqp_projection, core_pct),
     NEED_RATE | NEED_COST},
};
#define N_PROJ_FIELDS (sizeof(proj_fields) / sizeof(proj_fields[0]))

/* A projection may hold only the wakeup cost (no --project), or only
 * the rates (no event-mode row to cost a wakeup). */
static bool proj_known(const struct cqp_projection *pr,
		       const struct proj_field *f)
{
	unsigned have =
	    (pr->rate_bps ? NEED_RATE : 0u) | (pr->have_cost ? NEED_COST : 0u);

	return (f->need & have) == f->need;
}

/* ---- the latency summary as named fields ---- */

static const struct lat_field {
	const char *key;
	size_t offset;
} lat_fields[] = {
    {"min", offsetof(struct cqp_summary, min)},
    {"p50", offsetof(struct cqp_summary, p50)},
    {"avg", offsetof(struct cqp_summary, avg)},
    {"stdev", offsetof(struct cqp_summary, stdev)},
    {"p99", offsetof(struct cqp_summary, p99)},
    {"p99_9", offsetof(struct cqp_summary, p99_9)},
    {"p99_99", offsetof(struct cqp_summary, p99_99)},
    {"max", offsetof(struct cqp_summary, max)},
};
#define N_LAT_FIELDS (sizeof(lat_fields) / sizeof(lat_fields[0]))

static double lat_value(const struct cqp_summary *s, const struct lat_field *f)
{
	return *(const double *)((const char *)s + f->offset);
}

/* What the rows hold, so that every format shows the same columns. */
struct shape {
	bool label, bw, lat, client, server;
	bool idle;     /* some side of some row measured idle CPU */
	bool rx_mem;   /* some side of some row reported receive memory */
	bool delivery; /* UD: sent against received */
	bool lost;     /* ud_send_lat: lost exchanges */
	bool open;     /* open loop (--rate): rates, late sends, service */
	bool event;    /* cm_event_stress: rows are event types */
	bool field[N_COST_FIELDS]; /* some side of some row has the figure */
};

static struct shape report_shape(const struct cqp_report *r)
{
	struct shape s = {0};
	unsigned i;

	for (i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		for (size_t k = 0; k < N_COST_FIELDS; k++)
			s.field[k] |=
			    (row->client.valid &&
			     field_present(&row->client, &cost_fields[k])) ||
			    (row->server.valid &&
			     field_present(&row->server, &cost_fields[k]));

		s.label |= row->label[0] != '\0';
		s.bw |= row->has_bw;
		s.lat |= row->has_lat;
		s.client |= row->client.valid;
		s.server |= row->server.valid;
		s.idle |= (row->client.valid && row->client.has_idle) ||
			  (row->server.valid && row->server.has_idle);
		s.rx_mem |= (row->client.valid && row->client.has_rx_mem) ||
			    (row->server.valid && row->server.has_rx_mem);
		s.delivery |= row->has_delivery;
		s.lost |= row->has_lost;
		s.open |= row->open_loop;
		s.event |= row->side[0] != '\0';
	}
	return s;
}

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
	fmt_double(v, sizeof(v), "%.0f", ok ? softirq_ns_per_msg(c, row) : NAN);
	line_cell(l, SIRQ_W, v);
	fmt_double(v, sizeof(v), "%.0f", ok ? kernel_ns_per_msg(c, row) : NAN);
	line_cell(l, SIRQ_W, v);
	fmt_double(v, sizeof(v), "%.2f", ok ? compl_per_wakeup(c, row) : NAN);
	line_cell(l, NUM_W, v);
	fmt_double(v, sizeof(v), "%.0f", ok ? wakeups_per_s(c, row) : NAN);
	line_cell(l, NUM_W, v);
	if (s->lat) {
		fmt_double(v, sizeof(v), "%.3f",
			   ok ? wakeups_per_msg(c, row) : NAN);
		line_cell(l, NUM_W, v);
		/* Only a ping-pong says which way each completion came. */
		fmt_double(v, sizeof(v), "%.1f",
			   ok && row->has_lat ? spin_pct(c, row) : NAN);
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

double cqp_row_loss_pct(const struct cqp_row *row)
{
	double want;

	if (!row->has_delivery || !row->sent)
		return NAN;
	want = (double)row->sent * (double)(row->fanout ? row->fanout : 1);
	return 100.0 * (want - (double)row->received) / want;
}

double cqp_wire_eff_pct(uint64_t bytes, uint32_t overhead)
{
	if (!overhead)
		return NAN;
	return 100.0 * (double)bytes / ((double)bytes + overhead);
}

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

static const char *chosen_mode(const struct cqp_choice *c)
{
	return c->mode[c->chosen].mode;
}

/* Where the choice changes from the previous rate of the same size. */
static bool crossover(const struct cqp_strategy *st, unsigned i)
{
	return i > 0 && st->c[i - 1].bytes == st->c[i].bytes &&
	       strcmp(chosen_mode(&st->c[i - 1]), chosen_mode(&st->c[i])) != 0;
}

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
			c->offered_rate, chosen_mode(c),
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
		if (crossover(st, i))
			fprintf(out,
				" Crossover: %s up to %.0f/s, %s from %.0f/s\n",
				chosen_mode(&st->c[i - 1]),
				st->c[i - 1].offered_rate,
				chosen_mode(&st->c[i]), st->c[i].offered_rate);
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

static void print_human(const struct cqp_report *r, FILE *out)
{
	bool gbits = r->params && r->params->report_gbits;
	struct shape s = report_shape(r);
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
				fmt_double(v, sizeof(v), "%.2f",
					   row->has_lat
					       ? lat_value(&row->lat_us,
							   &lat_fields[k])
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

/* ---- JSON ---- */

static void json_hw(struct cqp_json *j, const struct cqp_hw_counters *hw)
{
	cqp_json_obj_begin(j, "hw_counters");
	for (unsigned i = 0; i < hw->n; i++)
		cqp_json_u64(j, hw->c[i].name, hw->c[i].value);
	cqp_json_obj_end(j);
}

static void json_cost(struct cqp_json *j, const char *key,
		      const struct cqp_cost *c, const struct cqp_row *row,
		      const struct cqp_hw_counters *hw)
{
	size_t i;

	cqp_json_obj_begin(j, key);
	for (i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cost_fields[i];

		if (!field_present(c, f))
			continue;
		if (f->type == FIELD_DOUBLE)
			cqp_json_double(j, f->key, field_double(c, f));
		else if (f->type == FIELD_BOOL)
			cqp_json_bool(j, f->key, field_u64(c, f) != 0);
		else
			cqp_json_u64(j, f->key, field_u64(c, f));
	}
	for (i = 0; i < N_DERIVED_FIELDS; i++)
		cqp_json_double(j, derived_fields[i].key,
				derived_fields[i].value(c, row));
	if (hw)
		json_hw(j, hw);
	if (c->nthreads) {
		cqp_json_arr_begin(j, "threads");
		for (unsigned t = 0; t < c->nthreads; t++) {
			const struct cqp_thread_cost *tc = &c->threads[t];

			cqp_json_obj_begin(j, NULL);
			cqp_json_i64(j, "cpu", tc->cpu);
			cqp_json_u64(j, "completions", tc->completions);
			cqp_json_u64(j, "wakeups", tc->wakeups);
			cqp_json_double(j, "cpu_pct", tc->cpu_pct);
			cqp_json_double(j, "cpu_user_pct", tc->cpu_user_pct);
			cqp_json_double(j, "cpu_sys_pct", tc->cpu_sys_pct);
			cqp_json_u64(j, "foreign_completions",
				     tc->foreign_completions);
			cqp_json_double(j, "lock_wait_us", tc->lock_wait_us);
			cqp_json_obj_end(j);
		}
		cqp_json_arr_end(j);
	}
	cqp_json_obj_end(j);
}

/* Only the buckets holding samples, at their exact bounds. */
static void json_hist(struct cqp_json *j, const struct cqp_hist *h)
{
	uint64_t lo, width;
	unsigned i;

	cqp_json_arr_begin(j, "histogram");
	for (i = 0; i < CQP_HIST_BUCKETS; i++) {
		if (!h->count[i])
			continue;
		cqp_hist_bucket_range(i, &lo, &width);
		cqp_json_obj_begin(j, NULL);
		cqp_json_double(j, "lo_us", (double)lo / 1e3);
		cqp_json_double(j, "hi_us", ((double)lo + (double)width) / 1e3);
		cqp_json_u64(j, "count", h->count[i]);
		cqp_json_obj_end(j);
	}
	cqp_json_arr_end(j);
}

static double proj_double(const struct cqp_projection *pr,
			  const struct proj_field *f)
{
	return *(const double *)((const char *)pr + f->offset);
}

static uint64_t proj_uint(const struct cqp_projection *pr,
			  const struct proj_field *f)
{
	const char *v = (const char *)pr + f->offset;

	return f->type == FIELD_U32 ? *(const uint32_t *)v
				    : *(const uint64_t *)v;
}

/* Every key always there, null when unknown: a stable schema. */
static void json_projection(struct cqp_json *j, const struct cqp_projection *pr)
{
	size_t i;

	cqp_json_obj_begin(j, "projection");
	for (i = 0; i < N_PROJ_FIELDS; i++) {
		const struct proj_field *f = &proj_fields[i];

		if (!proj_known(pr, f))
			cqp_json_null(j, f->key);
		else if (f->type == FIELD_DOUBLE)
			cqp_json_double(j, f->key, proj_double(pr, f));
		else
			cqp_json_u64(j, f->key, proj_uint(pr, f));
	}
	cqp_json_obj_end(j);
}

static void json_figure(struct cqp_json *j, const struct cqp_figure *f)
{
	if (f->integer && f->value >= 0)
		cqp_json_u64(j, f->key, (uint64_t)f->value);
	else
		cqp_json_double(j, f->key, f->value);
}

static void json_summary(struct cqp_json *j, const struct cqp_report *r)
{
	unsigned i = 0;

	cqp_json_obj_begin(j, "summary");
	while (i < r->nsummary) {
		const char *g = r->summary[i].group;

		if (!g[0]) {
			json_figure(j, &r->summary[i++]);
			continue;
		}
		cqp_json_obj_begin(j, g);
		while (i < r->nsummary && strcmp(r->summary[i].group, g) == 0)
			json_figure(j, &r->summary[i++]);
		cqp_json_obj_end(j);
	}
	cqp_json_obj_end(j);
}

static void json_strategy(struct cqp_json *j, const struct cqp_strategy *st)
{
	cqp_json_arr_begin(j, "strategy");
	for (unsigned i = 0; i < st->n; i++) {
		const struct cqp_choice *c = &st->c[i];

		cqp_json_obj_begin(j, NULL);
		cqp_json_double(j, "offered_rate", c->offered_rate);
		cqp_json_u64(j, "bytes", c->bytes);
		cqp_json_str(j, "choice", chosen_mode(c));
		cqp_json_double(j, "p99_us", c->mode[c->chosen].p99_us);
		cqp_json_double(j, "server_cpu_pct",
				c->mode[c->chosen].server_cpu_pct);
		cqp_json_arr_begin(j, "modes");
		for (unsigned k = 0; k < c->n; k++) {
			cqp_json_obj_begin(j, NULL);
			cqp_json_str(j, "mode", c->mode[k].mode);
			cqp_json_double(j, "p99_us", c->mode[k].p99_us);
			cqp_json_double(j, "server_cpu_pct",
					c->mode[k].server_cpu_pct);
			cqp_json_obj_end(j);
		}
		cqp_json_arr_end(j);
		cqp_json_obj_end(j);
	}
	cqp_json_arr_end(j);
	cqp_json_arr_begin(j, "crossovers");
	for (unsigned i = 0; i < st->n; i++) {
		if (!crossover(st, i))
			continue;
		cqp_json_obj_begin(j, NULL);
		cqp_json_double(j, "offered_rate", st->c[i].offered_rate);
		cqp_json_u64(j, "bytes", st->c[i].bytes);
		cqp_json_str(j, "from", chosen_mode(&st->c[i - 1]));
		cqp_json_str(j, "to", chosen_mode(&st->c[i]));
		cqp_json_obj_end(j);
	}
	cqp_json_arr_end(j);
}

static void json_lat(struct cqp_json *j, const char *key,
		     const struct cqp_summary *s)
{
	cqp_json_obj_begin(j, key);
	for (size_t k = 0; k < N_LAT_FIELDS; k++)
		cqp_json_double(j, lat_fields[k].key,
				lat_value(s, &lat_fields[k]));
	cqp_json_obj_end(j);
}

static void json_params(struct cqp_json *j, const struct cqp_report *r)
{
	const struct cqp_params *p = r->params;
	const struct cqp_option *o;
	char key[64], val[320];
	size_t i;

	cqp_json_obj_begin(j, "params");
	for (o = p ? cqp_options : NULL; o && o->name; o++) {
		const char *field = (const char *)p + o->offset;

		if (!(o->tools & r->tool) || o->type == CQP_OPT_HELP ||
		    o->type == CQP_OPT_VERSION)
			continue;
		/* Option names are short; a longer one is truncated. */
		snprintf(key, sizeof(key), "%s", o->name);
		for (i = 0; key[i]; i++)
			if (key[i] == '-')
				key[i] = '_';
		switch (o->type) {
		case CQP_OPT_FLAG:
			cqp_json_bool(j, key, *(const bool *)field);
			break;
		case CQP_OPT_U32:
			cqp_json_u64(j, key, *(const uint32_t *)field);
			break;
		case CQP_OPT_I32:
			cqp_json_i64(j, key, *(const int32_t *)field);
			break;
		case CQP_OPT_U64:
		case CQP_OPT_SIZE:
		case CQP_OPT_RATE:
			cqp_json_u64(j, key, *(const uint64_t *)field);
			break;
		case CQP_OPT_SPINS:
			/* One budget: a number, as it always was. */
			if (p->nspin <= 1) {
				cqp_json_u64(j, key, p->spin_us);
				break;
			}
			cqp_json_arr_begin(j, key);
			for (uint32_t k = 0; k < p->nspin; k++)
				cqp_json_u64(j, NULL, p->spin_list[k]);
			cqp_json_arr_end(j);
			break;
		case CQP_OPT_CPUS:
			/* One CPU (or none, -1): a number, as it always was. */
			if (p->ncpu <= 1) {
				cqp_json_i64(j, key, p->cpu);
				break;
			}
			cqp_json_arr_begin(j, key);
			for (uint32_t k = 0; k < p->ncpu; k++)
				cqp_json_i64(j, NULL, p->cpus[k]);
			cqp_json_arr_end(j);
			break;
		case CQP_OPT_CQMOD:
			cqp_json_obj_begin(j, key);
			cqp_json_u64(j, "count", p->cq_mod_count);
			cqp_json_u64(j, "usec", p->cq_mod_usec);
			cqp_json_obj_end(j);
			break;
		case CQP_OPT_ENUM:
		case CQP_OPT_STR:
		default:
			cqp_option_format(o, p, val, sizeof(val));
			cqp_json_str(j, key, val);
			break;
		}
	}
	cqp_json_obj_end(j);
}

/* This side's timestamp source (clock.h). */
static void json_clock(struct cqp_json *j)
{
	struct cqp_clock_info ci;

	cqp_clock_get(&ci);
	cqp_json_obj_begin(j, "clock");
	cqp_json_str(j, "source", ci.tsc ? "tsc" : "monotonic");
	cqp_json_double(j, "hz", ci.hz);
	cqp_json_bool(j, "invariant_tsc", ci.invariant_tsc);
	cqp_json_obj_end(j);
}

static void print_json(const struct cqp_report *r, FILE *out)
{
	const struct cqp_device_info *d = &r->dev;
	struct cqp_json j;
	unsigned i;

	cqp_json_init(&j, out, true);
	cqp_json_obj_begin(&j, NULL);
	cqp_json_str(&j, "schema", CQP_SCHEMA);
	cqp_json_str(&j, "tool", cqp_tool_name(r->tool));
	cqp_json_str(&j, "version", CQP_VERSION);
	cqp_json_str(&j, "role", r->is_client ? "client" : "server");
	if (r->title)
		cqp_json_str(&j, "title", r->title);
	json_params(&j, r);

	cqp_json_obj_begin(&j, "device");
	cqp_json_str(&j, "name", d->name);
	cqp_json_u64(&j, "port", d->port);
	cqp_json_i64(&j, "gid_index", d->gid_index);
	cqp_json_u64(&j, "active_mtu", d->active_mtu);
	cqp_json_str(&j, "link_layer", d->link_layer);
	cqp_json_str(&j, "gid", d->gid);
	if (d->gid_type[0])
		cqp_json_str(&j, "gid_type", d->gid_type);
	if (d->path_mtu) {
		cqp_json_u64(&j, "path_mtu", d->path_mtu);
		cqp_json_str(&j, "addressing", d->grh ? "GRH" : "LID");
	}
	if (d->has_inline)
		cqp_json_u64(&j, "inline_bytes", d->inline_size);
	if (d->comp_vectors)
		cqp_json_u64(&j, "comp_vectors", d->comp_vectors);
	if (d->wire_overhead) {
		cqp_json_str(&j, "wire", d->wire);
		cqp_json_u64(&j, "wire_overhead_bytes", d->wire_overhead);
	}
	cqp_json_obj_end(&j);
	json_clock(&j);

	cqp_json_arr_begin(&j, "results");
	for (i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		cqp_json_obj_begin(&j, NULL);
		if (row->side[0]) {
			cqp_json_str(&j, "side", row->side);
			cqp_json_str(&j, "event", row->label);
			cqp_json_u64(&j, "count", row->count);
			cqp_json_double(&j, "rate_per_s", row->rate_per_s);
		} else {
			if (row->label[0])
				cqp_json_str(&j, "label", row->label);
			cqp_json_u64(&j, "bytes", row->bytes);
			cqp_json_u64(&j, "iterations", row->iterations);
		}
		if (row->has_bw) {
			cqp_json_double(&j, "bw_peak_gbps", row->bw_peak_gbps);
			cqp_json_double(&j, "bw_avg_gbps", row->bw_avg_gbps);
			cqp_json_double(&j, "msg_rate_mpps",
					row->msg_rate_mpps);
		}
		if (row->has_delivery) {
			cqp_json_u64(&j, "sent", row->sent);
			cqp_json_u64(&j, "received", row->received);
			cqp_json_double(&j, "loss_pct", cqp_row_loss_pct(row));
			cqp_json_u64(&j, "rx_dry", row->rx_dry);
			if (row->fanout > 1)
				cqp_json_u64(&j, "fanout", row->fanout);
			if (row->has_bw)
				cqp_json_double(
				    &j, "wire_eff_pct",
				    cqp_wire_eff_pct(row->bytes,
						     r->dev.wire_overhead));
		}
		if (row->has_lost)
			cqp_json_u64(&j, "lost_exchanges", row->lost);
		if (row->has_lat)
			json_lat(&j, "lat_us", &row->lat_us);
		if (row->open_loop) {
			cqp_json_double(&j, "offered_rate", row->offered_rate);
			cqp_json_double(&j, "achieved_rate",
					row->achieved_rate);
			cqp_json_u64(&j, "late_sends", row->late_sends);
			cqp_json_double(&j, "arrival_cv", row->arrival_cv);
			if (row->has_lat)
				json_lat(&j, "service_lat_us",
					 &row->service_lat_us);
		}
		if (r->params && r->params->histogram && row->hist)
			json_hist(&j, row->hist);
		if (row->client.valid)
			json_cost(&j, "client", &row->client, row,
				  row->hw_client);
		if (row->server.valid)
			json_cost(&j, "server", &row->server, row,
				  row->hw_server);
		cqp_json_obj_end(&j);
	}
	cqp_json_arr_end(&j);
	if (r->projection.valid)
		json_projection(&j, &r->projection);
	if (r->check.valid) {
		cqp_json_obj_begin(&j, "projection_check");
		cqp_json_double(&j, "rate", r->check.rate);
		cqp_json_double(&j, "wakeup_cost_us", r->check.wakeup_cost_us);
		cqp_json_double(&j, "model_wakeups_per_s",
				r->check.model_wakeups_per_s);
		cqp_json_double(&j, "measured_wakeups_per_s",
				r->check.measured_wakeups_per_s);
		cqp_json_double(&j, "model_cpu_pct", r->check.model_cpu_pct);
		cqp_json_double(&j, "measured_cpu_pct",
				r->check.measured_cpu_pct);
		cqp_json_obj_end(&j);
	}
	if (r->strategy.n)
		json_strategy(&j, &r->strategy);
	if (r->nsummary)
		json_summary(&j, r);
	if (r->run_client.valid || r->run_server.valid) {
		cqp_json_obj_begin(&j, "cost");
		if (r->run_client.valid)
			json_cost(&j, "client", &r->run_client, NULL, NULL);
		if (r->run_server.valid)
			json_cost(&j, "server", &r->run_server, NULL, NULL);
		cqp_json_obj_end(&j);
	}
	if (r->error)
		cqp_json_str(&j, "error", r->error);
	cqp_json_obj_end(&j);
	cqp_json_finish(&j);
}

/* ---- CSV ---- */

static void csv_double(FILE *out, double v)
{
	char buf[64], *c;

	/* Unknown stays an empty cell, which CSV readers take as missing. */
	if (!isfinite(v))
		return;
	snprintf(buf, sizeof(buf), "%.9g", v);
	for (c = buf; *c; c++)
		if (*c == ',')
			*c = '.';
	fputs(buf, out);
}

/* RFC 4180: quote a cell holding a separator, quote or line break. */
static void csv_text(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_cost_head(FILE *out, const char *side, const struct shape *s)
{
	size_t i;

	for (i = 0; i < N_COST_FIELDS; i++)
		if (s->field[i])
			fprintf(out, ",%s_%s", side, cost_fields[i].key);
	for (i = 0; i < N_DERIVED_FIELDS; i++)
		fprintf(out, ",%s_%s", side, derived_fields[i].key);
}

/* One figure of the cost record as CSV writes it. */
static void csv_field(FILE *out, const struct cqp_cost *c,
		      const struct cost_field *f)
{
	if (f->type == FIELD_DOUBLE)
		csv_double(out, field_double(c, f));
	else if (f->type == FIELD_BOOL)
		fputs(field_u64(c, f) ? "true" : "false", out);
	else
		fprintf(out, "%" PRIu64, field_u64(c, f));
}

static void csv_cost(FILE *out, const struct cqp_cost *c, const struct shape *s,
		     const struct cqp_row *row)
{
	size_t i;

	for (i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cost_fields[i];

		if (!s->field[i])
			continue;
		fputc(',', out);
		if (c->valid && field_present(c, f))
			csv_field(out, c, f);
	}
	for (i = 0; i < N_DERIVED_FIELDS; i++) {
		fputc(',', out);
		if (c->valid)
			csv_double(out, derived_fields[i].value(c, row));
	}
}

/* A comment line, so the table stays one shape; unknown is empty. */
static void csv_projection(FILE *out, const struct cqp_projection *pr)
{
	size_t i;

	fputs("# projection:", out);
	for (i = 0; i < N_PROJ_FIELDS; i++) {
		const struct proj_field *f = &proj_fields[i];

		fprintf(out, " %s=", f->key);
		if (!proj_known(pr, f))
			continue;
		if (f->type == FIELD_DOUBLE)
			csv_double(out, proj_double(pr, f));
		else
			fprintf(out, "%" PRIu64, proj_uint(pr, f));
	}
	fputc('\n', out);
}

/* A run-wide cost as a comment line: "# cost.client: cpu_pct=...". */
static void csv_run_cost(FILE *out, const char *side, const struct cqp_cost *c)
{
	if (!c->valid)
		return;
	fprintf(out, "# cost.%s:", side);
	for (size_t i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cost_fields[i];

		if (!field_present(c, f))
			continue;
		fprintf(out, " %s=", f->key);
		csv_field(out, c, f);
	}
	fputc('\n', out);
}

static void csv_open_loop(FILE *out, const struct cqp_row *row, bool lat)
{
	if (!row->open_loop) {
		for (size_t k = 0; k < 4 + (lat ? N_LAT_FIELDS : 0); k++)
			fputc(',', out);
		return;
	}
	fputc(',', out);
	csv_double(out, row->offered_rate);
	fputc(',', out);
	csv_double(out, row->achieved_rate);
	fprintf(out, ",%" PRIu64 ",", row->late_sends);
	csv_double(out, row->arrival_cv);
	for (size_t k = 0; lat && k < N_LAT_FIELDS; k++) {
		fputc(',', out);
		csv_double(out,
			   lat_value(&row->service_lat_us, &lat_fields[k]));
	}
}

static void print_csv(const struct cqp_report *r, FILE *out)
{
	struct shape s = report_shape(r);
	unsigned i;
	size_t k;
	const char *e;

	if (s.event)
		fputs("side,event,count,rate_per_s", out);
	else if (s.label)
		fputs("label,", out);
	if (!s.event)
		fputs("bytes,iterations", out);
	if (s.bw)
		fputs(",bw_peak_gbps,bw_avg_gbps,msg_rate_mpps", out);
	if (s.delivery)
		fputs(",sent,received,loss_pct,rx_dry,wire_eff_pct", out);
	if (s.lost)
		fputs(",lost_exchanges", out);
	if (s.lat)
		for (k = 0; k < N_LAT_FIELDS; k++)
			fprintf(out, ",lat_us_%s", lat_fields[k].key);
	if (s.open) {
		fputs(",offered_rate,achieved_rate,late_sends,arrival_cv", out);
		for (k = 0; s.lat && k < N_LAT_FIELDS; k++)
			fprintf(out, ",service_lat_us_%s", lat_fields[k].key);
	}
	if (s.client)
		csv_cost_head(out, "client", &s);
	if (s.server)
		csv_cost_head(out, "server", &s);
	fputc('\n', out);

	for (i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		if (s.event) {
			fprintf(out, "%s,", row->side);
			csv_text(out, row->label);
			fprintf(out, ",%" PRIu64 ",", row->count);
			csv_double(out, row->rate_per_s);
		} else {
			if (s.label) {
				csv_text(out, row->label);
				fputc(',', out);
			}
			fprintf(out, "%" PRIu64 ",%" PRIu64, row->bytes,
				row->iterations);
		}
		if (s.bw) {
			fputc(',', out);
			csv_double(out, row->has_bw ? row->bw_peak_gbps : NAN);
			fputc(',', out);
			csv_double(out, row->has_bw ? row->bw_avg_gbps : NAN);
			fputc(',', out);
			csv_double(out, row->has_bw ? row->msg_rate_mpps : NAN);
		}
		if (s.delivery) {
			if (row->has_delivery)
				fprintf(out, ",%" PRIu64 ",%" PRIu64 ",",
					row->sent, row->received);
			else
				fputs(",,,", out);
			csv_double(out, cqp_row_loss_pct(row));
			fputc(',', out);
			if (row->has_delivery)
				fprintf(out, "%" PRIu64, row->rx_dry);
			fputc(',', out);
			csv_double(out,
				   row->has_delivery && row->has_bw
				       ? cqp_wire_eff_pct(row->bytes,
							  r->dev.wire_overhead)
				       : NAN);
		}
		if (s.lost) {
			fputc(',', out);
			if (row->has_lost)
				fprintf(out, "%" PRIu64, row->lost);
		}
		if (s.lat)
			for (k = 0; k < N_LAT_FIELDS; k++) {
				fputc(',', out);
				if (row->has_lat)
					csv_double(out,
						   lat_value(&row->lat_us,
							     &lat_fields[k]));
			}
		if (s.open)
			csv_open_loop(out, row, s.lat);
		if (s.client)
			csv_cost(out, &row->client, &s, row);
		if (s.server)
			csv_cost(out, &row->server, &s, row);
		fputc('\n', out);
	}
	if (r->projection.valid)
		csv_projection(out, &r->projection);
	if (r->check.valid) {
		fprintf(out, "# projection_check: rate=");
		csv_double(out, r->check.rate);
		fputs(" model_wakeups_per_s=", out);
		csv_double(out, r->check.model_wakeups_per_s);
		fputs(" measured_wakeups_per_s=", out);
		csv_double(out, r->check.measured_wakeups_per_s);
		fputs(" model_cpu_pct=", out);
		csv_double(out, r->check.model_cpu_pct);
		fputs(" measured_cpu_pct=", out);
		csv_double(out, r->check.measured_cpu_pct);
		fputc('\n', out);
	}
	for (unsigned k2 = 0; k2 < r->strategy.n; k2++) {
		const struct cqp_choice *c = &r->strategy.c[k2];

		fprintf(out,
			"# strategy: offered_rate=%.0f bytes=%" PRIu64
			" choice=%s p99_us=",
			c->offered_rate, c->bytes, chosen_mode(c));
		csv_double(out, c->mode[c->chosen].p99_us);
		fputs(" server_cpu_pct=", out);
		csv_double(out, c->mode[c->chosen].server_cpu_pct);
		fputc('\n', out);
	}
	if (r->nsummary) {
		fputs("# summary:", out);
		for (unsigned k2 = 0; k2 < r->nsummary; k2++) {
			const struct cqp_figure *f = &r->summary[k2];

			fprintf(out, " %s%s%s=", f->group,
				f->group[0] ? "." : "", f->key);
			csv_double(out, f->value);
		}
		fputc('\n', out);
	}
	csv_run_cost(out, "client", &r->run_client);
	csv_run_cost(out, "server", &r->run_server);
	if (r->error) {
		/* One comment line whatever the message holds. */
		fputs("# error: ", out);
		for (e = r->error; *e; e++)
			fputc((unsigned char)*e < 0x20 ? ' ' : *e, out);
		fputc('\n', out);
	}
}

/* The latency summary as kv keys PREFIXlat_us_min ... PREFIXlat_us_max. */
static void lat_encode_as(const struct cqp_summary *s, const char *prefix,
			  struct cqp_kv_writer *w)
{
	char key[64];

	for (unsigned i = 0; i < N_LAT_FIELDS; i++) {
		snprintf(key, sizeof(key), "%slat_us_%s", prefix,
			 lat_fields[i].key);
		cqp_kv_add_double(w, key, lat_value(s, &lat_fields[i]));
	}
}

static int lat_decode_as(struct cqp_summary *s, const char *prefix,
			 const char *text, size_t len)
{
	char key[64];

	for (unsigned i = 0; i < N_LAT_FIELDS; i++) {
		int rc;

		snprintf(key, sizeof(key), "%slat_us_%s", prefix,
			 lat_fields[i].key);
		rc = cqp_kv_get_double(
		    text, len, key,
		    (double *)((char *)s + lat_fields[i].offset));
		if (rc < 0)
			return rc;
	}
	return 0;
}

void cqp_lat_encode(const struct cqp_summary *s, struct cqp_kv_writer *w)
{
	lat_encode_as(s, "", w);
}

int cqp_lat_decode(struct cqp_summary *s, const char *text, size_t len)
{
	return lat_decode_as(s, "", text, len);
}

static int kv_has(const char *text, size_t len, const char *key);

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void cqp_delivery_encode(const struct cqp_row *row, struct cqp_kv_writer *w)
{
	if (row->has_delivery) {
		cqp_kv_add_u64(w, "sent", row->sent);
		cqp_kv_add_u64(w, "fanout", row->fanout);
		cqp_kv_add_u64(w, "received", row->received);
		cqp_kv_add_u64(w, "rx_dry", row->rx_dry);
	}
	if (row->has_lost)
		cqp_kv_add_u64(w, "lost", row->lost);
}

/* The client knows what it sent, the server what arrived: each side
 * leaves the other's figures at zero, so the larger one is the truth. */
int cqp_delivery_decode(struct cqp_row *row, const char *text, size_t len)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
	    {"sent", offsetof(struct cqp_row, sent)},
	    {"fanout", offsetof(struct cqp_row, fanout)},
	    {"received", offsetof(struct cqp_row, received)},
	    {"rx_dry", offsetof(struct cqp_row, rx_dry)},
	    {"lost", offsetof(struct cqp_row, lost)},
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		uint64_t *f = (uint64_t *)((char *)row + keys[i].off);
		uint64_t v;

		if (!kv_has(text, len, keys[i].key))
			continue;
		if (cqp_kv_get_u64(text, len, keys[i].key, &v) < 0)
			return cqp_fail(CQP_E_PROTO, "bad '%s' in results",
					keys[i].key);
		*f = max_u64(*f, v);
		if (i == 4)
			row->has_lost = true;
		else
			row->has_delivery = true;
	}
	return 0;
}

void cqp_open_loop_encode(const struct cqp_row *row, struct cqp_kv_writer *w)
{
	if (!row->open_loop)
		return;
	cqp_kv_add_u64(w, "open_loop", 1);
	cqp_kv_add_double(w, "offered_rate", row->offered_rate);
	cqp_kv_add_double(w, "achieved_rate", row->achieved_rate);
	cqp_kv_add_double(w, "arrival_cv", row->arrival_cv);
	cqp_kv_add_u64(w, "late_sends", row->late_sends);
	lat_encode_as(&row->service_lat_us, "service_", w);
}

int cqp_open_loop_decode(struct cqp_row *row, const char *text, size_t len)
{
	int rc;

	if (row->open_loop || !kv_has(text, len, "open_loop"))
		return 0;
	if ((rc = cqp_kv_get_double(text, len, "offered_rate",
				    &row->offered_rate)) < 0 ||
	    (rc = cqp_kv_get_double(text, len, "achieved_rate",
				    &row->achieved_rate)) < 0 ||
	    (rc = cqp_kv_get_double(text, len, "arrival_cv",
				    &row->arrival_cv)) < 0 ||
	    (rc = cqp_kv_get_u64(text, len, "late_sends", &row->late_sends)) <
		0 ||
	    (rc = lat_decode_as(&row->service_lat_us, "service_", text, len)) <
		0)
		return rc;
	row->open_loop = true;
	return 0;
}

void cqp_event_row_encode(const struct cqp_row *row, const char *prefix,
			  struct cqp_kv_writer *w)
{
	char key[64];

	snprintf(key, sizeof(key), "%sevent", prefix);
	cqp_kv_add_str(w, key, row->label);
	snprintf(key, sizeof(key), "%scount", prefix);
	cqp_kv_add_u64(w, key, row->count);
	snprintf(key, sizeof(key), "%srate_per_s", prefix);
	cqp_kv_add_double(w, key, row->rate_per_s);
	lat_encode_as(&row->lat_us, prefix, w);
}

int cqp_event_row_decode(struct cqp_row *row, const char *prefix,
			 const char *text, size_t len)
{
	char key[64];
	int rc;

	snprintf(key, sizeof(key), "%sevent", prefix);
	if ((rc = cqp_kv_get_str(text, len, key, row->label,
				 sizeof(row->label))) < 0)
		return rc;
	snprintf(key, sizeof(key), "%scount", prefix);
	if ((rc = cqp_kv_get_u64(text, len, key, &row->count)) < 0)
		return rc;
	snprintf(key, sizeof(key), "%srate_per_s", prefix);
	if ((rc = cqp_kv_get_double(text, len, key, &row->rate_per_s)) < 0)
		return rc;
	if ((rc = lat_decode_as(&row->lat_us, prefix, text, len)) < 0)
		return rc;
	row->has_lat = true;
	return 0;
}

void cqp_rows_free(struct cqp_row *rows, unsigned nrows)
{
	for (unsigned i = 0; i < nrows; i++) {
		free(rows[i].hist);
		free(rows[i].hw_client);
		free(rows[i].hw_server);
		free(rows[i].client.threads);
		free(rows[i].server.threads);
		rows[i].client.threads = rows[i].server.threads = NULL;
		rows[i].client.nthreads = rows[i].server.nthreads = 0;
		rows[i].hist = NULL;
		rows[i].hw_client = rows[i].hw_server = NULL;
	}
}

void cqp_report_print(const struct cqp_report *r, FILE *out)
{
	switch (r->params ? r->params->output : CQP_OUT_HUMAN) {
	case CQP_OUT_JSON:
		print_json(r, out);
		break;
	case CQP_OUT_CSV:
		print_csv(r, out);
		break;
	case CQP_OUT_HUMAN:
	default:
		print_human(r, out);
		break;
	}
	fflush(out);
}

/* ---- cost over the out-of-band channel ---- */

/* The key of field f under prefix ("cost_cpu_pct"). */
static const char *prefixed(char *buf, size_t cap, const char *prefix,
			    const struct cost_field *f)
{
	snprintf(buf, cap, "%s%s", prefix, f->key);
	return buf;
}

void cqp_cost_encode(const struct cqp_cost *c, struct cqp_kv_writer *w)
{
	cqp_cost_encode_as(c, "", w);
}

int cqp_cost_decode(struct cqp_cost *c, const char *text, size_t len)
{
	return cqp_cost_decode_as(c, "", text, len);
}

void cqp_cost_encode_as(const struct cqp_cost *c, const char *prefix,
			struct cqp_kv_writer *w)
{
	char key[64];
	size_t i;

	/* The derived figures (per wakeup, per second) are not sent: the
	 * receiver computes them from these. */
	for (i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cost_fields[i];

		if (!field_present(c, f))
			continue;
		prefixed(key, sizeof(key), prefix, f);
		if (f->type == FIELD_DOUBLE)
			cqp_kv_add_double(w, key, field_double(c, f));
		else
			cqp_kv_add_u64(w, key, field_u64(c, f));
		/* (FIELD_BOOL travels as 0 or 1.) */
	}
}

static int kv_key_is(void *ctx, const char *key, const char *val)
{
	(void)val;
	return strcmp(key, *(const char *const *)ctx) == 0;
}

/* 1 when the record has key, 0 when not, or a failure (malformed). */
static int kv_has(const char *text, size_t len, const char *key)
{
	return cqp_kv_parse(text, len, kv_key_is, &key);
}

void cqp_threads_encode(const struct cqp_cost *c, struct cqp_kv_writer *w)
{
	char key[32], val[192];

	if (!c->nthreads)
		return;
	cqp_kv_add_u64(w, "threads", c->nthreads);
	for (unsigned t = 0; t < c->nthreads; t++) {
		const struct cqp_thread_cost *tc = &c->threads[t];

		snprintf(key, sizeof(key), "thread%u", t);
		snprintf(val, sizeof(val),
			 "%" PRId32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			 ",%.17g,%.17g,%.17g,%.17g",
			 tc->cpu, tc->completions, tc->wakeups,
			 tc->foreign_completions, tc->cpu_pct, tc->cpu_user_pct,
			 tc->cpu_sys_pct, tc->lock_wait_us);
		cqp_kv_add_str(w, key, val);
	}
}

int cqp_threads_decode(struct cqp_cost *c, const char *text, size_t len)
{
	uint64_t n;
	char key[32], val[192];
	int rc = kv_has(text, len, "threads");

	c->threads = NULL;
	c->nthreads = 0;
	if (rc <= 0)
		return rc;
	if ((rc = cqp_kv_get_u64(text, len, "threads", &n)) < 0)
		return rc;
	if (n == 0 || n > CQP_MAX_THREADS)
		return cqp_fail(CQP_E_PROTO,
				"the peer reports %" PRIu64 " threads (1..%d)",
				n, CQP_MAX_THREADS);
	if (!(c->threads = calloc(n, sizeof(*c->threads))))
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	c->nthreads = (unsigned)n;
	for (unsigned t = 0; t < c->nthreads; t++) {
		struct cqp_thread_cost *tc = &c->threads[t];

		snprintf(key, sizeof(key), "thread%u", t);
		rc = cqp_kv_get_str(text, len, key, val, sizeof(val));
		if (rc == 0 && sscanf(val,
				      "%" SCNd32 ",%" SCNu64 ",%" SCNu64
				      ",%" SCNu64 ",%lg,%lg,%lg,%lg",
				      &tc->cpu, &tc->completions, &tc->wakeups,
				      &tc->foreign_completions, &tc->cpu_pct,
				      &tc->cpu_user_pct, &tc->cpu_sys_pct,
				      &tc->lock_wait_us) != 8)
			rc = cqp_fail(CQP_E_PROTO, "the peer's %s is malformed",
				      key);
		if (rc < 0) {
			free(c->threads);
			c->threads = NULL;
			c->nthreads = 0;
			return rc;
		}
	}
	return 0;
}

int cqp_cost_decode_as(struct cqp_cost *c, const char *prefix, const char *text,
		       size_t len)
{
	struct cqp_cost tmp = {.valid = true};
	char key[64];
	size_t i;

	for (i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cost_fields[i];
		char *dst = (char *)&tmp + f->offset;
		const char *k = prefixed(key, sizeof(key), prefix, f);
		int rc = f->optional ? kv_has(text, len, k) : 1;

		/* An absent optional key means "not measured". */
		if (rc == 0)
			continue;
		if (rc > 0 && f->type == FIELD_DOUBLE)
			rc = cqp_kv_get_double(text, len, k, (double *)dst);
		else if (rc > 0 && f->type == FIELD_BOOL) {
			uint64_t v = 0;

			rc = cqp_kv_get_u64(text, len, k, &v);
			*(bool *)dst = v != 0;
		} else if (rc > 0)
			rc = cqp_kv_get_u64(text, len, k, (uint64_t *)dst);
		if (rc < 0) {
			/* kv named the key; say whose record it was.  The
			 * copy: cqp_fail formats into the buffer it reads. */
			char why[256];

			snprintf(why, sizeof(why), "%s", cqp_errmsg());
			return cqp_fail((enum cqp_errcode) - rc,
					"completion cost figures: %s", why);
		}
		if (f->optional)
			*(bool *)((char *)&tmp + f->present) = true;
	}
	/* Only a complete record replaces the caller's. */
	*c = tmp;
	return 0;
}
