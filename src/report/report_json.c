/* SPDX-License-Identifier: BSD-2-Clause */
/* The JSON report: one document per run in schema cqperf/1 (cqperf(7)
 * OUTPUT, doc/cqperf-1.schema.json). */
#include "report/report_fields.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/hwcount.h"
#include "base/json.h"
#include "base/version.h"

/* ---- JSON ---- */

static void json_hw(struct cqp_json *j, const struct cqp_hw_counters *hw)
{
	cqp_json_obj_begin(j, "hw_counters");
	for (unsigned i = 0; i < hw->n; i++)
		cqp_json_u64(j, hw->c[i].name, hw->c[i].value);
	cqp_json_obj_end(j);
}

static void json_thread_field(struct cqp_json *j, const struct thread_field *f,
			      const struct cqp_thread_cost *tc)
{
	const char *at = (const char *)tc + f->offset;
	int32_t i32;
	uint64_t u64;
	double d;

	switch (f->type) {
	case FIELD_I32:
		memcpy(&i32, at, sizeof(i32));
		cqp_json_i64(j, f->key, i32);
		break;
	case FIELD_U64:
		memcpy(&u64, at, sizeof(u64));
		cqp_json_u64(j, f->key, u64);
		break;
	default:
		memcpy(&d, at, sizeof(d));
		cqp_json_double(j, f->key, d);
		break;
	}
}

