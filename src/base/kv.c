/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/kv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* Longest excerpt of a bad line quoted back in an error message. */
#define EXCERPT_MAX 40

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '-';
}

static bool key_valid(const char *key, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!key_char(key[i]))
			return false;
	return true;
}

/* Copy peer-supplied bytes into a message-safe string: the text may come
 * from anywhere, so control bytes must not reach the user's terminal. */
static void excerpt(char *out, size_t outcap, const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 4 < outcap; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == EXCERPT_MAX) {
			memcpy(out + n, "...", 3);
			n += 3;
			break;
		}
		out[n++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	out[n] = '\0';
}

void cqp_kv_writer_init(struct cqp_kv_writer *w, char *buf, size_t cap)
{
	w->buf = buf;
	w->cap = cap;
	w->len = 0;
	w->overflow = false;
	if (cap)
		buf[0] = '\0';
	else
		w->overflow = true;
}

/* A key or value the reader would reject also marks the record invalid:
 * the writer has no other way to report it and the record must not travel. */
void cqp_kv_add_str(struct cqp_kv_writer *w, const char *key, const char *val)
{
	size_t klen = strlen(key), vlen = strlen(val);

	if (w->overflow)
		return;
	if (!key_valid(key, klen) || memchr(val, '\n', vlen)) {
		w->overflow = true;
		return;
	}
	/* key '=' value '\n', plus a NUL so the record is also a string */
	if (w->cap - w->len < klen + vlen + 3) {
		w->overflow = true;
		return;
	}
	memcpy(w->buf + w->len, key, klen);
	w->len += klen;
	w->buf[w->len++] = '=';
	memcpy(w->buf + w->len, val, vlen);
	w->len += vlen;
	w->buf[w->len++] = '\n';
	w->buf[w->len] = '\0';
}

void cqp_kv_add_u64(struct cqp_kv_writer *w, const char *key, uint64_t val)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRIu64, val);
	cqp_kv_add_str(w, key, s);
}

void cqp_kv_add_i64(struct cqp_kv_writer *w, const char *key, int64_t val)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRId64, val);
	cqp_kv_add_str(w, key, s);
}

void cqp_kv_add_double(struct cqp_kv_writer *w, const char *key, double val)
{
	char s[40];

	snprintf(s, sizeof(s), "%.17g", val);
	cqp_kv_add_str(w, key, s);
}

/* One line of a record, pointing into the caller's text. */
struct kv_line {
	const char *key, *val;
	size_t klen, vlen;
	unsigned lineno;
};

/* Split off the next line at *pos.  Returns 1 with a line, 0 at the end,
 * or a CQP_E_PROTO failure naming the line. */
static int next_line(const char *text, size_t len, size_t *pos,
		     unsigned *lineno, struct kv_line *l)
{
	const char *line, *nl, *eq;
	size_t llen;
	char ex[64];

	if (*pos >= len)
		return 0;
	line = text + *pos;
	nl = memchr(line, '\n', len - *pos);
	llen = nl ? (size_t)(nl - line) : len - *pos;
	*pos += llen + (nl ? 1 : 0);
	++*lineno;

	excerpt(ex, sizeof(ex), line, llen);
	if (memchr(line, '\0', llen))
		return cqp_fail(CQP_E_PROTO,
				"malformed key=value line %u \"%s\": embedded "
				"NUL byte",
				*lineno, ex);
	eq = memchr(line, '=', llen);
	if (!eq)
		return cqp_fail(CQP_E_PROTO,
				"malformed key=value line %u \"%s\": no '='",
				*lineno, ex);
	l->key = line;
	l->klen = (size_t)(eq - line);
	l->val = eq + 1;
	l->vlen = llen - l->klen - 1;
	l->lineno = *lineno;
	if (!l->klen)
		return cqp_fail(CQP_E_PROTO,
				"malformed key=value line %u \"%s\": empty key",
				*lineno, ex);
	if (!key_valid(l->key, l->klen)) {
		excerpt(ex, sizeof(ex), l->key, l->klen);
		return cqp_fail(CQP_E_PROTO,
				"malformed key=value line %u: invalid key "
				"\"%s\" (allowed: a-z 0-9 _ -)",
				*lineno, ex);
	}
	return 1;
}

