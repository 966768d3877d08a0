/* SPDX-License-Identifier: BSD-2-Clause */
/* A minimal streaming JSON writer: correct escaping, commas and nesting,
 * numbers as numbers (non-finite doubles become null). */
#ifndef CQP_JSON_H
#define CQP_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CQP_JSON_MAX_DEPTH 16

struct cqp_json {
	FILE *out;
	int depth;
	bool need_comma[CQP_JSON_MAX_DEPTH];
	bool pretty;
};

void cqp_json_init(struct cqp_json *j, FILE *out, bool pretty);
/* key may be NULL inside arrays and at top level. */
void cqp_json_obj_begin(struct cqp_json *j, const char *key);
void cqp_json_obj_end(struct cqp_json *j);
void cqp_json_arr_begin(struct cqp_json *j, const char *key);
void cqp_json_arr_end(struct cqp_json *j);
void cqp_json_str(struct cqp_json *j, const char *key, const char *val);
void cqp_json_u64(struct cqp_json *j, const char *key, uint64_t val);
void cqp_json_i64(struct cqp_json *j, const char *key, int64_t val);
void cqp_json_double(struct cqp_json *j, const char *key, double val);
void cqp_json_bool(struct cqp_json *j, const char *key, bool val);
void cqp_json_null(struct cqp_json *j, const char *key);
/* Ends the document with a newline. */
void cqp_json_finish(struct cqp_json *j);

#endif
