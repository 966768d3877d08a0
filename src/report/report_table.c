/* SPDX-License-Identifier: BSD-2-Clause */
/* The human report's row table.  A row's columns are the human heads of
 * its figures in cqp_row_fields (report_fields.c), a side's cost the
 * table below; each as wide as its widest cell over all rows.  By
 * default a row is one line of its speed figures, perftest's columns
 * first; under it, indented, the figures that do not fit there (open
 * loop, some tails) and a line per side of its cost.  --wide puts all of it on
 * one line, as the report did before it fit CQP_HUMAN_COLS. */
#include "report/report_text.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a row's own figures: cqp_row_fields' human columns ---- */

/* A column: a field and, for a latency summary, which of its figures. */
struct row_col {
	const struct row_field *f;
	const struct row_head *h;
	unsigned sub; /* index in cqp_lat_fields */
};

#define MAX_ROW_COLS 48

static unsigned row_cols(struct row_col *c, unsigned cap)
{
	unsigned n = 0;

	for (size_t i = 0; i < cqp_n_row_fields; i++) {
		const struct row_field *f = &cqp_row_fields[i];
		unsigned nsub = f->type == FIELD_LAT ? N_LAT_FIELDS : 1;

		for (unsigned k = 0; k < nsub && n < cap; k++) {
			const struct row_head *h =
			    f->type == FIELD_LAT ? &f->lat[k] : &f->human;

			if (h->fmt != RF_NONE)
				c[n++] = (struct row_col){f, h, k};
		}
	}
	return n;
}

/* rdma_event_str()'s names without the prefix every one of them has. */
static const char *event_name(const char *name)
{
	static const char prefix[] = "RDMA_CM_EVENT_";

	if (strncmp(name, prefix, sizeof(prefix) - 1) == 0)
		name += sizeof(prefix) - 1;
	return name;
}

static void row_cell(const struct row_col *k, const struct cqp_report *r,
		     const struct cqp_row *row, char *v, size_t cap)
{
	const char *at = (const char *)row + k->f->offset;
	bool gbits = r->params && r->params->report_gbits;
	uint64_t u;

	switch (k->h->fmt) {
	case RF_TEXT:
		snprintf(v, cap, "%s", at);
		break;
	case RF_EVENT:
		snprintf(v, cap, "%s", event_name(at));
		break;
	case RF_LABEL:
		snprintf(v, cap, "%s", *at ? at : "-");
		break;
	case RF_U64:
		memcpy(&u, at, sizeof(u));
		snprintf(v, cap, "%" PRIu64, u);
		break;
	case RF_RATE:
		cqp_fmt_rate(v, cap, cqp_row_double(r, row, k->f), "");
		break;
	case RF_BW:
		cqp_fmt_fixed(v, cap, k->h->decimals,
			      cqp_row_double(r, row, k->f) *
				  (gbits ? 1.0 : 1e9 / 8 / 1048576.0));
		break;
	case RF_FIXED:
		cqp_fmt_fixed(v, cap, k->h->decimals,
			      cqp_row_double(r, row, k->f));
		break;
	case RF_US:
		cqp_fmt_us(v, cap,
			   cqp_lat_value((const struct cqp_summary *)at,
					 &cqp_lat_fields[k->sub]));
		break;
	case RF_NONE:
	default:
		snprintf(v, cap, "-");
		break;
	}
}

/* ---- a side's cost ---- */

enum { C_LAT = 1, C_IDLE = 2, C_POLICY = 4, C_MACHINE = 8 };

typedef double cost_value_fn(const struct cqp_cost *c,
			     const struct cqp_row *row);

struct cost_col {
	const char *head, *narrow_head; /* narrow: in the idle line */
	unsigned need;			/* C_LAT: latency rows; C_IDLE */
	int decimals;			/* of value; -1: a rate, k/M */
	cost_value_fn *value;
	size_t user, sys; /* a split's two doubles in the cost */
	const char *dash; /* what a "-" in it means, for the notes */
};

static double v_cpu(const struct cqp_cost *c, const struct cqp_row *row)
{
	(void)row;
	return c->cpu_pct;
}

static double v_idle(const struct cqp_cost *c, const struct cqp_row *row)
{
	(void)row;
	return c->has_idle ? c->idle_cpu_pct : NAN;
}

/* Only a ping-pong says which way each completion came. */
static double v_spin(const struct cqp_cost *c, const struct cqp_row *row)
{
	return row->has_lat ? cqp_spin_pct(c, row) : NAN;
}

