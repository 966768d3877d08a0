/* SPDX-License-Identifier: BSD-2-Clause */
#include "report/results.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "report/report_fields.h"

/* The latency summary as kv keys PREFIXlat_us_min ... PREFIXlat_us_max. */
static void lat_encode_as(const struct cqp_summary *s, const char *prefix,
			  struct cqp_kv_writer *w)
{
	char key[64];

	for (unsigned i = 0; i < N_LAT_FIELDS; i++) {
		snprintf(key, sizeof(key), "%slat_us_%s", prefix,
			 cqp_lat_fields[i].key);
		cqp_kv_add_double(w, key, cqp_lat_value(s, &cqp_lat_fields[i]));
	}
}

static int lat_decode_as(struct cqp_summary *s, const char *prefix,
			 const char *text, size_t len)
{
	char key[64];

	for (unsigned i = 0; i < N_LAT_FIELDS; i++) {
		int rc;

		snprintf(key, sizeof(key), "%slat_us_%s", prefix,
			 cqp_lat_fields[i].key);
		rc = cqp_kv_get_double(
		    text, len, key,
		    (double *)((char *)s + cqp_lat_fields[i].offset));
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

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* A row's delivery counters, each sent when the bool at `has` is set. */
static const struct delivery_field {
	const char *key;
	size_t off, has;
} delivery_fields[] = {
    {"sent", offsetof(struct cqp_row, sent),
     offsetof(struct cqp_row, has_delivery)},
    {"fanout", offsetof(struct cqp_row, fanout),
     offsetof(struct cqp_row, has_delivery)},
    {"received", offsetof(struct cqp_row, received),
     offsetof(struct cqp_row, has_delivery)},
    {"rx_dry", offsetof(struct cqp_row, rx_dry),
     offsetof(struct cqp_row, has_delivery)},
    {"lost", offsetof(struct cqp_row, lost),
     offsetof(struct cqp_row, has_lost)},
};
#define N_DELIVERY_FIELDS (sizeof(delivery_fields) / sizeof(delivery_fields[0]))

void cqp_delivery_encode(const struct cqp_row *row, struct cqp_kv_writer *w)
{
	for (size_t i = 0; i < N_DELIVERY_FIELDS; i++) {
		const struct delivery_field *f = &delivery_fields[i];

		if (*(const bool *)((const char *)row + f->has))
			cqp_kv_add_u64(
			    w, f->key,
			    *(const uint64_t *)((const char *)row + f->off));
	}
}

/* The client knows what it sent, the server what arrived: each side
 * leaves the other's figures at zero, so the larger one is the truth. */
int cqp_delivery_decode(struct cqp_row *row, const char *text, size_t len)
{
	for (size_t i = 0; i < N_DELIVERY_FIELDS; i++) {
		const struct delivery_field *f = &delivery_fields[i];
		uint64_t *dst = (uint64_t *)((char *)row + f->off);
		uint64_t v;

		if (!cqp_kv_has(text, len, f->key))
			continue;
		if (cqp_kv_get_u64(text, len, f->key, &v) < 0)
			return cqp_fail(CQP_E_PROTO, "bad '%s' in results",
					f->key);
		*dst = max_u64(*dst, v);
		*(bool *)((char *)row + f->has) = true;
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

	if (row->open_loop || !cqp_kv_has(text, len, "open_loop"))
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
		const struct cost_field *f = &cqp_cost_fields[i];

		if (!cqp_field_present(c, f))
			continue;
		prefixed(key, sizeof(key), prefix, f);
		if (f->type == FIELD_DOUBLE)
			cqp_kv_add_double(w, key, cqp_field_double(c, f));
		else
			cqp_kv_add_u64(w, key, cqp_field_u64(c, f));
		/* (FIELD_BOOL travels as 0 or 1.) */
	}
}

/* One thread's figures as "cpu,completions,...": cqp_thread_fields'
 * order, doubles exact (%.17g). */
static void thread_encode(const struct cqp_thread_cost *tc, char *buf,
			  size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t f = 0; f < cqp_n_thread_fields && len < cap; f++) {
		const struct thread_field *tf = &cqp_thread_fields[f];
		const char *at = (const char *)tc + tf->offset;
		const char *sep = f ? "," : "";
		int32_t i32;
		uint64_t u64;
		double d;
		int n;

		if (tf->type == FIELD_I32) {
			memcpy(&i32, at, sizeof(i32));
			n = snprintf(buf + len, cap - len, "%s%" PRId32, sep,
				     i32);
		} else if (tf->type == FIELD_U64) {
			memcpy(&u64, at, sizeof(u64));
			n = snprintf(buf + len, cap - len, "%s%" PRIu64, sep,
				     u64);
		} else {
			memcpy(&d, at, sizeof(d));
			n = snprintf(buf + len, cap - len, "%s%.17g", sep, d);
		}
		len += n > 0 ? (size_t)n : 0;
	}
}

/* The reverse: 0, or -1 when val has not exactly one figure a field. */
static int thread_decode(const char *val, struct cqp_thread_cost *tc)
{
	const char *p = val;

	for (size_t f = 0; f < cqp_n_thread_fields; f++) {
		const struct thread_field *tf = &cqp_thread_fields[f];
		char *at = (char *)tc + tf->offset, *end;
		long long i;
		unsigned long long u;
		double d;

		if (f && *p++ != ',')
			return -1;
		errno = 0;
		if (tf->type == FIELD_I32) {
			i = strtoll(p, &end, 10);
			if (i < INT32_MIN || i > INT32_MAX)
				return -1;
			memcpy(at, &(int32_t){(int32_t)i}, sizeof(int32_t));
		} else if (tf->type == FIELD_U64) {
			if (*p == '-')
				return -1;
			u = strtoull(p, &end, 10);
			memcpy(at, &(uint64_t){(uint64_t)u}, sizeof(uint64_t));
		} else {
			d = strtod(p, &end);
			memcpy(at, &d, sizeof(d));
		}
		if (end == p || errno)
			return -1;
		p = end;
	}
	return *p ? -1 : 0;
}

void cqp_threads_encode(const struct cqp_cost *c, struct cqp_kv_writer *w)
{
	char key[32], val[256];

	if (!c->nthreads)
		return;
	cqp_kv_add_u64(w, "threads", c->nthreads);
	for (unsigned t = 0; t < c->nthreads; t++) {
		snprintf(key, sizeof(key), "thread%u", t);
		thread_encode(&c->threads[t], val, sizeof(val));
		cqp_kv_add_str(w, key, val);
	}
}

int cqp_threads_decode(struct cqp_cost *c, const char *text, size_t len)
{
	uint64_t n;
	char key[32], val[256];
	int rc = cqp_kv_has(text, len, "threads");

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
		snprintf(key, sizeof(key), "thread%u", t);
		rc = cqp_kv_get_str(text, len, key, val, sizeof(val));
		if (rc == 0 && thread_decode(val, &c->threads[t]) < 0)
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
		const struct cost_field *f = &cqp_cost_fields[i];
		char *dst = (char *)&tmp + f->offset;
		const char *k = prefixed(key, sizeof(key), prefix, f);
		int rc = f->optional ? cqp_kv_has(text, len, k) : 1;

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
		if (rc < 0) /* kv named the key; say whose record it was */
			return cqp_fail_wrap((enum cqp_errcode) - rc,
					     "completion cost figures");
		if (f->optional)
			*(bool *)((char *)&tmp + f->present) = true;
	}
	/* Only a complete record replaces the caller's. */
	*c = tmp;
	return 0;
}

