/* SPDX-License-Identifier: BSD-2-Clause */
/* The human report: the settings, the row table (report_table.c), and
 * the notes under it (delivery, threads, the strategy map, noise, the
 * projection), each folded to CQP_HUMAN_COLS. */
#include "report/report_text.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/perftest.h"
#include "base/version.h"

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
			   struct cqp_text *out)
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
			cqp_text_printf(out,
					" Loss at %" PRIu64
					" B: %.2f%%; the server's "
					"receives ran out %" PRIu64
					" time%s (raise --rx-depth)\n",
					row->bytes, loss, row->rx_dry,
					row->rx_dry == 1 ? "" : "s");
		else
			cqp_text_printf(
			    out,
			    " Loss at %" PRIu64 " B: %.2f%% with receives "
			    "always posted: dropped by the network or the "
			    "device\n",
			    row->bytes, loss);
	}
	if (s->bw && r->dev.wire_overhead)
		cqp_text_printf(
		    out,
		    " Wire efficiency: payload / (payload + %" PRIu32
		    " B a packet on %s)\n",
		    r->dev.wire_overhead, r->dev.wire);
	if (!s->rx_mem || !mem)
		return;
	fmt_bytes(a, sizeof(a),
		  mem->client.has_rx_mem ? mem->client.rx_mem_bytes : 0);
	fmt_bytes(b, sizeof(b),
		  mem->server.has_rx_mem ? mem->server.rx_mem_bytes : 0);
	cqp_text_printf(
	    out, " Receive memory registered: client %s, server %s\n", a, b);
}

/* ---- a group's server: what it holds for its clients ---- */

static void print_server_mem(const struct cqp_report *r, struct cqp_text *out)
{
	const struct cqp_held *h = r->server_mem;
	char all[32], one[32];

	if (!h || r->clients < 2)
		return;
	fmt_bytes(all, sizeof(all), h->registered_bytes);
	fmt_bytes(one, sizeof(one), h->registered_bytes / r->clients);
	cqp_text_printf(out,
			" Held for %u clients: %" PRIu64 " QP%s, %" PRIu64
			" CQ%s, %" PRIu64 " SRQ%s, %" PRIu64
			" receive slots, %s of MRs (%s a client)\n",
			r->clients, h->qps, h->qps == 1 ? "" : "s", h->cqs,
			h->cqs == 1 ? "" : "s", h->srqs,
			h->srqs == 1 ? "" : "s", h->recv_wqes, all, one);
}

/* ---- open loop: a rate the load did not reach ---- */

static void print_open_loop(const struct cqp_report *r, struct cqp_text *out)
{
	for (unsigned i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];
		bool short_of = row->achieved_rate < 0.98 * row->offered_rate;

		if (!row->open_loop || (!row->late_sends && !short_of))
			continue;
		cqp_text_printf(out, " %s%s%s: %.0f/s offered, %.0f/s achieved",
				short_of ? "Rate not reached" : "Late sends",
				row->label[0] ? " in " : "", row->label,
				row->offered_rate, row->achieved_rate);
		if (row->late_sends)
			cqp_text_printf(
			    out,
			    ", %" PRIu64 " request%s sent late (the window "
			    "was full); latency still counts from the "
			    "schedule",
			    row->late_sends, row->late_sends == 1 ? "" : "s");
		cqp_text_printf(out, "%c", '\n');
	}
}

/* ---- --per-thread: each thread's share ---- */

static void print_threads(const struct cqp_report *r, struct cqp_text *out)
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
			cqp_text_printf(out,
					" Threads, %s, %" PRIu64 " B%s%s:\n",
					side ? "server" : "client", row->bytes,
					row->label[0] ? " " : "", row->label);
			for (unsigned t = 0; t < c->nthreads; t++) {
				const struct cqp_thread_cost *tc =
				    &c->threads[t];

				cqp_text_printf(
				    out,
				    "  #%u on CPU %" PRId32 ": %" PRIu64
				    " completions, %" PRIu64
				    " wakeups, CPU %.1f %% (usr/sys "
				    "%.1f/%.1f), %" PRIu64 " foreign, "
				    "%.0f us lock wait\n",
				    t, tc->cpu, tc->completions, tc->wakeups,
				    tc->cpu_pct, tc->cpu_user_pct,
				    tc->cpu_sys_pct, tc->foreign_completions,
				    tc->lock_wait_us);
			}
		}
	}
}

/* ---- the strategy map ---- */

