/* SPDX-License-Identifier: BSD-2-Clause */
/* The field tables of report_fields.h and what is derived from them. */
#include "report/report_fields.h"

#include <math.h>
#include <string.h>

/* ---- one description of the cost record, for JSON, CSV and kv ---- */

const struct cost_field cqp_cost_fields[] = {
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
    OPT("sys_steal_pct", FIELD_DOUBLE, sys_steal_pct, has_sys),
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
    OPT("spin_us", FIELD_DOUBLE, spin_us, has_policy),
    OPT("naps", FIELD_U64, naps, has_policy),
    OPT("budget_mean_us", FIELD_DOUBLE, budget_mean_us, has_policy),
    OPT("budget_p50_us", FIELD_DOUBLE, budget_p50_us, has_policy),
    OPT("budget_p99_us", FIELD_DOUBLE, budget_p99_us, has_policy),
    OPT("wake_cpu_us", FIELD_DOUBLE, wake_cpu_us, has_policy),
    OPT("wake_wait_us", FIELD_DOUBLE, wake_wait_us, has_policy),
    OPT("wake_reap_us", FIELD_DOUBLE, wake_reap_us, has_policy),
    OPT("batch_mean", FIELD_DOUBLE, batch_mean, has_batch),
    OPT("batch_max", FIELD_U64, batch_max, has_batch),
    OPT("sys_irqtime_measured", FIELD_BOOL, sys_irqtime_measured, has_sys),
    OPT("sys_softirqs_per_s", FIELD_DOUBLE, sys_softirqs_per_s, has_softirqs),
#undef REQ
#undef OPT
};
const size_t cqp_n_cost_fields =
    sizeof(cqp_cost_fields) / sizeof(cqp_cost_fields[0]);
_Static_assert(sizeof(cqp_cost_fields) / sizeof(cqp_cost_fields[0]) <=
		   CQP_MAX_COST_FIELDS,
	       "struct shape's flags need CQP_MAX_COST_FIELDS raised");

double cqp_field_double(const struct cqp_cost *c, const struct cost_field *f)
{
	return *(const double *)((const char *)c + f->offset);
}

uint64_t cqp_field_u64(const struct cqp_cost *c, const struct cost_field *f)
{
	const char *v = (const char *)c + f->offset;

	return f->type == FIELD_BOOL ? *(const bool *)v : *(const uint64_t *)v;
}

bool cqp_field_present(const struct cqp_cost *c, const struct cost_field *f)
{
	return !f->optional || *(const bool *)((const char *)c + f->present);
}

/* Derived figures: NaN when undefined, which JSON renders as null and
 * the other formats as "-" or an empty cell. */
double cqp_compl_per_wakeup(const struct cqp_cost *c, const struct cqp_row *row)
{
	(void)row;
	return c->wakeups ? (double)c->completions / (double)c->wakeups : NAN;
}

/* Per message (bandwidth) or exchange (latency) of the row. */
double cqp_wakeups_per_msg(const struct cqp_cost *c, const struct cqp_row *row)
{
	return row && row->iterations
		   ? (double)c->wakeups / (double)row->iterations
		   : NAN;
}

double cqp_wakeups_per_s(const struct cqp_cost *c, const struct cqp_row *row)
{
	(void)row;
	return c->seconds > 0 ? (double)c->wakeups / c->seconds : NAN;
}

/* Hybrid: the share of completions caught while spinning rather than
 * after sleeping. */
double cqp_spin_pct(const struct cqp_cost *c, const struct cqp_row *row)
{
	uint64_t all = c->spin_completions + c->sleep_completions;

	(void)row;
	return all ? 100.0 * (double)c->spin_completions / (double)all : NAN;
}

/* Nanoseconds of share_pct (of one core, over the side's window) per
 * message or exchange of the row. */
static double cqp_ns_per_msg(const struct cqp_cost *c,
			     const struct cqp_row *row, double share_pct)
{
	if (!row || !row->iterations)
		return NAN;
	return share_pct / 100.0 * c->seconds * 1e9 / (double)row->iterations;
}

static double cqp_cpu_ns_per_msg(const struct cqp_cost *c,
				 const struct cqp_row *row)
{
	return cqp_ns_per_msg(c, row, c->cpu_pct);
}