/* A policy's figures (cqperf(7) POLICIES), on a line of their own. */
static double v_spin_ms(const struct cqp_cost *c, const struct cqp_row *row)
{
	(void)row;
	return c->has_policy ? c->spin_us / 1e3 : NAN;
}

static double v_naps(const struct cqp_cost *c, const struct cqp_row *row)
{
	(void)row;
	return c->has_policy ? (double)c->naps : NAN;
}

static double v_budget(const struct cqp_cost *c, const struct cqp_row *row)
{
	(void)row;
	return c->has_policy ? c->budget_mean_us : NAN;
}

static double v_budget99(const struct cqp_cost *c, const struct cqp_row *row)
{
	(void)row;
	return c->has_policy ? c->budget_p99_us : NAN;
}

static double v_wake_cpu(const struct cqp_cost *c, const struct cqp_row *row)
{
	(void)row;
	return c->has_policy ? c->wake_cpu_us : NAN;
}

#define OFFC(f) offsetof(struct cqp_cost, f)

static const struct cost_col cost_cols[] = {
    {"CPU%", NULL, 0, 1, v_cpu, 0, 0, NULL},
    {"usr/sys", NULL, 0, 0, NULL, OFFC(cpu_user_pct), OFFC(cpu_sys_pct), NULL},
    {"idle CPU%", "CPU%", C_IDLE, 1, v_idle, 0, 0, NULL},
    {"idle usr/sys", "usr/sys", C_IDLE, 0, NULL, OFFC(idle_cpu_user_pct),
     OFFC(idle_cpu_sys_pct), NULL},
    {"compl/wake", NULL, 0, 2, cqp_compl_per_wakeup, 0, 0,
     "compl/wake is - where the side never slept"},
    {"wake/s", NULL, 0, -1, cqp_wakeups_per_s, 0, 0, NULL},
    {"wake/iter", NULL, C_LAT, 3, cqp_wakeups_per_msg, 0, 0, NULL},
    {"spin%", NULL, C_LAT, 1, v_spin, 0, 0,
     "spin% is a ping-pong's (only it says how each completion came)"},
    {"kern ns/msg", NULL, C_MACHINE, 0, cqp_kernel_ns_per_msg, 0, 0,
     "kern and sirq ns/msg need /proc/stat"},
    {"sirq ns/msg", NULL, C_MACHINE, 0, cqp_softirq_ns_per_msg, 0, 0,
     "kern and sirq ns/msg need /proc/stat"},
    {"spin ms", NULL, C_POLICY, 2, v_spin_ms, 0, 0, NULL},
    {"naps", NULL, C_POLICY, 0, v_naps, 0, 0, NULL},
    {"budget us", NULL, C_POLICY, 1, v_budget, 0, 0, NULL},
    {"budget p99", NULL, C_POLICY, 1, v_budget99, 0, 0, NULL},
    {"wake CPU us", NULL, C_POLICY, 1, v_wake_cpu, 0, 0, NULL},
};
#define N_COST_COLS (sizeof(cost_cols) / sizeof(cost_cols[0]))

static double cost_double(const struct cqp_cost *c, size_t off)
{
	double x;

	memcpy(&x, (const char *)c + off, sizeof(x));
	return x;
}

/* The machine's kernel time in the step, read in /proc/stat's ticks:
 * none seen is below what it can tell, not 0. */
static bool below_tick(const struct cost_col *k, const struct cqp_cost *c)
{
	if (!(k->need & C_MACHINE) || !c->has_sys)
		return false;
	if (k->value == cqp_softirq_ns_per_msg)
		return c->sys_softirq_pct <= 0;
	return c->sys_irq_pct + c->sys_softirq_pct + c->sys_kthread_pct <= 0;
}

/* An unknown side keeps every cell, as "-", so columns line up. */
static void cost_cell(const struct cost_col *k, const struct cqp_cost *c,
		      const struct cqp_row *row, char *v, size_t cap)
{
	if (!c->valid) {
		snprintf(v, cap, "-");
	} else if (below_tick(k, c)) {
		snprintf(v, cap, "<1 tick");
	} else if (!k->value) { /* "user/sys", both % of one core */
		double u = cost_double(c, k->user), s = cost_double(c, k->sys);

		if ((k->need & C_IDLE) && !c->has_idle)
			u = NAN;
		if (isfinite(u) && isfinite(s))
			snprintf(v, cap, "%.1f/%.1f", u, s);
		else
			snprintf(v, cap, "-");
	} else if (k->decimals < 0) {
		cqp_fmt_rate(v, cap, k->value(c, row), "");
	} else {
		cqp_fmt_fixed(v, cap, k->decimals, k->value(c, row));
	}
}

