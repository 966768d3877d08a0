/* SPDX-License-Identifier: BSD-2-Clause */
/* The CSV report: a header line, then a line per row (cqperf(7)). */
#include "report/report_fields.h"

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

/* The row columns some row has (cqp_row_fields), a latency summary as
 * eight: KEY_min ... KEY_max.  The first has no separator before it. */
static void csv_row_head(FILE *out, const struct shape *s)
{
	const char *sep = "";

	for (size_t i = 0; i < cqp_n_row_fields; i++) {
		const struct row_field *f = &cqp_row_fields[i];

		if (!f->csv || !cqp_shape_has(s, f->group))
			continue;
		if (f->type != FIELD_LAT) {
			fprintf(out, "%s%s", sep, f->key);
			sep = ",";
			continue;
		}
		for (size_t k = 0; k < N_LAT_FIELDS; k++) {
			fprintf(out, "%s%s_%s", sep, f->key,
				cqp_lat_fields[k].key);
			sep = ",";
		}
	}
}

/* One row's cells under csv_row_head: empty where the row lacks them. */
static void csv_row(FILE *out, const struct cqp_report *r,
		    const struct shape *s, const struct cqp_row *row)
{
	bool first = true;

	for (size_t i = 0; i < cqp_n_row_fields; i++) {
		const struct row_field *f = &cqp_row_fields[i];
		const char *at = (const char *)row + f->offset;
		bool has = cqp_row_has(row, f->group);

		if (!f->csv || !cqp_shape_has(s, f->group))
			continue;
		for (size_t k = 0;
		     k < (f->type == FIELD_LAT ? N_LAT_FIELDS : 1); k++) {
			if (!first)
				fputc(',', out);
			first = false;
			if (!has)
				continue;
			if (f->type == FIELD_TEXT)
				csv_text(out, at);
			else if (f->type == FIELD_U64)
				fprintf(out, "%" PRIu64, *(const uint64_t *)at);
			else if (f->type == FIELD_LAT)
				csv_double(out,
					   cqp_lat_value(
					       (const struct cqp_summary *)at,
					       &cqp_lat_fields[k]));
			else
				csv_double(out, f->value ? f->value(r, row)
							 : *(const double *)at);
		}
	}
}

void cqp_report_csv(const struct cqp_report *r, FILE *out)
{
	struct shape s = cqp_report_shape(r);
	unsigned i;
	const char *e;

	csv_row_head(out, &s);
	if (s.client)
		csv_cost_head(out, "client", &s);
	if (s.server)
		csv_cost_head(out, "server", &s);
	fputc('\n', out);

	for (i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		csv_row(out, r, &s, row);
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