/* Softirq of the whole machine: on rxe the data path itself. */
double cqp_softirq_ns_per_msg(const struct cqp_cost *c,
			      const struct cqp_row *row)
{
	return c->has_sys ? cqp_ns_per_msg(c, row, c->sys_softirq_pct) : NAN;
}

/* The data path's softirqs a message, machine-wide (exact counts). */
static double cqp_softirqs_per_msg(const struct cqp_cost *c,
				   const struct cqp_row *row)
{
	if (!c->has_softirqs || !row || !row->iterations)
		return NAN;
	return c->sys_softirqs_per_s * c->seconds / (double)row->iterations;
}

/* All the kernel's work outside processes: irq, softirq and kernel
 * threads (ksoftirqd's ticks in softirq may count in two of them). */
double cqp_kernel_ns_per_msg(const struct cqp_cost *c,
			     const struct cqp_row *row)
{
	return c->has_sys ? cqp_ns_per_msg(c, row,
					   c->sys_irq_pct + c->sys_softirq_pct +
					       c->sys_kthread_pct)
			  : NAN;
}

#define TF(key, type, member)                                                  \
	{                                                                      \
		key, type, offsetof(struct cqp_thread_cost, member)            \
	}
const struct thread_field cqp_thread_fields[] = {
    TF("cpu", FIELD_I32, cpu),
    TF("completions", FIELD_U64, completions),
    TF("wakeups", FIELD_U64, wakeups),
    TF("foreign_completions", FIELD_U64, foreign_completions),
    TF("cpu_pct", FIELD_DOUBLE, cpu_pct),
    TF("cpu_user_pct", FIELD_DOUBLE, cpu_user_pct),
    TF("cpu_sys_pct", FIELD_DOUBLE, cpu_sys_pct),
    TF("lock_wait_us", FIELD_DOUBLE, lock_wait_us),
};
#undef TF
const size_t cqp_n_thread_fields =
    sizeof(cqp_thread_fields) / sizeof(cqp_thread_fields[0]);

/* The derived figures, in JSON and CSV (never sent: the receiver
 * computes them from the raw ones). */
const struct derived_field cqp_derived_fields[] = {
    {"compl_per_wakeup", cqp_compl_per_wakeup},
    {"wakeups_per_s", cqp_wakeups_per_s},
    {"wakeups_per_msg", cqp_wakeups_per_msg},
    {"spin_pct", cqp_spin_pct},
    {"cpu_ns_per_msg", cqp_cpu_ns_per_msg},
    {"softirq_ns_per_msg", cqp_softirq_ns_per_msg},
    {"kernel_ns_per_msg", cqp_kernel_ns_per_msg},
    {"softirqs_per_msg", cqp_softirqs_per_msg},
};
const size_t cqp_n_derived_fields =
    sizeof(cqp_derived_fields) / sizeof(cqp_derived_fields[0]);

/* ---- the load projection as named fields ---- */

enum proj_need { NEED_RATE = 1u << 0, NEED_COST = 1u << 1 };