/* ---- bands: the lines a row's block is made of ---- */

enum col_kind { K_ROW, K_COST, K_SIDE };

struct inst {
	enum col_kind kind;
	const void *col;
	int side; /* K_COST in --wide: 0 client, 1 server; -1 the line's */
	char head[32];
	int w;
};

#define MAX_INST 64
#define INDENT	 "    " /* a row's lines under it */

struct band {
	struct inst c[MAX_INST];
	unsigned n;
	bool per_side; /* a line per side that has figures */
	/* The cost where both sides share a machine: its figures on a line
	 * of their own, "machine", blank on the sides' lines. */
	bool machine_line;
	const char *indent;
};

static struct inst *band_add(struct band *b, enum col_kind kind,
			     const void *col, int side, const char *head)
{
	struct inst *in = &b->c[b->n++];

	in->kind = kind;
	in->col = col;
	in->side = side;
	snprintf(in->head, sizeof(in->head), "%s", head);
	in->w = (int)strlen(in->head);
	return in;
}

static void inst_cell(const struct inst *in, const struct cqp_report *r,
		      const struct cqp_row *row, int side, char *v, size_t cap)
{
	if (in->kind == K_SIDE) {
		snprintf(v, cap, "%s", side ? "server" : "client");
	} else if (in->kind == K_ROW) {
		const struct row_col *k = in->col;

		if (cqp_row_has(row, k->f->group))
			row_cell(k, r, row, v, cap);
		else
			snprintf(v, cap, "-");
	} else {
		if (in->side >= 0)
			side = in->side;
		cost_cell(in->col, side ? &row->server : &row->client, row, v,
			  cap);
	}
}

#define MAX_DASHES 16

struct layout {
	struct band main, under, cost, policy, idle;
	bool sides[2]; /* some row has this side's cost */
	/* What the printed table needs said under it. */
	const char *dashes[MAX_DASHES];
	unsigned ndashes;
	bool below_tick, has_machine;
	struct row_col cols[MAX_ROW_COLS]; /* what K_ROW instances point to */
};

/* A "-" printed in column in: its reason, once. */
static void note_dash(struct layout *L, const struct inst *in,
		      const struct cqp_row *row, int side)
{
	const char *why = NULL;

	if (in->kind == K_ROW) {
		const struct row_col *k = in->col;

		why = !cqp_row_has(row, k->f->group)
			  ? "- elsewhere: not measured in that row"
		      : k->h->dash
			  ? k->h->dash
			  : "- elsewhere: no figure (cqperf(7), OUTPUT)";
	} else if (in->kind == K_COST) {
		const struct cqp_cost *c = side ? &row->server : &row->client;
		const struct cost_col *k = in->col;

		why = !c->valid ? "- on a whole line: that side sent no figures"
		      : k->dash ? k->dash
				: "- elsewhere: no figure (cqperf(7), OUTPUT)";
	}
	if (!why)
		return;
	for (unsigned i = 0; i < L->ndashes; i++)
		if (L->dashes[i] == why)
			return;
	if (L->ndashes < MAX_DASHES)
		L->dashes[L->ndashes++] = why;
}

static bool row_col_shown(const struct row_col *k, const struct shape *s,
			  bool under, bool wide)
{
	unsigned bits = 0;

	if (!cqp_shape_has(s, k->f->group))
		return false;
	/* cm_event_stress: one line an event; its t_stdev and p99.99 are
	 * the JSON's (the notes say so). */
	if (!wide && (k->h->under & RG_BIT(RG_EVENT)) &&
	    cqp_shape_has(s, RG_EVENT))
		return false;
	for (unsigned g = 0; g <= RG_OPEN_LAT; g++)
		if (cqp_shape_has(s, (enum row_group)g))
			bits |= RG_BIT(g);
	return ((k->h->under & bits) != 0) == under;
}

static bool cost_col_shown(const struct cost_col *k, const struct shape *s)
{
	return (!(k->need & C_LAT) || s->lat) &&
	       (!(k->need & C_IDLE) || s->idle) &&
	       (!(k->need & C_POLICY) || s->policy);
}

/* The cost columns of a band (its line's: 0, C_IDLE or C_POLICY; side
 * >= 0: every column, on the row's line, for that side). */