static void print_strategy(const struct cqp_strategy *st, struct cqp_text *out)
{
	if (!st->n)
		return;
	cqp_text_printf(
	    out,
	    " Strategy: at each rate, the least server CPU with a p99 "
	    "within %.0f %% of the best:\n",
	    st->slack_pct);
	for (unsigned i = 0; i < st->n; i++) {
		const struct cqp_choice *c = &st->c[i];
		const char *sep = " (";

		cqp_text_printf(
		    out, "  at %.0f/s: %s, p99 %.1f us, server CPU %.1f %%",
		    c->offered_rate, cqp_chosen_mode(c),
		    c->mode[c->chosen].p99_us,
		    c->mode[c->chosen].server_cpu_pct);
		for (unsigned k = 0; k < c->n; k++) {
			if (k == c->chosen)
				continue;
			cqp_text_printf(out, "%s%s %.1f us, %.1f %%", sep,
					c->mode[k].mode, c->mode[k].p99_us,
					c->mode[k].server_cpu_pct);
			sep = "; ";
		}
		cqp_text_printf(out, "%s", *sep == ';' ? ")\n" : "\n");
	}
	for (unsigned i = 0; i < st->n; i++)
		if (cqp_crossover(st, i))
			cqp_text_printf(
			    out,
			    " Crossover: %s up to %.0f/s, %s from %.0f/s\n",
			    cqp_chosen_mode(&st->c[i - 1]),
			    st->c[i - 1].offered_rate,
			    cqp_chosen_mode(&st->c[i]), st->c[i].offered_rate);
}

/* ---- a machine busy with something else ---- */

/* One line per side whose machine, in some row, was busier than this
 * process, its peer there, irq and softirq explain: the largest share. */
static void print_noise(const struct cqp_report *r, struct cqp_text *out)
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
			cqp_text_printf(
			    out,
			    " Warning: %s machine: %.0f %% of a core busy "
			    "with other processes; figures are suspect\n",
			    side ? "server" : "client", worst);
	}
}

/* A run-wide cost (cm_event_stress) in words, a line per side. */
static void print_run_cost(const struct cqp_report *r, struct cqp_text *out)
{
	for (int side = 0; side < 2; side++) {
		const struct cqp_cost *c =
		    side ? &r->run_server : &r->run_client;

		if (!c->valid)
			continue;
		cqp_text_printf(out,
				" CPU, %s: thread %.1f %% (usr/sys %.1f/%.1f), "
				"process %.1f %%",
				side ? "server" : "client", c->cpu_pct,
				c->cpu_user_pct, c->cpu_sys_pct,
				c->proc_cpu_pct);
		if (c->has_sys)
			cqp_text_printf(
			    out,
			    ";\n   machine: busy %.1f, irq %.1f, softirq %.1f, "
			    "kernel threads %.1f, others %.1f (%% of a "
			    "core)",
			    c->sys_busy_pct, c->sys_irq_pct, c->sys_softirq_pct,
			    c->sys_kthread_pct, c->others_busy_pct);
		cqp_text_printf(out, "%c", '\n');
	}
}

/* ---- run-wide figures ---- */

static void fmt_figure(char *buf, size_t cap, const struct cqp_figure *f)
{
	if (f->integer)
		snprintf(buf, cap, "%.0f", f->value);
	else
		cqp_fmt_fixed(buf, cap, 2, f->value);
}

/* " Summary: a 1, b 2.00" then a line per group. */
static void print_summary(const struct cqp_report *r, struct cqp_text *out)
{
	const char *group = NULL;
	char v[48];

	for (unsigned i = 0; i < r->nsummary; i++) {
		const struct cqp_figure *f = &r->summary[i];

		if (!group || strcmp(group, f->group) != 0) {
			if (group)
				cqp_text_printf(out, "%c", '\n');
			cqp_text_printf(
			    out, " %s:", f->group[0] ? f->group : "Summary");
			group = f->group;
		} else {
			cqp_text_printf(out, "%c", ',');
		}
		fmt_figure(v, sizeof(v), f);
		cqp_text_printf(out, " %s %s", f->key, v);
	}
	if (group)
		cqp_text_printf(out, "%c", '\n');
}

/* ---- the load projection, in words ---- */

static void fmt_bps(char *buf, size_t cap, uint64_t bps)
{
	if (bps >= 1000000000)
		snprintf(buf, cap, "%.6g Gb/s", (double)bps / 1e9);
	else if (bps >= 1000000)
		snprintf(buf, cap, "%.6g Mb/s", (double)bps / 1e6);
	else
		snprintf(buf, cap, "%.6g kb/s", (double)bps / 1e3);
}