const struct proj_field cqp_proj_fields[] = {
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
const size_t cqp_n_proj_fields =
    sizeof(cqp_proj_fields) / sizeof(cqp_proj_fields[0]);

/* A projection may hold only the wakeup cost (no --project), or only
 * the rates (no event-mode row to cost a wakeup). */
bool cqp_proj_known(const struct cqp_projection *pr, const struct proj_field *f)
{
	unsigned have =
	    (pr->rate_bps ? NEED_RATE : 0u) | (pr->have_cost ? NEED_COST : 0u);

	return (f->need & have) == f->need;
}

/* ---- what the server holds ---- */

#define HELD(f)                                                                \
	{                                                                      \
#f, offsetof(struct cqp_held, f)                               \
	}
const struct held_field cqp_held_fields[] = {
    HELD(qps),	     HELD(cqs),	 HELD(srqs),
    HELD(recv_wqes), HELD(cqes), HELD(registered_bytes),
};
#undef HELD
const size_t cqp_n_held_fields =
    sizeof(cqp_held_fields) / sizeof(cqp_held_fields[0]);

uint64_t cqp_held_value(const struct cqp_held *h, const struct held_field *f)
{
	uint64_t v;

	memcpy(&v, (const char *)h + f->offset, sizeof(v));
	return v;
}

/* ---- the latency summary as named fields ---- */

const struct lat_field cqp_lat_fields[N_LAT_FIELDS] = {
    {"min", offsetof(struct cqp_summary, min)},
    {"p50", offsetof(struct cqp_summary, p50)},
    {"avg", offsetof(struct cqp_summary, avg)},
    {"stdev", offsetof(struct cqp_summary, stdev)},
    {"p99", offsetof(struct cqp_summary, p99)},
    {"p99_9", offsetof(struct cqp_summary, p99_9)},
    {"p99_99", offsetof(struct cqp_summary, p99_99)},
    {"max", offsetof(struct cqp_summary, max)},
};

double cqp_lat_value(const struct cqp_summary *s, const struct lat_field *f)
{
	return *(const double *)((const char *)s + f->offset);
}

struct shape cqp_report_shape(const struct cqp_report *r)
{
	struct shape s = {0};
	unsigned i;

	for (i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		for (size_t k = 0; k < N_COST_FIELDS; k++)
			s.field[k] |=
			    (row->client.valid &&
			     cqp_field_present(&row->client,
					       &cqp_cost_fields[k])) ||
			    (row->server.valid &&
			     cqp_field_present(&row->server,
					       &cqp_cost_fields[k]));

		s.label |= row->label[0] != '\0';
		s.verb |= row->verb[0] != '\0';
		s.bw |= row->has_bw;
		s.lat |= row->has_lat;
		s.client |= row->client.valid;
		s.server |= row->server.valid;
		s.policy |= (row->client.valid && row->client.has_policy) ||
			    (row->server.valid && row->server.has_policy);
		s.idle |= (row->client.valid && row->client.has_idle) ||
			  (row->server.valid && row->server.has_idle);
		s.rx_mem |= (row->client.valid && row->client.has_rx_mem) ||
			    (row->server.valid && row->server.has_rx_mem);
		s.delivery |= row->has_delivery;
		s.lost |= row->has_lost;
		s.open |= row->open_loop;
		s.event |= row->side[0] != '\0';
		s.fanin |= row->nclients > 0;
	}
	return s;
}

double cqp_proj_double(const struct cqp_projection *pr,
		       const struct proj_field *f)
{
	return *(const double *)((const char *)pr + f->offset);
}

uint64_t cqp_proj_uint(const struct cqp_projection *pr,
		       const struct proj_field *f)
{
	const char *v = (const char *)pr + f->offset;

	return f->type == FIELD_U32 ? *(const uint32_t *)v
				    : *(const uint64_t *)v;
}

/* ---- the strategy map ---- */

const char *cqp_chosen_mode(const struct cqp_choice *c)
{
	return c->mode[c->chosen].mode;
}

/* Where the choice changes from the previous rate of the same size. */
bool cqp_crossover(const struct cqp_strategy *st, unsigned i)
{
	return i > 0 && st->c[i - 1].bytes == st->c[i].bytes &&
	       strcmp(cqp_chosen_mode(&st->c[i - 1]),
		      cqp_chosen_mode(&st->c[i])) != 0;
}

/* ---- a row's own figures ---- */

static double loss_pct(const struct cqp_report *r, const struct cqp_row *row)
{
	(void)r;
	return cqp_row_loss_pct(row);
}

static double wire_eff_pct(const struct cqp_report *r,
			   const struct cqp_row *row)
{
	return row->has_bw ? cqp_wire_eff_pct(row->bytes, r->dev.wire_overhead)
			   : NAN;
}

/* A group's slowest client: what the fairness index hides. */
static double slowest_mpps(const struct cqp_report *r,
			   const struct cqp_row *row)
{
	double m = NAN;

	(void)r;
	for (uint64_t i = 0; i < row->nclients; i++)
		if (isnan(m) || row->clients[i].msg_rate_mpps < m)
			m = row->clients[i].msg_rate_mpps;
	return m;
}

static bool fanned_out(const struct cqp_row *row)
{
	return row->fanout > 1;
}

static bool has_bw(const struct cqp_row *row)
{
	return row->has_bw;
}

/* Nothing timed: in cm_event_stress, an event no call of this side's
 * waited for (one the peer's call raised here) has a count but no
 * latency. */
#define DASH_LAT                                                               \
	"a latency is - where nothing was timed (cm_event_stress: an event "   \
	"no call of this side's waited for)"
#define LAT_HEAD(head, under)                                                  \
	{                                                                      \
		head, NULL, RF_US, 0, under, DASH_LAT                          \
	}

/* A row's latency in the human table: cm_event_stress puts one event on
 * a line, and its t_stdev and p99.99 in the JSON (the notes say so). */
static const struct row_head lat_heads[N_LAT_FIELDS] = {
    LAT_HEAD("t_min[usec]", 0),
    LAT_HEAD("p50", 0),
    LAT_HEAD("t_avg", 0),
    LAT_HEAD("t_stdev", RG_BIT(RG_EVENT)),
    LAT_HEAD("p99", 0),
    LAT_HEAD("p99.9", 0),
    LAT_HEAD("p99.99", RG_BIT(RG_EVENT) | RG_BIT(RG_LOST)),
    LAT_HEAD("t_max", 0),
};

/* An open loop's service time: its p50 and p99, under the row. */
static const struct row_head service_heads[N_LAT_FIELDS] = {
    [1] = {"svc p50", NULL, RF_US, 0, RG_ALWAYS, NULL},
    [4] = {"svc p99", NULL, RF_US, 0, RG_ALWAYS, NULL},
};

#define AT(member)                                                             \
	offsetof(struct cqp_row, member),                                      \
	    sizeof(((struct cqp_row *)NULL)->member), NULL, NULL, true
#define HEAD(head, fmt)                                                        \
	{                                                                      \
		head, NULL, fmt, 0, 0, NULL                                    \
	}
#define NO_HEAD                                                                \
	{                                                                      \
		NULL, NULL, RF_NONE, 0, 0, NULL                                \
	}
#define UNDER(head, fmt)                                                       \
	{                                                                      \
		head, NULL, fmt, 0, RG_ALWAYS, NULL                            \
	}

const struct row_field cqp_row_fields[] = {
    {"side", FIELD_TEXT, RG_EVENT, AT(side), HEAD("side", RF_TEXT), NULL},
    {"event", FIELD_TEXT, RG_EVENT, AT(label), HEAD("event", RF_EVENT), NULL},
    {"count", FIELD_U64, RG_EVENT, AT(count), HEAD("count", RF_U64), NULL},
    {"rate_per_s", FIELD_DOUBLE, RG_EVENT, AT(rate_per_s),
     HEAD("events/s", RF_RATE), NULL},
    {"label", FIELD_TEXT, RG_LABEL, AT(label), HEAD("mode", RF_LABEL), NULL},
    {"verb", FIELD_TEXT, RG_VERB, AT(verb), NO_HEAD, NULL},
    {"bytes", FIELD_U64, RG_SIZE, AT(bytes), HEAD("#bytes", RF_U64), NULL},
    {"iterations", FIELD_U64, RG_SIZE, AT(iterations),
     HEAD("#iterations", RF_U64), NULL},
    {"bw_peak_gbps",
     FIELD_DOUBLE,
     RG_BW,
     AT(bw_peak_gbps),
     {"BW peak[MB/sec]", "BW peak[Gb/sec]", RF_BW, 2, 0,
      "BW peak needs a step of two 50 ms windows or more"},
     NULL},
    {"bw_avg_gbps",
     FIELD_DOUBLE,
     RG_BW,
     AT(bw_avg_gbps),
     {"BW average[MB/sec]", "BW average[Gb/sec]", RF_BW, 2, 0, NULL},
     NULL},
    {"msg_rate_mpps",
     FIELD_DOUBLE,
     RG_BW,
     AT(msg_rate_mpps),
     {"MsgRate[Mpps]", NULL, RF_FIXED, 6, 0, NULL},
     NULL},
    {"sent", FIELD_U64, RG_DELIVERY, AT(sent), NO_HEAD, NULL},
    {"received", FIELD_U64, RG_DELIVERY, AT(received), NO_HEAD, NULL},
    {"loss_pct",
     FIELD_DOUBLE,
     RG_DELIVERY,
     0,
     0,
     loss_pct,
     NULL,
     true,
     {"loss%", NULL, RF_FIXED, 2, 0, NULL},
     NULL},
    {"rx_dry", FIELD_U64, RG_DELIVERY, AT(rx_dry), NO_HEAD, NULL},
    /* One copy per message is the rule: said only when it is not. */
    {"fanout", FIELD_U64, RG_DELIVERY, offsetof(struct cqp_row, fanout),
     sizeof(uint64_t), NULL, fanned_out, false, NO_HEAD, NULL},
    {"wire_eff_pct",
     FIELD_DOUBLE,
     RG_DELIVERY,
     0,
     0,
     wire_eff_pct,
     has_bw,
     true,
     {"wire eff%", NULL, RF_FIXED, 1, 0, NULL},
     NULL},
    {"lost_exchanges", FIELD_U64, RG_LOST, AT(lost), HEAD("lost", RF_U64),
     NULL},
    {"lat_us", FIELD_LAT, RG_LAT, AT(lat_us), NO_HEAD, lat_heads},
    {"offered_rate", FIELD_DOUBLE, RG_OPEN, AT(offered_rate),
     UNDER("offered/s", RF_RATE), NULL},
    {"achieved_rate", FIELD_DOUBLE, RG_OPEN, AT(achieved_rate),
     UNDER("achieved/s", RF_RATE), NULL},
    {"late_sends", FIELD_U64, RG_OPEN, AT(late_sends), UNDER("late", RF_U64),
     NULL},
    {"arrival_cv", FIELD_DOUBLE, RG_OPEN, AT(arrival_cv), NO_HEAD, NULL},
    {"service_lat_us", FIELD_LAT, RG_OPEN_LAT, AT(service_lat_us), NO_HEAD,
     service_heads},
    {"client_count", FIELD_U64, RG_FANIN, AT(nclients),
     UNDER("clients", RF_U64), NULL},
    {"fairness",
     FIELD_DOUBLE,
     RG_FANIN,
     AT(fairness),
     {"fairness", NULL, RF_FIXED, 3, RG_ALWAYS, NULL},
     NULL},
    {"slowest_mpps",
     FIELD_DOUBLE,
     RG_FANIN,
     0,
     0,
     slowest_mpps,
     NULL,
     true,
     {"slowest[Mpps]", NULL, RF_FIXED, 6, RG_ALWAYS, NULL},
     NULL},
};
#undef AT
#undef HEAD
#undef NO_HEAD
#undef UNDER
const size_t cqp_n_row_fields =
    sizeof(cqp_row_fields) / sizeof(cqp_row_fields[0]);

double cqp_row_double(const struct cqp_report *r, const struct cqp_row *row,
		      const struct row_field *f)
{
	double x;

	if (f->value)
		return f->value(r, row);
	memcpy(&x, (const char *)row + f->offset, sizeof(x));
	return x;
}

bool cqp_row_has(const struct cqp_row *row, enum row_group g)
{
	switch (g) {
	case RG_EVENT:
		return row->side[0] != '\0';
	case RG_LABEL:
		return !row->side[0] && row->label[0];
	case RG_VERB:
		return !row->side[0] && row->verb[0];
	case RG_SIZE:
		return !row->side[0];
	case RG_BW:
		return row->has_bw;
	case RG_DELIVERY:
		return row->has_delivery;
	case RG_LOST:
		return row->has_lost;
	case RG_LAT:
		return row->has_lat;
	case RG_OPEN:
		return row->open_loop;
	case RG_OPEN_LAT:
		return row->open_loop && row->has_lat;
	case RG_FANIN:
		return row->nclients > 0;
	}
	return false;
}

bool cqp_shape_has(const struct shape *s, enum row_group g)
{
	switch (g) {
	case RG_EVENT:
		return s->event;
	case RG_LABEL:
		return !s->event && s->label;
	case RG_VERB:
		return !s->event && s->verb;
	case RG_SIZE:
		return !s->event;
	case RG_BW:
		return s->bw;
	case RG_DELIVERY:
		return s->delivery;
	case RG_LOST:
		return s->lost;
	case RG_LAT:
		return s->lat;
	case RG_OPEN:
		return s->open;
	case RG_OPEN_LAT:
		return s->open && s->lat;
	case RG_FANIN:
		return s->fanin;
	}
	return false;
}