static void add_cost(struct band *b, const struct shape *s, unsigned line,
		     int side)
{
	bool idle = line == C_IDLE;
	bool first = true;
	char head[32];

	for (size_t i = 0; i < N_COST_COLS; i++) {
		const struct cost_col *k = &cost_cols[i];

		if (!cost_col_shown(k, s) ||
		    (side < 0 && (k->need & (C_IDLE | C_POLICY)) != line))
			continue;
		if (side >= 0 && first)
			snprintf(head, sizeof(head), "%s: %s",
				 side ? "server" : "client", k->head);
		else
			snprintf(head, sizeof(head), "%s",
				 idle && k->narrow_head ? k->narrow_head
							: k->head);
		band_add(b, K_COST, k, side, head);
		first = false;
	}
}

static void build(struct layout *L, const struct cqp_report *r,
		  const struct shape *s, bool wide)
{
	bool gbits = r->params && r->params->report_gbits;
	unsigned ncols;

	memset(L, 0, sizeof(*L));
	ncols = row_cols(L->cols, MAX_ROW_COLS);
	L->sides[0] = s->client;
	L->sides[1] = s->server;
	L->under.indent = L->cost.indent = L->idle.indent = INDENT;
	L->policy.indent = INDENT;
	L->main.indent = "";
	for (int under = 0; under < 2; under++)
		for (unsigned i = 0; i < ncols; i++) {
			const struct row_col *k = &L->cols[i];
			const struct row_head *h = k->h;

			if (row_col_shown(k, s, under, wide))
				band_add(under && !wide ? &L->under : &L->main,
					 K_ROW, k, -1,
					 gbits && h->head_gbits ? h->head_gbits
								: h->head);
		}
	if (wide) {
		for (int side = 0; side < 2; side++)
			if (L->sides[side])
				add_cost(&L->main, s, 0, side);
		return;
	}
	if (s->client || s->server) {
		L->cost.per_side = L->idle.per_side = true;
		band_add(&L->cost, K_SIDE, NULL, -1, "cost");
		add_cost(&L->cost, s, 0, -1);
		L->cost.machine_line = r->one_machine;
	}
	if (s->policy) {
		L->policy.per_side = true;
		band_add(&L->policy, K_SIDE, NULL, -1, "policy");
		add_cost(&L->policy, s, C_POLICY, -1);
	}
	if (s->idle) {
		band_add(&L->idle, K_SIDE, NULL, -1, "idle");
		add_cost(&L->idle, s, C_IDLE, -1);
	}
}

/* Whether a band prints a line for this side. */
static bool band_side(const struct band *b, const struct layout *L, int side)
{
	return b->per_side ? L->sides[side] : side == 0;
}

static bool machine_col(const struct inst *in)
{
	return in->kind == K_COST &&
	       (((const struct cost_col *)in->col)->need & C_MACHINE);
}

static void widen(struct band *b, const struct layout *L,
		  const struct cqp_report *r)
{
	char v[64];

	for (unsigned k = 0; b->machine_line && k < b->n; k++)
		if (b->c[k].kind == K_SIDE &&
		    b->c[k].w < (int)strlen("machine"))
			b->c[k].w = (int)strlen("machine");
	for (unsigned i = 0; i < r->nrows; i++)
		for (int side = 0; side < 2; side++) {
			if (!band_side(b, L, side))
				continue;
			for (unsigned k = 0; k < b->n; k++) {
				int n;

				inst_cell(&b->c[k], r, &r->rows[i], side, v,
					  sizeof(v));
				n = (int)strlen(v);
				if (n > b->c[k].w)
					b->c[k].w = n;
			}
		}
}

static size_t band_head(const struct band *b, FILE *out)
{
	struct cqp_line l = {.len = 0};

	cqp_line_printf(&l, "%s", b->indent);
	for (unsigned k = 0; k < b->n; k++)
		cqp_line_cell(&l, b->c[k].w, b->c[k].head);
	return cqp_line_emit(&l, out);
}