/* The figures one side sends the other after each step. */
void cqp_results_encode(const struct cqp_row *row, const struct cqp_cost *mine,
			struct cqp_kv_writer *w)
{
	cqp_cost_encode(mine, w);
	cqp_threads_encode(mine, w);
	cqp_kv_add_u64(w, "iterations", row->iterations);
	cqp_kv_add_u64(w, "has_bw", row->has_bw);
	cqp_kv_add_double(w, "bw_peak_gbps", row->bw_peak_gbps);
	cqp_kv_add_double(w, "bw_avg_gbps", row->bw_avg_gbps);
	cqp_kv_add_double(w, "msg_rate_mpps", row->msg_rate_mpps);
	cqp_kv_add_u64(w, "has_lat", row->has_lat);
	cqp_lat_encode(&row->lat_us, w);
	cqp_delivery_encode(row, w);
	cqp_open_loop_encode(row, w);
}

int cqp_results_decode(struct cqp_row *row, struct cqp_cost *theirs,
		       const char *text, size_t len)
{
	uint64_t has_bw, has_lat;
	int rc = cqp_cost_decode(theirs, text, len);

	if (rc < 0 || (rc = cqp_threads_decode(theirs, text, len)) < 0)
		return rc;
	if ((rc = cqp_delivery_decode(row, text, len)) < 0 ||
	    (rc = cqp_open_loop_decode(row, text, len)) < 0)
		return rc;
	if ((rc = cqp_kv_get_u64(text, len, "has_bw", &has_bw)) < 0 ||
	    (rc = cqp_kv_get_u64(text, len, "has_lat", &has_lat)) < 0)
		return rc;
	/* The client measured the traffic: the server adopts its figures. */
	if ((has_bw && !row->has_bw) || (has_lat && !row->has_lat)) {
		rc = cqp_kv_get_u64(text, len, "iterations", &row->iterations);
		if (rc < 0)
			return rc;
	}
	if (has_bw && !row->has_bw) {
		row->has_bw = true;
		if ((rc = cqp_kv_get_double(text, len, "bw_peak_gbps",
					    &row->bw_peak_gbps)) < 0 ||
		    (rc = cqp_kv_get_double(text, len, "bw_avg_gbps",
					    &row->bw_avg_gbps)) < 0 ||
		    (rc = cqp_kv_get_double(text, len, "msg_rate_mpps",
					    &row->msg_rate_mpps)) < 0)
			return rc;
	}
	if (has_lat && !row->has_lat) {
		row->has_lat = true;
		rc = cqp_lat_decode(&row->lat_us, text, len);
		if (rc < 0)
			return rc;
	}
	return 0;
}
