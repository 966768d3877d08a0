/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target for the command-line parser.  Not part of `make check`;
 * tests/fuzz/smoke.sh builds and runs it briefly, or by hand:
 *
 *   clang -g -std=gnu11 -D_GNU_SOURCE -Isrc \
 *     -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *     -o fuzz_options tests/fuzz/fuzz_options.c SOURCES
 *   mkdir -p /tmp/fuzz-options
 *   ./fuzz_options -max_total_time=60 /tmp/fuzz-options \
 *     tests/fuzz/corpus/options
 *
 * (SOURCES: what sources() in tests/fuzz/smoke.sh names for options;
 * libFuzzer adds what it finds to the first directory: not the seeds.)
 *
 * Input: the first byte picks the binary ('0' the first of base/tools.h's
 * rows, '1' the next...; any byte works, modulo their number), the rest is its
 * argv after argv[0], split at NUL and newline bytes.  So that seeds read as
 * text, one argument a line, a newline right after the first byte and one at
 * the very end are not separators (an empty line in between is an empty
 * argument).  Invariants: a rejected line is a usage error (exit status 2) with
 * a message that names something, and never exits the process (libFuzzer
 * reports an exit as a failure); an accepted line holds only values within the
 * table's bounds, leaves other binaries' options at their defaults,
 * passes validation, and its negotiated part survives the client's
 * encode and the server's decode unchanged.  Parsing the same line twice
 * gives the same answer (getopt keeps state between calls).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/kv.h"
#include "base/options.h"

#define MAX_ARGS  64
#define MAX_INPUT 4096

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

static const void *at(const struct cqp_params *p, const struct cqp_option *o)
{
	return (const char *)p + o->offset;
}

static bool terminated(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

/* The value of o in p is one the table allows (or the default, which
 * may sit outside the range to mean "not set"). */
static bool in_bounds(const struct cqp_option *o, const struct cqp_params *p,
		      const struct cqp_params *d)
{
	unsigned words = 0;
	int64_t i;
	uint64_t u;

	switch (o->type) {
	case CQP_OPT_U32:
		u = *(const uint32_t *)at(p, o);
		return u == *(const uint32_t *)at(d, o) ||
		       ((int64_t)u >= o->min && u <= o->max);
	case CQP_OPT_I32:
		i = *(const int32_t *)at(p, o);
		return i == *(const int32_t *)at(d, o) ||
		       (i >= o->min && (i < 0 || (uint64_t)i <= o->max));
	case CQP_OPT_U64:
	case CQP_OPT_SIZE:
	case CQP_OPT_RATE:
		u = *(const uint64_t *)at(p, o);
		return u == *(const uint64_t *)at(d, o) ||
		       ((o->min <= 0 || u >= (uint64_t)o->min) && u <= o->max);
	case CQP_OPT_ENUM:
		while (o->words[words])
			words++;
		return *(const uint32_t *)at(p, o) < words;
	case CQP_OPT_STR:
		return terminated(at(p, o), o->str_cap);
	case CQP_OPT_CQMOD:
		return (p->cq_mod_count == 0 && p->cq_mod_usec == 0) ||
		       (p->cq_mod_count >= 1 && p->cq_mod_count <= 65535 &&
			p->cq_mod_usec <= 65535);
	case CQP_OPT_FLAG:
		return *(const uint8_t *)at(p, o) <= 1;
	default:
		return true;
	}
}

static bool same_value(const struct cqp_option *o, const struct cqp_params *a,
		       const struct cqp_params *b)
{
	char x[128], y[128];

	cqp_option_format(o, a, x, sizeof(x));
	cqp_option_format(o, b, y, sizeof(y));
	return strcmp(x, y) == 0;
}

static void check_accepted(const struct cqp_params *p, enum cqp_tool tool)
{
	struct cqp_params d, srv;
	struct cqp_kv_writer w;
	char rec[4096]; /* what the client's session gives the record */

	cqp_params_defaults(&d, tool);
	if (!terminated(p->host, sizeof(p->host)))
		abort();
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		if (!in_bounds(o, p, &d))
			abort();
		/* an option the binary does not take cannot have been set */
		if (!(o->tools & tool) && !same_value(o, p, &d))
			abort();
	}
	if (cqp_params_validate(p, tool) != 0)
		abort();

	/* whatever the client accepts, the server must adopt as is */
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(p, tool, &w);
	if (w.overflow)
		abort();
	cqp_params_defaults(&srv, tool);
	if (cqp_params_decode(&srv, tool, w.buf, w.len) != 0)
		abort();
	for (const struct cqp_option *o = cqp_options; o->name; o++)
		if ((o->flags & CQP_OPTF_NEGOTIATED) && (o->tools & tool) &&
		    !same_value(o, p, &srv))
			abort();
}

/* Splits buf (NUL-terminated by the caller) at NUL and newline; getopt
 * may permute argv, so each parse gets its own array. */
static int split(char *buf, size_t len, const char *argv0, char **argv)
{
	int argc = 0;
	char *start = buf;

	argv[argc++] = (char *)argv0;
	for (size_t i = 0; i <= len && argc < MAX_ARGS; i++) {
		if (buf[i] == '\n' || buf[i] == '\0') {
			buf[i] = '\0';
			argv[argc++] = start;
			start = buf + i + 1;
		}
	}
	argv[argc] = NULL;
	return argc;
}

static int parse_once(const uint8_t *data, size_t size, enum cqp_tool tool,
		      struct cqp_params *p, char *msg, size_t msgcap)
{
	static char buf[MAX_INPUT + 1];
	static char argv0[32];
	char *argv[MAX_ARGS + 1];
	int argc, rc;

	if (size && data[0] == '\n') {
		data++;
		size--;
	}
	if (size && data[size - 1] == '\n')
		size--;
	memcpy(buf, data, size);
	buf[size] = '\0';
	snprintf(argv0, sizeof(argv0), "%s", cqp_tool_name(tool));
	/* an empty rest is argv[0] alone, not one empty argument */
	argc = size ? split(buf, size, argv0, argv) : 1;
	argv[argc] = NULL;
	cqp_errclear();
	rc = cqp_params_parse(p, tool, argc, argv, devnull);
	snprintf(msg, msgcap, "%s", rc < 0 ? cqp_errmsg() : "");
	if (rc < 0) {
		if (rc != -CQP_E_USAGE || cqp_errcode() != CQP_E_USAGE ||
		    cqp_exit_status(cqp_errcode()) != 2)
			abort();
		/* the message points at what was wrong */
		if (!strstr(msg, "-") && !strstr(msg, "HOST") &&
		    !strstr(msg, "argument"))
			abort();
	} else if (rc != CQP_PARSE_OK && rc != CQP_PARSE_HELP &&
		   rc != CQP_PARSE_VERSION) {
		abort();
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cqp_params p1, p2;
	char m1[512], m2[512];
	enum cqp_tool tool;
	int r1, r2;

	if (size < 1 || size - 1 > MAX_INPUT)
		return 0;
	tool = cqp_tools[(uint8_t)(data[0] - '0') % CQP_TOOL__N].tool;
	r1 = parse_once(data + 1, size - 1, tool, &p1, m1, sizeof(m1));
	if (r1 == CQP_PARSE_OK)
		check_accepted(&p1, tool);
	r2 = parse_once(data + 1, size - 1, tool, &p2, m2, sizeof(m2));
	if (r1 != r2 || strcmp(m1, m2) != 0)
		abort();
	if (r1 == CQP_PARSE_OK && memcmp(&p1, &p2, sizeof(p1)) != 0)
		abort();
	return 0;
}