static void json_cost(struct cqp_json *j, const char *key,
		      const struct cqp_cost *c, const struct cqp_row *row,
		      const struct cqp_hw_counters *hw)
{
	size_t i;

	cqp_json_obj_begin(j, key);
	for (i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cqp_cost_fields[i];

		if (!cqp_field_present(c, f))
			continue;
		if (f->type == FIELD_DOUBLE)
			cqp_json_double(j, f->key, cqp_field_double(c, f));
		else if (f->type == FIELD_BOOL)
			cqp_json_bool(j, f->key, cqp_field_u64(c, f) != 0);
		else
			cqp_json_u64(j, f->key, cqp_field_u64(c, f));
	}
	for (i = 0; i < N_DERIVED_FIELDS; i++)
		cqp_json_double(j, cqp_derived_fields[i].key,
				cqp_derived_fields[i].value(c, row));
	if (hw)
		json_hw(j, hw);
	if (c->nthreads) {
		cqp_json_arr_begin(j, "threads");
		for (unsigned t = 0; t < c->nthreads; t++) {
			const struct cqp_thread_cost *tc = &c->threads[t];

			cqp_json_obj_begin(j, NULL);
			for (size_t f = 0; f < cqp_n_thread_fields; f++)
				json_thread_field(j, &cqp_thread_fields[f], tc);
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

/* Every key always there, null when unknown: a stable schema. */
static void json_projection(struct cqp_json *j, const struct cqp_projection *pr)
{
	size_t i;

	cqp_json_obj_begin(j, "projection");
	for (i = 0; i < N_PROJ_FIELDS; i++) {
		const struct proj_field *f = &cqp_proj_fields[i];

		if (!cqp_proj_known(pr, f))
			cqp_json_null(j, f->key);
		else if (f->type == FIELD_DOUBLE)
			cqp_json_double(j, f->key, cqp_proj_double(pr, f));
		else
			cqp_json_u64(j, f->key, cqp_proj_uint(pr, f));
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
		cqp_json_str(j, "choice", cqp_chosen_mode(c));
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
		if (!cqp_crossover(st, i))
			continue;
		cqp_json_obj_begin(j, NULL);
		cqp_json_double(j, "offered_rate", st->c[i].offered_rate);
		cqp_json_u64(j, "bytes", st->c[i].bytes);
		cqp_json_str(j, "from", cqp_chosen_mode(&st->c[i - 1]));
		cqp_json_str(j, "to", cqp_chosen_mode(&st->c[i]));
		cqp_json_obj_end(j);
	}
	cqp_json_arr_end(j);
}

static void json_lat(struct cqp_json *j, const char *key,
		     const struct cqp_summary *s)
{
	cqp_json_obj_begin(j, key);
	for (size_t k = 0; k < N_LAT_FIELDS; k++)
		cqp_json_double(j, cqp_lat_fields[k].key,
				cqp_lat_value(s, &cqp_lat_fields[k]));
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
			if (o->flags & CQP_OPTF_AUTO &&
			    !*(const uint32_t *)field)
				cqp_json_str(j, key, "auto");
			else
				cqp_json_u64(j, key, *(const uint32_t *)field);
			break;
		case CQP_OPT_MODES:
			/* The flag as it always was; a list as its words. */
			if (!p->compare_list) {
				cqp_json_bool(j, key, p->compare_modes);
				break;
			}
			cqp_option_format(o, p, val, sizeof(val));
			cqp_json_str(j, key, val);
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

/* A row's own figures, as cqp_row_fields lists them. */
static void json_row(struct cqp_json *j, const struct cqp_report *r,
		     const struct cqp_row *row)
{
	for (size_t i = 0; i < cqp_n_row_fields; i++) {
		const struct row_field *f = &cqp_row_fields[i];
		const char *at = (const char *)row + f->offset;

		if (!cqp_row_has(row, f->group) ||
		    (f->json_if && !f->json_if(row)))
			continue;
		if (f->type == FIELD_TEXT)
			cqp_json_str(j, f->key, at);
		else if (f->type == FIELD_U64)
			cqp_json_u64(j, f->key, *(const uint64_t *)at);
		else if (f->type == FIELD_LAT)
			json_lat(j, f->key, (const struct cqp_summary *)at);
		else
			cqp_json_double(j, f->key,
					f->value ? f->value(r, row)
						 : *(const double *)at);
	}
}

/* A group's clients, each with its own figures (rates as it measured
 * them, delivery as this server counted it). */
static void json_clients(struct cqp_json *j, const struct cqp_row *row)
{
	cqp_json_arr_begin(j, "clients");
	for (uint64_t i = 0; i < row->nclients; i++) {
		const struct cqp_client_figs *c = &row->clients[i];

		cqp_json_obj_begin(j, NULL);
		cqp_json_str(j, "address", c->addr);
		cqp_json_double(j, "msg_rate_mpps", c->msg_rate_mpps);
		cqp_json_double(j, "bw_avg_gbps", c->bw_avg_gbps);
		if (c->has_delivery) {
			struct cqp_row one = {.has_delivery = true,
					      .sent = c->sent,
					      .received = c->received,
					      .fanout = row->fanout};

			cqp_json_u64(j, "sent", c->sent);
			cqp_json_u64(j, "received", c->received);
			cqp_json_double(j, "loss_pct", cqp_row_loss_pct(&one));
			cqp_json_u64(j, "rx_dry", c->rx_dry);
		}
		cqp_json_double(j, "cpu_pct", c->cpu_pct);
		cqp_json_obj_end(j);
	}
	cqp_json_arr_end(j);
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
	if (ci.kernel_clocksource && ci.kernel_clocksource[0])
		cqp_json_str(j, "kernel_clocksource", ci.kernel_clocksource);
	if (ci.why_not_tsc)
		cqp_json_str(j, "why_not_tsc", ci.why_not_tsc);
	cqp_json_obj_end(j);
}

/* The server's queues and memory, in total and per client. */
static void json_server_mem(struct cqp_json *j, const struct cqp_held *h,
			    unsigned clients)
{
	cqp_json_obj_begin(j, "server_mem");
	cqp_json_u64(j, "clients", clients);
	for (size_t i = 0; i < cqp_n_held_fields; i++)
		cqp_json_u64(j, cqp_held_fields[i].key,
			     cqp_held_value(h, &cqp_held_fields[i]));
	cqp_json_obj_begin(j, "per_client");
	for (size_t i = 0; i < cqp_n_held_fields; i++)
		cqp_json_double(j, cqp_held_fields[i].key,
				(double)cqp_held_value(h, &cqp_held_fields[i]) /
				    (clients ? clients : 1));
	cqp_json_obj_end(j);
	cqp_json_obj_end(j);
}

void cqp_report_json(const struct cqp_report *r, FILE *out)
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
	/* The machine-wide figures of both sides are then one machine's. */
	cqp_json_bool(&j, "one_machine", r->one_machine);
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
	if (d->rd_atom)
		cqp_json_u64(&j, "rd_atom", d->rd_atom);
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
		json_row(&j, r, row);
		if (row->nclients)
			json_clients(&j, row);
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
	if (r->server_mem)
		json_server_mem(&j, r->server_mem, r->clients);
	if (r->error)
		cqp_json_str(&j, "error", r->error);
	cqp_json_obj_end(&j);
	cqp_json_finish(&j);
}
