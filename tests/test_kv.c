/* SPDX-License-Identifier: BSD-2-Clause */
/* kv records (the oob payloads): the writer, the parser against garbage
 * and limits, numbers at their edges; and the error model: one message
 * wrapped where the failure is understood, saved across calls. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_err.h"
#include "base/error.h"
#include "base/kv.h"

struct collect {
	int n;
	char keys[8][32];
	char vals[8][64];
	int stop_at; /* return 7 at this line (1-based), 0 = never */
};

static int collect_fn(void *ctx, const char *key, const char *val)
{
	struct collect *c = ctx;

	if (c->n < 8) {
		snprintf(c->keys[c->n], sizeof(c->keys[0]), "%s", key);
		snprintf(c->vals[c->n], sizeof(c->vals[0]), "%s", val);
	}
	c->n++;
	return c->n == c->stop_at ? 7 : 0;
}

static void test_fail_wrap(void)
{
	char big[600];

	cqp_fail(CQP_E_PROTO, "key 'x' missing");
	CHECK(cqp_fail_wrap(CQP_E_PEER_FAILED, "bad %s from peer %s", "RESULTS",
			    "h:1") == -CQP_E_PEER_FAILED);
	CHECK(strcmp(cqp_errmsg(),
		     "bad RESULTS from peer h:1: key 'x' missing") == 0);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cqp_fail(CQP_E_PROTO, "%s", big);
	cqp_fail_wrap(CQP_E_PROTO, "ctx");
	CHECK(strncmp(cqp_errmsg(), "ctx: aaaa", 9) == 0);
	cqp_errclear();
}

/* A saved failure comes back whole (all 511 bytes) after another one. */
static void test_error_save(void)
{
	struct cqp_error e, none;
	char big[CQP_ERRMSG_MAX];

	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cqp_fail(CQP_E_TIMEOUT, "%s", big);
	cqp_error_save(&e);
	cqp_fail(CQP_E_PROTO, "something else");
	CHECK(cqp_error_restore(&e) == -CQP_E_TIMEOUT);
	CHECK(cqp_errcode() == CQP_E_TIMEOUT);
	CHECK(strcmp(cqp_errmsg(), big) == 0);
	cqp_errclear();
	cqp_error_save(&none);
	cqp_fail(CQP_E_PROTO, "later");
	CHECK(cqp_error_restore(&none) == 0 && cqp_errcode() == CQP_OK);
}

static void test_kv_writer(void)
{
	char buf[256], small[8], s[64];
	struct cqp_kv_writer w;
	uint64_t u;

	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_kv_add_str(&w, "tool", "cq_poll_bw");
	cqp_kv_add_u64(&w, "size", UINT64_MAX);
	cqp_kv_add_i64(&w, "gid-index", INT64_MIN);
	cqp_kv_add_str(&w, "empty", "");
	cqp_kv_add_str(&w, "url", "a=b=c");
	CHECK(!w.overflow);
	CHECK_STR(buf, "tool=cq_poll_bw\nsize=18446744073709551615\n"
		       "gid-index=-9223372036854775808\nempty=\nurl=a=b=c\n");
	CHECK(w.len == strlen(buf));
	CHECK_OK(cqp_kv_get_u64(buf, w.len, "size", &u));
	CHECK(u == UINT64_MAX);
	CHECK_OK(cqp_kv_get_str(buf, w.len, "gid-index", s, sizeof(s)));
	CHECK_STR(s, "-9223372036854775808");
	CHECK_OK(cqp_kv_get_str(buf, w.len, "empty", s, sizeof(s)));
	CHECK_STR(s, "");
	CHECK_OK(cqp_kv_get_str(buf, w.len, "url", s, sizeof(s)));
	CHECK_STR(s, "a=b=c");

	/* "abc=defgh\n" + NUL does not fit in 8: the record is invalid and
	 * stays so. */
	cqp_kv_writer_init(&w, small, sizeof(small));
	cqp_kv_add_str(&w, "a", "b");
	CHECK(!w.overflow && w.len == 4);
	cqp_kv_add_str(&w, "abc", "defgh");
	CHECK(w.overflow);
	cqp_kv_add_str(&w, "c", "");
	CHECK(w.overflow && w.len == 4);

	/* What the reader would refuse must not be written either. */
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_kv_add_str(&w, "Bad Key", "1");
	CHECK(w.overflow);
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_kv_add_str(&w, "", "1");
	CHECK(w.overflow);
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_kv_add_str(&w, "k", "two\nlines");
	CHECK(w.overflow);
}