int cqp_kv_parse(const char *text, size_t len, cqp_kv_fn fn, void *ctx)
{
	size_t pos = 0;
	unsigned lineno = 0;
	struct kv_line l = {0};
	char *copy;
	int rc;

	if (len == 0)
		return 0;
	/* fn wants NUL-terminated strings and text may be neither writable
	 * nor terminated: work on one copy with the separators cut out. */
	copy = malloc(len + 1);
	if (!copy)
		return cqp_fail(CQP_E_NOMEM,
				"out of memory parsing a %zu-byte key=value "
				"record",
				len);
	memcpy(copy, text, len);
	copy[len] = '\0';
	while ((rc = next_line(copy, len, &pos, &lineno, &l)) > 0) {
		char *k = copy + (l.key - copy), *v = copy + (l.val - copy);

		k[l.klen] = '\0';
		v[l.vlen] = '\0';
		rc = fn(ctx, k, v);
		if (rc)
			break;
	}
	free(copy);
	return rc;
}

/* Find the first line with key.  Returns 1 found, or a failure (a missing
 * key is CQP_E_PROTO too, since the caller requires it). */
static int find(const char *text, size_t len, const char *key,
		struct kv_line *l)
{
	size_t pos = 0, klen = strlen(key);
	unsigned lineno = 0;
	int rc;

	while ((rc = next_line(text, len, &pos, &lineno, l)) > 0)
		if (l->klen == klen && memcmp(l->key, key, klen) == 0)
			return 1;
	if (rc < 0)
		return rc;
	return cqp_fail(CQP_E_PROTO, "key=value record lacks key \"%s\"", key);
}

static int key_is(void *ctx, const char *key, const char *val)
{
	(void)val;
	return strcmp(key, *(const char *const *)ctx) == 0;
}

int cqp_kv_has(const char *text, size_t len, const char *key)
{
	return cqp_kv_parse(text, len, key_is, &key);
}

int cqp_kv_get_str(const char *text, size_t len, const char *key, char *out,
		   size_t outcap)
{
	struct kv_line l = {0};
	int rc = find(text, len, key, &l);

	if (rc < 0)
		return rc;
	if (l.vlen >= outcap)
		return cqp_fail(CQP_E_PROTO,
				"value of key \"%s\" (line %u) is %zu bytes, "
				"longer than the %zu allowed",
				key, l.lineno, l.vlen, outcap ? outcap - 1 : 0);
	memcpy(out, l.val, l.vlen);
	out[l.vlen] = '\0';
	return 0;
}

int cqp_kv_get_u64(const char *text, size_t len, const char *key, uint64_t *out)
{
	struct kv_line l = {0};
	uint64_t v = 0;
	char ex[64];
	int rc = find(text, len, key, &l);

	if (rc < 0)
		return rc;
	excerpt(ex, sizeof(ex), l.val, l.vlen);
	if (!l.vlen)
		return cqp_fail(CQP_E_PROTO,
				"key \"%s\" (line %u) has an empty value, "
				"expected an unsigned integer",
				key, l.lineno);
	/* By hand rather than strtoull, which accepts signs, blanks and
	 * wraps "-1" to UINT64_MAX. */
	for (size_t i = 0; i < l.vlen; i++) {
		unsigned d = (unsigned char)l.val[i] - '0';

		if (d > 9)
			return cqp_fail(CQP_E_PROTO,
					"key \"%s\" (line %u) = \"%s\" is not "
					"an unsigned decimal integer",
					key, l.lineno, ex);
		if (v > (UINT64_MAX - d) / 10)
			return cqp_fail(CQP_E_PROTO,
					"key \"%s\" (line %u) = \"%s\" is too "
					"large (maximum %" PRIu64 ")",
					key, l.lineno, ex, UINT64_MAX);
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int cqp_kv_get_double(const char *text, size_t len, const char *key,
		      double *out)
{
	struct kv_line l = {0};
	char s[64], ex[64], *end;
	double v;
	int rc = find(text, len, key, &l);

	if (rc < 0)
		return rc;
	/* Messages quote the excerpt, never the raw copy strtod reads. */
	excerpt(ex, sizeof(ex), l.val, l.vlen);
	/* %.17g needs at most 24 characters; anything longer is not ours.
	 * strtod skips leading blanks, which a strict reader must not. */
	if (!l.vlen || l.vlen >= sizeof(s) || l.val[0] == ' ' ||
	    l.val[0] == '\t')
		return cqp_fail(CQP_E_PROTO,
				"key \"%s\" (line %u) = \"%s\" is not a "
				"number",
				key, l.lineno, ex);
	memcpy(s, l.val, l.vlen);
	s[l.vlen] = '\0';
	errno = 0;
	v = strtod(s, &end);
	if (end != s + l.vlen || (errno == ERANGE && isinf(v)))
		return cqp_fail(CQP_E_PROTO,
				"key \"%s\" (line %u) = \"%s\" is not a "
				"number",
				key, l.lineno, ex);
	/* ERANGE on underflow still leaves the correctly rounded subnormal
	 * (or zero), which is what the writer printed: keep it. */
	*out = v;
	return 0;
}
