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

/* ---- a row's figures (cqp_row_fields) over the out-of-band channel ---- */

/* How a group of figures crosses: the bool that says a side has them, and
 * what the receiver does with the peer's.  Merged: each side counts half
 * (the client what it sent, the server what arrived) and leaves the other
 * half at zero, so the larger is the truth.  Adopted: one side measured
 * them (the client, the traffic) and a side that has none takes them. */
struct row_wire {
	const char *key;
	size_t has;
	bool merge;
	unsigned groups; /* RG_BIT()s */
};

#define HAS(flag) offsetof(struct cqp_row, flag)
static const struct row_wire wires[] = {
    {"has_bw", HAS(has_bw), false, RG_BIT(RG_BW)},
    {"has_lat", HAS(has_lat), false, RG_BIT(RG_LAT)},
    {"has_delivery", HAS(has_delivery), true, RG_BIT(RG_DELIVERY)},
    {"has_lost", HAS(has_lost), true, RG_BIT(RG_LOST)},
    {"open_loop", HAS(open_loop), false, RG_BIT(RG_OPEN) | RG_BIT(RG_OPEN_LAT)},
};
#undef HAS
#define N_WIRES (sizeof(wires) / sizeof(wires[0]))

static bool *row_flag(struct cqp_row *row, const struct row_wire *rw)
{
	return (bool *)((char *)row + rw->has);
}

/* The wire of a figure that crosses (-1: both sides know it, it is
 * derived, or it is an event row's, which cqp_event_row_* carry). */
static int wire_of(const struct row_field *f)
{
	for (unsigned i = 0; !f->value && i < N_WIRES; i++)
		if (wires[i].groups & RG_BIT(f->group))
			return (int)i;
	return -1;
}

/* The key of field f (sub: its latency figure) under prefix. */
static const char *field_key(char *buf, size_t cap, const char *prefix,
			     const struct row_field *f, unsigned sub)
{
	if (f->type == FIELD_LAT)
		snprintf(buf, cap, "%s%s_%s", prefix, f->key,
			 cqp_lat_fields[sub].key);
	else
		snprintf(buf, cap, "%s%s", prefix, f->key);
	return buf;
}

static void field_encode(const struct cqp_row *row, const struct row_field *f,
			 const char *prefix, struct cqp_kv_writer *w)
{
	const char *at = (const char *)row + f->offset;
	char key[64];

	for (unsigned k = 0; k < (f->type == FIELD_LAT ? N_LAT_FIELDS : 1);
	     k++) {
		field_key(key, sizeof(key), prefix, f, k);
		if (f->type == FIELD_TEXT)
			cqp_kv_add_str(w, key, at);
		else if (f->type == FIELD_U64)
			cqp_kv_add_u64(w, key, *(const uint64_t *)at);
		else if (f->type == FIELD_LAT)
			cqp_kv_add_double(
			    w, key,
			    cqp_lat_value((const struct cqp_summary *)at,
					  &cqp_lat_fields[k]));
		else
			cqp_kv_add_double(w, key, *(const double *)at);
	}
}

/* Into row, or for a merged counter the larger of row's and the peer's. */
static int field_decode(struct cqp_row *row, const struct row_field *f,
			const char *prefix, bool merge, const char *text,
			size_t len)
{
	char *at = (char *)row + f->offset;
	char key[64];
	int rc = 0;

	for (unsigned k = 0;
	     rc >= 0 && k < (f->type == FIELD_LAT ? N_LAT_FIELDS : 1); k++) {
		field_key(key, sizeof(key), prefix, f, k);
		if (f->type == FIELD_TEXT) {
			rc = cqp_kv_get_str(text, len, key, at, f->size);
		} else if (f->type == FIELD_U64) {
			uint64_t v;

			rc = cqp_kv_get_u64(text, len, key, &v);
			if (rc >= 0 && (!merge || v > *(uint64_t *)at))
				*(uint64_t *)at = v;
		} else {
			rc = cqp_kv_get_double(
			    text, len, key,
			    (double *)(at + (f->type == FIELD_LAT
						 ? cqp_lat_fields[k].offset
						 : 0)));
		}
	}
	return rc;
}