static void test_kv_parse(void)
{
	struct collect c;
	char s[8];

	memset(&c, 0, sizeof(c));
	CHECK_OK(cqp_kv_parse("a=1\nb-c_d=x y z\ne=\n", 19, collect_fn, &c));
	CHECK(c.n == 3);
	CHECK_STR(c.keys[0], "a");
	CHECK_STR(c.vals[0], "1");
	CHECK_STR(c.keys[1], "b-c_d");
	CHECK_STR(c.vals[1], "x y z");
	CHECK_STR(c.keys[2], "e");
	CHECK_STR(c.vals[2], "");

	/* Not NUL-terminated, no final newline: the value ends at len. */
	memset(&c, 0, sizeof(c));
	CHECK_OK(cqp_kv_parse("a=1\nb=2XYZ", 7, collect_fn, &c));
	CHECK(c.n == 2);
	CHECK_STR(c.vals[1], "2");

	memset(&c, 0, sizeof(c));
	CHECK_OK(cqp_kv_parse("", 0, collect_fn, &c));
	CHECK(c.n == 0);

	/* fn's non-zero result stops the walk and comes back. */
	memset(&c, 0, sizeof(c));
	c.stop_at = 1;
	CHECK(cqp_kv_parse("a=1\nb=2\n", 8, collect_fn, &c) == 7);
	CHECK(c.n == 1);

	memset(&c, 0, sizeof(c));
	CHECK_ERR(cqp_kv_parse("a=1\nnovalue\n", 12, collect_fn, &c),
		  CQP_E_PROTO, "line 2 \"novalue\": no '='");
	CHECK_ERR(cqp_kv_parse("=x\n", 3, collect_fn, &c), CQP_E_PROTO,
		  "line 1 \"=x\": empty key");
	CHECK_ERR(cqp_kv_parse("Key=1\n", 6, collect_fn, &c), CQP_E_PROTO,
		  "invalid key \"Key\"");
	CHECK_ERR(cqp_kv_parse("a b=1\n", 6, collect_fn, &c), CQP_E_PROTO,
		  "invalid key \"a b\"");
	CHECK_ERR(cqp_kv_parse("a=1\n\nb=2\n", 9, collect_fn, &c), CQP_E_PROTO,
		  "line 2");
	CHECK_ERR(cqp_kv_parse("a=1\0\nb=2\n", 9, collect_fn, &c), CQP_E_PROTO,
		  "embedded NUL");
	/* Control bytes from the peer are not echoed raw. */
	CHECK_ERR(cqp_kv_parse("\033[2J\n", 5, collect_fn, &c), CQP_E_PROTO,
		  "\"?[2J\"");

	/* Lookups: first match wins, missing and malformed are errors. */
	CHECK_OK(cqp_kv_get_str("a=1\na=2\n", 8, "a", s, sizeof(s)));
	CHECK_STR(s, "1");
	CHECK_ERR(cqp_kv_get_str("a=1\n", 4, "zzz", s, sizeof(s)), CQP_E_PROTO,
		  "lacks key \"zzz\"");
	CHECK_ERR(cqp_kv_get_str("bad\na=1\n", 8, "a", s, sizeof(s)),
		  CQP_E_PROTO, "line 1");
	CHECK_ERR(cqp_kv_get_str("a=12345678\n", 11, "a", s, sizeof(s)),
		  CQP_E_PROTO, "8 bytes, longer than the 7 allowed");
	CHECK_OK(cqp_kv_get_str("a=1234567\n", 10, "a", s, sizeof(s)));
	CHECK_STR(s, "1234567");
}

