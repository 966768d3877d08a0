#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "kv.h"

#ifndef CQP_VERSION
#define CQP_VERSION "dev"
#endif

/* ---- one description of the cost record, for JSON, CSV and kv ---- */

enum field_type { FIELD_DOUBLE, FIELD_U64 };

static const struct cost_field {
	const char *key;
	enum field_type type;
	size_t offset;
} cost_fields[] = {
    {"cpu_pct", FIELD_DOUBLE, offsetof(struct cqp_cost, cpu_pct)},
    {"seconds", FIELD_DOUBLE, offsetof(struct cqp_cost, seconds)},
    {"completions", FIELD_U64, offsetof(struct cqp_cost, completions)},
    {"polls", FIELD_U64, offsetof(struct cqp_cost, polls)},
    {"empty_polls", FIELD_U64, offsetof(struct cqp_cost, empty_polls)},
    {"wakeups", FIELD_U64, offsetof(struct cqp_cost, wakeups)},
    {"events_acked", FIELD_U64, offsetof(struct cqp_cost, events_acked)},
    {"spin_completions", FIELD_U64,
     offsetof(struct cqp_cost, spin_completions)},
    {"sleep_completions", FIELD_U64,
     offsetof(struct cqp_cost, sleep_completions)},
};
#define N_COST_FIELDS (sizeof(cost_fields) / sizeof(cost_fields[0]))

static double field_double(const struct cqp_cost *c, const struct cost_field *f)
{
	return *(const double *)((const char *)c + f->offset);
}

static uint64_t field_u64(const struct cqp_cost *c, const struct cost_field *f)
{
	return *(const uint64_t *)((const char *)c + f->offset);
}

/* Derived figures: NaN when undefined, which JSON renders as null and
 * the other formats as "-" or an empty cell. */
static double compl_per_wakeup(const struct cqp_cost *c)
{
	return c->wakeups ? (double)c->completions / (double)c->wakeups : NAN;
}

static double wakeups_per_s(const struct cqp_cost *c)
{
	return c->seconds > 0 ? (double)c->wakeups / c->seconds : NAN;
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
};

static struct shape report_shape(const struct cqp_report *r)
{
	struct shape s = {0};
	unsigned i;

