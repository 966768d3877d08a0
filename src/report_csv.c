/* SPDX-License-Identifier: BSD-2-Clause */
/* The CSV report: a header line, then a line per row (cqperf(7)). */
#include "report_fields.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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
			fprintf(out, ",%s_%s", side, cqp_cost_fields[i].key);
	for (i = 0; i < N_DERIVED_FIELDS; i++)
		fprintf(out, ",%s_%s", side, cqp_derived_fields[i].key);
}

/* One figure of the cost record as CSV writes it. */
static void csv_field(FILE *out, const struct cqp_cost *c,
		      const struct cost_field *f)
{
	if (f->type == FIELD_DOUBLE)
		csv_double(out, cqp_field_double(c, f));
	else if (f->type == FIELD_BOOL)
		fputs(cqp_field_u64(c, f) ? "true" : "false", out);
	else
		fprintf(out, "%" PRIu64, cqp_field_u64(c, f));
}

static void csv_cost(FILE *out, const struct cqp_cost *c, const struct shape *s,
		     const struct cqp_row *row)
{
	size_t i;

	for (i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cqp_cost_fields[i];

		if (!s->field[i])
			continue;
		fputc(',', out);
		if (c->valid && cqp_field_present(c, f))
			csv_field(out, c, f);
	}
	for (i = 0; i < N_DERIVED_FIELDS; i++) {
		fputc(',', out);
		if (c->valid)
			csv_double(out, cqp_derived_fields[i].value(c, row));
	}
}

/* A comment line, so the table stays one shape; unknown is empty. */
static void csv_projection(FILE *out, const struct cqp_projection *pr)
{
	size_t i;

	fputs("# projection:", out);
	for (i = 0; i < N_PROJ_FIELDS; i++) {
		const struct proj_field *f = &cqp_proj_fields[i];

		fprintf(out, " %s=", f->key);
		if (!cqp_proj_known(pr, f))
			continue;
		if (f->type == FIELD_DOUBLE)
			csv_double(out, cqp_proj_double(pr, f));
		else
			fprintf(out, "%" PRIu64, cqp_proj_uint(pr, f));
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
		const struct cost_field *f = &cqp_cost_fields[i];

		if (!cqp_field_present(c, f))
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
		csv_double(out, cqp_lat_value(&row->service_lat_us,
					      &cqp_lat_fields[k]));
	}
}

void cqp_report_csv(const struct cqp_report *r, FILE *out)
{
	struct shape s = cqp_report_shape(r);
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
			fprintf(out, ",lat_us_%s", cqp_lat_fields[k].key);
	if (s.open) {
		fputs(",offered_rate,achieved_rate,late_sends,arrival_cv", out);
		for (k = 0; s.lat && k < N_LAT_FIELDS; k++)
			fprintf(out, ",service_lat_us_%s",
				cqp_lat_fields[k].key);
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
					csv_double(
					    out,
					    cqp_lat_value(&row->lat_us,
							  &cqp_lat_fields[k]));
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
			c->offered_rate, c->bytes, cqp_chosen_mode(c));
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