static void test_kv_u64(void)
{
	static const struct {
		const char *text;
		uint64_t want;
	} good[] = {
	    {"n=0\n", 0},
	    {"n=42\n", 42},
	    {"n=007\n", 7},
	    {"n=18446744073709551615\n", UINT64_MAX},
	};
	static const char *const bad[] = {
	    "n=12x\n",
	    "n=-1\n",
	    "n=\n",
	    "n=+1\n",
	    "n= 1\n",
	    "n=1 \n",
	    "n=0x10\n",
	    "n=1.0\n",
	    "n=18446744073709551616\n",
	    "n=99999999999999999999\n",
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 12345;
		CHECK_OK(cqp_kv_get_u64(good[i].text, strlen(good[i].text), "n",
					&v));
		CHECK(v == good[i].want);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		CHECK_ERR(cqp_kv_get_u64(bad[i], strlen(bad[i]), "n", &v),
			  CQP_E_PROTO, "key \"n\" (line 1)");
		CHECK(v == 12345);
	}
	CHECK_ERR(cqp_kv_get_u64("n=18446744073709551616\n", 23, "n", &v),
		  CQP_E_PROTO, "too large");
	CHECK_ERR(cqp_kv_get_u64("n=-1\n", 5, "n", &v), CQP_E_PROTO,
		  "not an unsigned decimal integer");
	CHECK_ERR(cqp_kv_get_u64("n=\n", 3, "n", &v), CQP_E_PROTO,
		  "empty value");
}

static void test_kv_double(void)
{
	const double vals[] = {0.1,
			       1.0 / 3.0,
			       -2.5e-300,
			       DBL_MAX,
			       DBL_MIN,
			       -DBL_MAX,
			       4.9406564584124654e-324,
			       123456789.123456789,
			       0.0,
			       1e22,
			       -1.0 / 7.0};
	static const char *const bad[] = {"x=\n", "x=abc\n", "x=1.5x\n",
					  "x= 1.5\n", "x=1e999\n"};
	char buf[128];
	struct cqp_kv_writer w;
	double v;

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		cqp_kv_writer_init(&w, buf, sizeof(buf));
		cqp_kv_add_double(&w, "x", vals[i]);
		CHECK(!w.overflow);
		v = -1;
		CHECK_OK(cqp_kv_get_double(buf, w.len, "x", &v));
		/* exact: the same bits, not merely close */
		CHECK(memcmp(&v, &vals[i], sizeof(v)) == 0);
		if (memcmp(&v, &vals[i], sizeof(v)) != 0)
			fprintf(stderr, "  %.17g came back as %.17g\n", vals[i],
				v);
	}

	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_kv_add_double(&w, "z", -0.0);
	cqp_kv_add_double(&w, "i", -INFINITY);
	cqp_kv_add_double(&w, "n", NAN);
	CHECK_OK(cqp_kv_get_double(buf, w.len, "z", &v));
	CHECK(v == 0.0 && signbit(v));
	CHECK_OK(cqp_kv_get_double(buf, w.len, "i", &v));
	CHECK(isinf(v) && v < 0);
	CHECK_OK(cqp_kv_get_double(buf, w.len, "n", &v));
	CHECK(isnan(v));

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_ERR(cqp_kv_get_double(bad[i], strlen(bad[i]), "x", &v),
			  CQP_E_PROTO, "is not a number");
	/* The peer's bytes are quoted without their control characters. */
	CHECK_ERR(cqp_kv_get_double("x=1\033[2J\n", 8, "x", &v), CQP_E_PROTO,
		  "\"1?[2J\" is not a number");
}

/* ---- header ------------------------------------------------------------ */

int main(void)
{
	test_fail_wrap();
	test_error_save();
	test_kv_writer();
	test_kv_parse();
	test_kv_u64();
	test_kv_double();
	return check_done("test_kv");
}