void cqp_row_figures_encode(const struct cqp_row *row, struct cqp_kv_writer *w)
{
	struct cqp_row *r = (struct cqp_row *)row;

	cqp_kv_add_u64(w, "iterations", row->iterations);
	for (unsigned i = 0; i < N_WIRES; i++)
		cqp_kv_add_u64(w, wires[i].key, *row_flag(r, &wires[i]));
	for (size_t i = 0; i < cqp_n_row_fields; i++) {
		int k = wire_of(&cqp_row_fields[i]);

		if (k >= 0 && *row_flag(r, &wires[k]))
			field_encode(row, &cqp_row_fields[i], "", w);
	}
}

int cqp_row_figures_decode(struct cqp_row *row, const char *text, size_t len)
{
	const unsigned traffic = RG_BIT(RG_BW) | RG_BIT(RG_LAT);
	bool take[N_WIRES], adopted = false;
	int rc;

	/* What the peer has that this side takes. */
	for (unsigned i = 0; i < N_WIRES; i++) {
		uint64_t theirs = 0;

		rc = cqp_kv_has(text, len, wires[i].key)
			 ? cqp_kv_get_u64(text, len, wires[i].key, &theirs)
			 : 0;
		if (rc < 0)
			return rc;
		take[i] =
		    theirs && (wires[i].merge || !*row_flag(row, &wires[i]));
		adopted |= take[i] && (wires[i].groups & traffic);
	}
	for (size_t i = 0; i < cqp_n_row_fields; i++) {
		int k = wire_of(&cqp_row_fields[i]);

		if (k < 0 || !take[k])
			continue;
		rc = field_decode(row, &cqp_row_fields[i], "", wires[k].merge,
				  text, len);
		if (rc < 0)
			return rc;
	}
	for (unsigned i = 0; i < N_WIRES; i++)
		if (take[i])
			*row_flag(row, &wires[i]) = true;
	/* The client measured the traffic: the server counts its messages. */
	if (adopted)
		return cqp_kv_get_u64(text, len, "iterations",
				      &row->iterations);
	return 0;
}

void cqp_held_encode(const struct cqp_held *h, struct cqp_kv_writer *w)
{
	char key[64];

	for (size_t i = 0; i < cqp_n_held_fields; i++) {
		snprintf(key, sizeof(key), "mem_%s", cqp_held_fields[i].key);
		cqp_kv_add_u64(w, key, cqp_held_value(h, &cqp_held_fields[i]));
	}
}

/* All or nothing: a record with some of them is a protocol error. */
int cqp_held_decode(struct cqp_held *h, bool *has, const char *text, size_t len)
{
	struct cqp_held got;
	char key[64];

	*has = false;
	if (!cqp_kv_has(text, len, "mem_qps"))
		return 0;
	for (size_t i = 0; i < cqp_n_held_fields; i++) {
		const struct held_field *f = &cqp_held_fields[i];
		int rc;

		snprintf(key, sizeof(key), "mem_%s", f->key);
		rc = cqp_kv_get_u64(text, len, key,
				    (uint64_t *)((char *)&got + f->offset));
		if (rc < 0)
			return rc;
	}
	*h = got;
	*has = true;
	return 0;
}

/* cm_event_stress's rows: the event's figures and its latency. */
static bool event_field(const struct row_field *f)
{
	return (f->group == RG_EVENT && strcmp(f->key, "side") != 0) ||
	       f->group == RG_LAT;
}

void cqp_event_row_encode(const struct cqp_row *row, const char *prefix,
			  struct cqp_kv_writer *w)
{
	for (size_t i = 0; i < cqp_n_row_fields; i++)
		if (event_field(&cqp_row_fields[i]))
			field_encode(row, &cqp_row_fields[i], prefix, w);
}

int cqp_event_row_decode(struct cqp_row *row, const char *prefix,
			 const char *text, size_t len)
{
	for (size_t i = 0; i < cqp_n_row_fields; i++) {
		int rc;

		if (!event_field(&cqp_row_fields[i]))
			continue;
		rc = field_decode(row, &cqp_row_fields[i], prefix, false, text,
				  len);
		if (rc < 0)
			return rc;
	}
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
	cqp_row_figures_encode(row, w);
}

int cqp_results_decode(struct cqp_row *row, struct cqp_cost *theirs,
		       const char *text, size_t len)
{
	int rc = cqp_cost_decode(theirs, text, len);

	if (rc < 0 || (rc = cqp_threads_decode(theirs, text, len)) < 0)
		return rc;
	return cqp_row_figures_decode(row, text, len);
}
