/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void cqp_json_init(struct cqp_json *j, FILE *out, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->pretty = pretty;
}

/* Nesting deeper than the table is a caller bug; clamping keeps memory
 * safe (only comma placement at those depths could suffer). */
static bool *need_comma(struct cqp_json *j)
{
	int d = j->depth;

	if (d < 0)
		d = 0;
	if (d >= CQP_JSON_MAX_DEPTH)
		d = CQP_JSON_MAX_DEPTH - 1;
	return &j->need_comma[d];
}

static void indent(struct cqp_json *j)
{
	int i;

	fputc('\n', j->out);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid:
 * overlong forms, surrogates and code points past U+10FFFF count as
 * invalid so that the document stays strict JSON for any parser. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		/* Also stops at the terminating NUL. */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

static void put_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	fputc('"', out);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fputc('\\', out);
			fputc(*p++, out);
		} else if (*p < 0x20) {
			fprintf(out, "\\u%04x", *p++);
		} else if ((n = utf8_len(p)) == 0) {
			/* Stray byte (e.g. from a device or host name):
			 * the replacement character keeps it visible. */
			fputs("\\ufffd", out);
			p++;
		} else {
			fwrite(p, 1, n, out);
			p += n;
		}
	}
	fputc('"', out);
}

/* Comma, newline and indent, then the key: everything before a value. */
static void prefix(struct cqp_json *j, const char *key)
{
	bool *nc = need_comma(j);

	if (*nc)
		fputc(',', j->out);
	if (j->pretty && j->depth > 0)
		indent(j);
	*nc = true;
	if (key) {
		put_string(j->out, key);
		fputs(j->pretty ? ": " : ":", j->out);
	}
}

static void container_begin(struct cqp_json *j, const char *key, char c)
{
	prefix(j, key);
	fputc(c, j->out);
	j->depth++;
	*need_comma(j) = false;
}

static void container_end(struct cqp_json *j, char c)
{
	bool had_members = *need_comma(j);

	if (j->depth > 0)
		j->depth--;
	/* Empty containers stay on one line: {} and []. */
	if (j->pretty && had_members)
		indent(j);
	fputc(c, j->out);
}

void cqp_json_obj_begin(struct cqp_json *j, const char *key)
{
	container_begin(j, key, '{');
}

void cqp_json_obj_end(struct cqp_json *j)
{
	container_end(j, '}');
}

void cqp_json_arr_begin(struct cqp_json *j, const char *key)
{
	container_begin(j, key, '[');
}

void cqp_json_arr_end(struct cqp_json *j)
{
	container_end(j, ']');
}

void cqp_json_str(struct cqp_json *j, const char *key, const char *val)
{
	if (!val) {
		cqp_json_null(j, key);
		return;
	}
	prefix(j, key);
	put_string(j->out, val);
}

void cqp_json_u64(struct cqp_json *j, const char *key, uint64_t val)
{
	prefix(j, key);
	fprintf(j->out, "%" PRIu64, val);
}

void cqp_json_i64(struct cqp_json *j, const char *key, int64_t val)
{
	prefix(j, key);
	fprintf(j->out, "%" PRId64, val);
}

void cqp_json_double(struct cqp_json *j, const char *key, double val)
{
	char buf[64];
	char *c;

	if (!isfinite(val)) {
		cqp_json_null(j, key);
		return;
	}
	prefix(j, key);
	snprintf(buf, sizeof(buf), "%.9g", val);
	/* A locale with a decimal comma would make invalid JSON. */
	for (c = buf; *c; c++)
		if (*c == ',')
			*c = '.';
	fputs(buf, j->out);
}

void cqp_json_bool(struct cqp_json *j, const char *key, bool val)
{
	prefix(j, key);
	fputs(val ? "true" : "false", j->out);
}

void cqp_json_null(struct cqp_json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->out);
}

void cqp_json_finish(struct cqp_json *j)
{
	fputc('\n', j->out);
	fflush(j->out);
}