	for (i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		s.label |= row->label[0] != '\0';
		s.bw |= row->has_bw;
		s.lat |= row->has_lat;
		s.client |= row->client.valid;
		s.server |= row->server.valid;
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
#define NUM_W 10 /* fits every figure we print (up to ~1e10) */
#define CPU_W 12 /* "client: CPU%" */

static void cost_head(struct line *l, const char *side, bool lat)
{
	char head[32];

	snprintf(head, sizeof(head), "%s: CPU%%", side);
	line_cell(l, CPU_W, head);
	line_cell(l, NUM_W, "compl/wake");
	line_cell(l, NUM_W, "wake/s");
	if (lat)
		line_cell(l, NUM_W, "wake/iter");
}

static void cost_cells(struct line *l, const struct cqp_cost *c, bool lat,
		       uint64_t iterations)
{
	char v[32];

	if (!c->valid) {
		line_cell(l, CPU_W, "-");
		line_cell(l, NUM_W, "-");
		line_cell(l, NUM_W, "-");
		if (lat)
			line_cell(l, NUM_W, "-");
		return;
	}
	fmt_double(v, sizeof(v), "%.1f", c->cpu_pct);
	line_cell(l, CPU_W, v);
	fmt_double(v, sizeof(v), "%.2f", compl_per_wakeup(c));
	line_cell(l, NUM_W, v);
	fmt_double(v, sizeof(v), "%.0f", wakeups_per_s(c));
	line_cell(l, NUM_W, v);
	if (lat) {
		fmt_double(v, sizeof(v), "%.3f",
			   iterations ? (double)c->wakeups / (double)iterations
				      : NAN);
		line_cell(l, NUM_W, v);
	}
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

static void print_settings(const struct cqp_report *r, FILE *out)
{
	const struct cqp_device_info *d = &r->dev;
	const struct cqp_params *p = r->params;

	fprintf(out, " %s (%s, cqperf %s)\n", r->title ? r->title : "cqperf",
		cqp_tool_name(r->tool), CQP_VERSION);
	fprintf(out, " Device: %s  port %" PRIu32 "  GID index %" PRId32,
		d->name[0] ? d->name : "(unknown)", d->port, d->gid_index);
	if (d->gid[0])
		fprintf(out, " (%s)", d->gid);
	fprintf(out, "  active MTU %" PRIu32 "  link %s\n", d->active_mtu,
		d->link_layer[0] ? d->link_layer : "(unknown)");
	if (!p || !tool_uses(r->tool, offsetof(struct cqp_params, cq_mode)))
		return;
	fprintf(out,
		" Completions: mode %s  poll batch %" PRIu32
		"  ack batch %" PRIu32 "  spin %" PRIu32
		" us  solicited %s  nonblock %s",
		cqp_cq_mode_name(p->cq_mode), p->poll_batch, p->ack_batch,
		p->spin_us, p->solicited ? "on" : "off",
		p->nonblock ? "on" : "off");
	if (p->cq_mod_count)
		fprintf(out, "  CQ moderation %" PRIu32 "/%" PRIu32 " us",
			p->cq_mod_count, p->cq_mod_usec);
	fputc('\n', out);
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
	if (!s.bw && !s.lat)
		s.bw = true;
	for (i = 0; i < r->nrows; i++)
		label_w = max_int(label_w, (int)strlen(r->rows[i].label));

	if (s.label)
		line_cell(&l, label_w, "mode");
	line_cell(&l, NUM_W, "#bytes");
	line_cell(&l, 11, "#iterations");
	if (s.bw) {
		line_cell(&l, 15,
			  gbits ? "BW peak[Gb/sec]" : "BW peak[MB/sec]");
		line_cell(&l, 18,
			  gbits ? "BW average[Gb/sec]" : "BW average[MB/sec]");
		line_cell(&l, 13, "MsgRate[Mpps]");
	}
	if (s.lat)
		for (k = 0; k < N_LAT_FIELDS; k++)
			line_cell(&l, max_int(NUM_W, (int)strlen(lat_heads[k])),
				  lat_heads[k]);
	if (s.client)
		cost_head(&l, "client", s.lat);
	if (s.server)
		cost_head(&l, "server", s.lat);

	width = l.len;
	while (width > 0 && l.buf[width - 1] == ' ')
		width--;
	if (width < 80)
		width = 80;
	rule(out, width);
	print_settings(r, out);
	rule(out, width);
	line_emit(&l, out);

	for (i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		l.len = 0;
		if (s.label)
			line_cell(&l, label_w,
				  row->label[0] ? row->label : "-");
		snprintf(v, sizeof(v), "%" PRIu64, row->bytes);
		line_cell(&l, NUM_W, v);
		snprintf(v, sizeof(v), "%" PRIu64, row->iterations);
		line_cell(&l, 11, v);
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
		if (s.client)
			cost_cells(&l, &row->client, s.lat, row->iterations);
		if (s.server)
			cost_cells(&l, &row->server, s.lat, row->iterations);
		line_emit(&l, out);
	}
	rule(out, width);
	if (r->error)
		fprintf(out, "partial results: %s\n", r->error);
}

/* ---- JSON ---- */

static void json_cost(struct cqp_json *j, const char *key,
		      const struct cqp_cost *c)
{
	size_t i;

	cqp_json_obj_begin(j, key);
	for (i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cost_fields[i];

		if (f->type == FIELD_DOUBLE)
			cqp_json_double(j, f->key, field_double(c, f));
		else
			cqp_json_u64(j, f->key, field_u64(c, f));
	}
	cqp_json_double(j, "compl_per_wakeup", compl_per_wakeup(c));
	cqp_json_double(j, "wakeups_per_s", wakeups_per_s(c));
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
			cqp_json_u64(j, key, *(const uint64_t *)field);
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

static void print_json(const struct cqp_report *r, FILE *out)
{
	const struct cqp_device_info *d = &r->dev;
	struct cqp_json j;
	unsigned i;
	size_t k;

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
	cqp_json_obj_end(&j);

	cqp_json_arr_begin(&j, "results");
	for (i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		cqp_json_obj_begin(&j, NULL);
		if (row->label[0])
			cqp_json_str(&j, "label", row->label);
		cqp_json_u64(&j, "bytes", row->bytes);
		cqp_json_u64(&j, "iterations", row->iterations);
		if (row->has_bw) {
			cqp_json_double(&j, "bw_peak_gbps", row->bw_peak_gbps);
			cqp_json_double(&j, "bw_avg_gbps", row->bw_avg_gbps);
			cqp_json_double(&j, "msg_rate_mpps",
					row->msg_rate_mpps);
		}
		if (row->has_lat) {
			cqp_json_obj_begin(&j, "lat_us");
			for (k = 0; k < N_LAT_FIELDS; k++)
				cqp_json_double(
				    &j, lat_fields[k].key,
				    lat_value(&row->lat_us, &lat_fields[k]));
			cqp_json_obj_end(&j);
		}
		if (row->client.valid)
			json_cost(&j, "client", &row->client);
		if (row->server.valid)
			json_cost(&j, "server", &row->server);
		cqp_json_obj_end(&j);
	}
	cqp_json_arr_end(&j);
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

static void csv_cost_head(FILE *out, const char *side)
{
	size_t i;

	for (i = 0; i < N_COST_FIELDS; i++)
		fprintf(out, ",%s_%s", side, cost_fields[i].key);
	fprintf(out, ",%s_compl_per_wakeup,%s_wakeups_per_s", side, side);
}

static void csv_cost(FILE *out, const struct cqp_cost *c)
{
	size_t i;

	for (i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cost_fields[i];

		fputc(',', out);
		if (!c->valid)
			continue;
		if (f->type == FIELD_DOUBLE)
			csv_double(out, field_double(c, f));
		else
			fprintf(out, "%" PRIu64, field_u64(c, f));
	}
	fputc(',', out);
	if (c->valid)
		csv_double(out, compl_per_wakeup(c));
	fputc(',', out);
	if (c->valid)
		csv_double(out, wakeups_per_s(c));
}

static void print_csv(const struct cqp_report *r, FILE *out)
{
	struct shape s = report_shape(r);
	unsigned i;
	size_t k;
	const char *e;

	if (s.label)
		fputs("label,", out);
	fputs("bytes,iterations", out);
	if (s.bw)
		fputs(",bw_peak_gbps,bw_avg_gbps,msg_rate_mpps", out);
	if (s.lat)
		for (k = 0; k < N_LAT_FIELDS; k++)
			fprintf(out, ",lat_us_%s", lat_fields[k].key);
	if (s.client)
		csv_cost_head(out, "client");
	if (s.server)
		csv_cost_head(out, "server");
	fputc('\n', out);

	for (i = 0; i < r->nrows; i++) {
		const struct cqp_row *row = &r->rows[i];

		if (s.label) {
			csv_text(out, row->label);
			fputc(',', out);
		}
		fprintf(out, "%" PRIu64 ",%" PRIu64, row->bytes,
			row->iterations);
		if (s.bw) {
			fputc(',', out);
			csv_double(out, row->has_bw ? row->bw_peak_gbps : NAN);
			fputc(',', out);
			csv_double(out, row->has_bw ? row->bw_avg_gbps : NAN);
			fputc(',', out);
			csv_double(out, row->has_bw ? row->msg_rate_mpps : NAN);
		}
		if (s.lat)
			for (k = 0; k < N_LAT_FIELDS; k++) {
				fputc(',', out);
				if (row->has_lat)
					csv_double(out,
						   lat_value(&row->lat_us,
							     &lat_fields[k]));
			}
		if (s.client)
			csv_cost(out, &row->client);
		if (s.server)
			csv_cost(out, &row->server);
		fputc('\n', out);
	}
	if (r->error) {
		/* One comment line whatever the message holds. */
		fputs("# error: ", out);
		for (e = r->error; *e; e++)
			fputc((unsigned char)*e < 0x20 ? ' ' : *e, out);
		fputc('\n', out);
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

void cqp_cost_encode(const struct cqp_cost *c, struct cqp_kv_writer *w)
{
	size_t i;

	/* The derived figures (per wakeup, per second) are not sent: the
	 * receiver computes them from these. */
	for (i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cost_fields[i];

		if (f->type == FIELD_DOUBLE)
			cqp_kv_add_double(w, f->key, field_double(c, f));
		else
			cqp_kv_add_u64(w, f->key, field_u64(c, f));
	}
}

int cqp_cost_decode(struct cqp_cost *c, const char *text, size_t len)
{
	struct cqp_cost tmp = {.valid = true};
	size_t i;

	for (i = 0; i < N_COST_FIELDS; i++) {
		const struct cost_field *f = &cost_fields[i];
		char *dst = (char *)&tmp + f->offset;
		int rc;

		if (f->type == FIELD_DOUBLE)
			rc =
			    cqp_kv_get_double(text, len, f->key, (double *)dst);
		else
			rc = cqp_kv_get_u64(text, len, f->key, (uint64_t *)dst);
		if (rc < 0) {
			/* kv named the key; say whose record it was.  The
			 * copy: cqp_fail formats into the buffer it reads. */
			char why[256];

			snprintf(why, sizeof(why), "%s", cqp_errmsg());
			return cqp_fail((enum cqp_errcode) - rc,
					"completion cost figures: %s", why);
		}
	}
	/* Only a complete record replaces the caller's. */
	*c = tmp;
	return 0;
}