/* The band's lines for one row: its header first when under the row. */
static size_t band_rows(const struct band *b, struct layout *L,
			const struct cqp_report *r, const struct cqp_row *row,
			FILE *out)
{
	struct cqp_line l = {.len = 0};
	size_t widest = 0, n;
	int mside = L->sides[0] && row->client.valid ? 0 : 1;
	char v[64];

	if (!b->n)
		return 0;
	if (b != &L->main)
		widest = band_head(b, out);
	/* side 2: the machine line. */
	for (int side = 0; side < 3; side++) {
		if (side == 2 ? !b->machine_line : !band_side(b, L, side))
			continue;
		cqp_line_printf(&l, "%s", b->indent);
		for (unsigned k = 0; k < b->n; k++) {
			const struct inst *in = &b->c[k];
			int of = in->side >= 0 ? in->side : side;

			if (b->machine_line && machine_col(in) != (side == 2)) {
				snprintf(v, sizeof(v), "%s",
					 in->kind == K_SIDE ? "machine" : "");
				cqp_line_cell(&l, in->w, v);
				continue;
			}
			if (side == 2)
				of = mside;
			inst_cell(in, r, row, of, v, sizeof(v));
			if (out && strcmp(v, "-") == 0)
				note_dash(L, in, row, of);
			if (out && strcmp(v, "<1 tick") == 0)
				L->below_tick = true;
			cqp_line_cell(&l, in->w, v);
		}
		n = cqp_line_emit(&l, out);
		widest = n > widest ? n : widest;
	}
	return widest;
}

/* Whether every machine's irq time in the table was measured
 * (CONFIG_IRQ_TIME_ACCOUNTING), not sampled at the tick. */
static bool irqtime_measured(const struct cqp_report *r)
{
	bool seen = false;

	for (unsigned i = 0; i < r->nrows; i++)
		for (int side = 0; side < 2; side++) {
			const struct cqp_cost *c =
			    side ? &r->rows[i].server : &r->rows[i].client;

			if (!c->valid || !c->has_sys)
				continue;
			if (!c->sys_irqtime_measured)
				return false;
			seen = true;
		}
	return seen;
}

/* Under the table: what its units, its machine line and each kind of
 * "-" it printed mean. */
static void print_notes(const struct layout *L, const struct cqp_report *r,
			const struct shape *s, FILE *out)
{
	struct cqp_text t = {.l = {.len = 0}, .out = out};

	if (s->bw && !(r->params && r->params->report_gbits))
		cqp_text_printf(&t, "%s",
				" MB/sec: 2^20 bytes a second, as perftest "
				"counts (JSON: bw_*_gbps, 10^9 bits)\n");
	if (L->has_machine)
		cqp_text_printf(
		    &t,
		    " kern, sirq ns/msg: %s, all CPUs; /proc/stat, "
		    "%s\n",
		    r->one_machine ? "the machine's (both sides ran on it)"
				   : "each side's machine's",
		    irqtime_measured(r) ? "measured" : "tick-sampled");
	if (s->fanin)
		cqp_text_printf(
		    &t, "%s",
		    " clients: this server's group (--clients); the row's "
		    "rates "
		    "are theirs summed, fairness Jain's index over their "
		    "message rates (1: all equal); each client in JSON\n");
	if (cqp_shape_has(s, RG_EVENT) && !(r->params && r->params->wide))
		cqp_text_printf(
		    &t, "%s",
		    " Latency in usec, from the call to its event; "
		    "t_stdev and p99.99 in JSON (--output json) and "
		    "with --wide\n");
	if (L->below_tick)
		cqp_text_printf(
		    &t, "%s",
		    " <1 tick: none seen in the step by /proc/stat, "
		    "which counts in 10 ms ticks (USER_HZ 100)\n");
	for (unsigned i = 0; i < L->ndashes; i++)
		cqp_text_printf(
		    &t, " %s%s\n",
		    L->dashes[i][0] == '-' ? "" : "-: ", L->dashes[i]);
}

size_t cqp_human_table(const struct cqp_report *r, const struct shape *s,
		       FILE *out)
{
	struct layout *L = calloc(1, sizeof(*L));
	struct band *bands[5];
	size_t widest, n;

	if (!L)
		return 0;
	build(L, r, s, r->params && r->params->wide);
	bands[0] = &L->main;
	bands[1] = &L->under;
	bands[2] = &L->cost;
	bands[3] = &L->policy;
	bands[4] = &L->idle;
	for (int b = 0; b < 5; b++)
		widen(bands[b], L, r);
	for (int b = 0; b < 5; b++)
		for (unsigned k = 0; k < bands[b]->n; k++)
			L->has_machine |= machine_col(&bands[b]->c[k]);
	widest = band_head(&L->main, out);
	for (unsigned i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		for (int b = 0; b < 5; b++) {
			n = band_rows(bands[b], L, r, row, out);
			widest = n > widest ? n : widest;
		}
		if (out && r->params && r->params->histogram && row->hist)
			cqp_human_hist(row->hist, out);
	}
	if (out)
		print_notes(L, r, s, out);
	free(L);
	return widest;
}