static void print_check(const struct cqp_projection_check *pc,
			struct cqp_text *out)
{
	char rate[32], model[32], measured[32];

	if (!pc->valid)
		return;
	cqp_fmt_rate(rate, sizeof(rate), pc->rate, " ");
	cqp_fmt_rate(model, sizeof(model), pc->model_wakeups_per_s, " ");
	cqp_fmt_rate(measured, sizeof(measured), pc->measured_wakeups_per_s,
		     " ");
	cqp_text_printf(
	    out,
	    " Projection check at %s msg/s (server):\n   model %s wakeups/s, "
	    "%.1f%% of a core; measured %s wakeups/s, %.1f%%\n",
	    rate, model, pc->model_cpu_pct, measured, pc->measured_cpu_pct);
}

static void print_projection(const struct cqp_projection *pr,
			     struct cqp_text *out)
{
	char rate[32], per_s[32], wakes[32];

	if (!pr->valid)
		return;
	/* cq_event_lat costs a wakeup from the client's event-mode row,
	 * whichever side prints. */
	if (pr->have_cost)
		cqp_text_printf(
		    out,
		    " Wakeup cost: %.2f usec of CPU per wakeup (event "
		    "mode, %s)\n",
		    pr->wakeup_cost_us, pr->server_side ? "server" : "client");
	if (!pr->rate_bps)
		return; /* no --project: the cost alone */
	fmt_bps(rate, sizeof(rate), pr->rate_bps);
	cqp_fmt_rate(per_s, sizeof(per_s), pr->compl_per_s, " ");
	cqp_fmt_rate(wakes, sizeof(wakes), pr->wakeups_per_s, " ");
	cqp_text_printf(
	    out,
	    " Projection at %s, %" PRIu64 " B messages, %" PRIu32
	    " completion%s per wakeup:\n   %s completions/s, %s wakeups/s",
	    rate, pr->bytes, pr->batch, pr->batch == 1 ? "" : "s", per_s,
	    wakes);
	if (pr->have_cost)
		cqp_text_printf(out, ", %.1f%% of a core\n", pr->core_pct);
	else
		cqp_text_printf(
		    out, "%s",
		    ";\n   no event-mode figures to cost a wakeup (use "
		    "--cq-mode event or --compare-modes)\n");
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

/* What a latency figure is: one-way, a round trip, or for READ and
 * atomics the operation from post to completion. */
static const char *latency_kind(const struct cqp_params *p)
{
	uint32_t verbs = p ? cqp_params_verbs(p) : 1u << CQP_VERB_SEND;
	uint32_t passive = 1u << CQP_VERB_READ | 1u << CQP_VERB_ATOMIC;

	if (p && p->rtt)
		return " Latency: full round trip, in usec\n";
	if (!(verbs & ~passive))
		return " Latency: each operation from post to completion (a "
		       "round trip, not halved), in usec\n";
	if (verbs & passive)
		return " Latency: one-way = round trip / 2, in usec; read and "
		       "atomic rows: post to completion, not halved\n";
	return " Latency: one-way = round trip / 2, in usec\n";
}

static void print_settings(const struct cqp_report *r, const struct shape *s,
			   struct cqp_text *out)
{
	const struct cqp_device_info *d = &r->dev;
	const struct cqp_params *p = r->params;
	char hint[160];

