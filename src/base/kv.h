/* SPDX-License-Identifier: BSD-2-Clause */
/* "key=value\n" text records: the payload format of out-of-band messages.
 *
 * Text keeps the wire debuggable and lets either side add keys without a
 * protocol bump; the reader ignores keys it does not know.  Keys are
 * [a-z0-9_-]+, values any bytes but '\n' and '\0'.
 */
#ifndef CQP_KV_H
#define CQP_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cqp_kv_writer {
	char *buf;
	size_t cap;
	size_t len;
	bool overflow; /* set when an add did not fit; the record is invalid */
};

void cqp_kv_writer_init(struct cqp_kv_writer *w, char *buf, size_t cap);
void cqp_kv_add_str(struct cqp_kv_writer *w, const char *key, const char *val);
void cqp_kv_add_u64(struct cqp_kv_writer *w, const char *key, uint64_t val);
void cqp_kv_add_i64(struct cqp_kv_writer *w, const char *key, int64_t val);
/* Doubles travel as %.17g so they round-trip exactly. */
void cqp_kv_add_double(struct cqp_kv_writer *w, const char *key, double val);

/* Calls fn for each line; stops and returns fn's non-zero result, or a
 * negative cqp error (CQP_E_PROTO via cqp_fail) for a malformed line
 * (no '=', empty or invalid key, embedded NUL).  text need not be
 * NUL-terminated. */
typedef int (*cqp_kv_fn)(void *ctx, const char *key, const char *val);
int cqp_kv_parse(const char *text, size_t len, cqp_kv_fn fn, void *ctx);
/* 1 when the record has key, 0 when not, or a failure (malformed). */
int cqp_kv_has(const char *text, size_t len, const char *key);

/* Lookup helpers over a whole record (first match wins).  Return 0 when
 * found and valid, CQP_E_PROTO failure when missing or malformed. */
int cqp_kv_get_str(const char *text, size_t len, const char *key, char *out,
		   size_t outcap);
int cqp_kv_get_u64(const char *text, size_t len, const char *key,
		   uint64_t *out);
int cqp_kv_get_double(const char *text, size_t len, const char *key,
		      double *out);

#endif