	cqp_text_printf(out, " %s (%s, cqperf %s)\n",
			r->title ? r->title : "cqperf", cqp_tool_name(r->tool),
			CQP_VERSION);
	if (r->tool == CQP_TOOL_CM_EVENT_STRESS) {
		if (p && p->ib_dev[0])
			cqp_text_printf(out,
					" Device: %s (-d), checked against "
					"RDMA CM's choice on each connection\n",
					p->ib_dev);
		else
			cqp_text_printf(
			    out, "%s",
			    " Device: RDMA CM's choice for each connection\n");
		return;
	}
	cqp_text_printf(
	    out, " Device: %s  port %" PRIu32 "  GID index %" PRId32,
	    d->name[0] ? d->name : "(unknown)", d->port, d->gid_index);
	if (d->gid[0])
		cqp_text_printf(out, " (%s%s%s)", d->gid,
				d->gid_type[0] ? ", " : "", d->gid_type);
	cqp_text_printf(out, "  active MTU %" PRIu32, d->active_mtu);
	if (d->path_mtu)
		cqp_text_printf(out, "  path MTU %" PRIu32, d->path_mtu);
	cqp_text_printf(out, "  link %s%s",
			d->link_layer[0] ? d->link_layer : "(unknown)",
			d->path_mtu && !d->grh ? " (LID routed)" : "");
	if (d->has_inline)
		cqp_text_printf(out, "  inline %" PRIu32, d->inline_size);
	cqp_text_printf(out, "%c", '\n');
	if (p && tool_uses(r->tool, offsetof(struct cqp_params, cq_mode))) {
		char spins[96], batch[16], mode[32];

		cqp_option_format(cqp_option_find("spin-us"), p, spins,
				  sizeof(spins));
		cqp_option_format(cqp_option_find("poll-batch"), p, batch,
				  sizeof(batch));
		cqp_mode_word(p, p->cq_mode, mode, sizeof(mode));
		cqp_text_printf(out,
				" Completions: mode %s  poll batch %s"
				"  ack batch %" PRIu32 "  spin %s"
				" us  solicited %s  nonblock %s",
				p->compare_modes ? "per row" : mode, batch,
				p->ack_batch, spins,
				p->solicited ? "on" : "off",
				p->nonblock ? "on" : "off");
		if (p->cq_mod_count)
			cqp_text_printf(
			    out, "  CQ moderation %" PRIu32 "/%" PRIu32 " us",
			    p->cq_mod_count, p->cq_mod_usec);
		cqp_text_printf(out, "%c", '\n');
	}
	if (p && d->rd_atom)
		cqp_text_printf(out,
				" Verbs: READs and atomics in flight per QP at "
				"most %" PRIu32 " (both devices' rd_atom)%s\n",
				d->rd_atom,
				d->rd_atom < p->tx_depth
				    ? ", not --tx-depth: their window"
				    : "");
	if (cqp_perftest_diff(r->tool, p, d, hint, sizeof(hint)))
		cqp_text_printf(
		    out, " Unlike perftest: %s; see cqperf(7), PERFTEST\n",
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
			cqp_text_printf(
			    out,
			    " Paced: %s messages/s over all QPs, %s "
			    "arrivals;\n   the sender polls (load), the "
			    "receiver reaps in %s\n",
			    rates, kind, cqp_cq_mode_name(p->cq_mode));
		else
			cqp_text_printf(
			    out,
			    " Open loop: %s requests/s, %s arrivals, at "
			    "most %" PRIu32 " in flight;\n   the client %s "
			    "(load), the server reaps in %s (the "
			    "service)\n",
			    rates, kind,
			    p->tx_depth < p->rx_depth ? p->tx_depth
						      : p->rx_depth,
			    cqp_cq_mode_polls(p->client_cq_mode) ? "polls"
			    : p->client_cq_mode == CQP_CQ_EVENT
				? "sleeps on events"
				: "spins, then sleeps (hybrid)",
			    p->compare_modes ? "each row's mode"
					     : cqp_cq_mode_name(p->cq_mode));
		if (s->lat)
			cqp_text_printf(out, "%s",
					" Latency in usec: response = reply - "
					"scheduled send (a round trip); svc = "
					"reply - actual post\n");
		return;
	}
	/* Halved or not, the figures must say which they are.  A READ or
	 * an atomic is one operation, never halved. */
	if (s->lat)
		cqp_text_printf(out, "%s", latency_kind(p));
}

void cqp_report_human(const struct cqp_report *r, FILE *out)
{
	struct shape s = cqp_report_shape(r);
	struct cqp_text t = {.l = {.len = 0}, .out = out};
	size_t width;

	/* With no rows (an early failure) the header still says what
	 * kind of table it would have been. */
	if (!s.bw && !s.lat && !s.event)
		s.bw = true;
	width = cqp_human_table(r, &s, NULL);
	if (width < 80)
		width = 80;
	if (width > CQP_HUMAN_COLS && !(r->params && r->params->wide))
		width = CQP_HUMAN_COLS;
	rule(out, width);
	print_settings(r, &s, &t);
	rule(out, width);
	cqp_human_table(r, &s, out);
	rule(out, width);
	print_noise(r, &t);
	print_threads(r, &t);
	print_open_loop(r, &t);
	print_delivery(r, &s, &t);
	print_server_mem(r, &t);
	print_summary(r, &t);
	print_run_cost(r, &t);
	print_projection(&r->projection, &t);
	print_check(&r->check, &t);
	print_strategy(&r->strategy, &t);
	if (r->error)
		cqp_text_printf(&t, "partial results: %s\n", r->error);
}
