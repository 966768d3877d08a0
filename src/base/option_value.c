/* SPDX-License-Identifier: BSD-2-Clause */
/* One option's value: its default, its parse from text (numbers with
 * suffixes, rates, lists, modes, CPUs) and its format back. */
#include "base/options_impl.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/arrival.h"
#include "base/error.h"

void *cqp_opt_field(const struct cqp_option *o, struct cqp_params *p)
{
	return (char *)p + o->offset;
}

static void set_default(const struct cqp_option *o, struct cqp_params *p)
{
	char *f = cqp_opt_field(o, p);

	switch (o->type) {
	case CQP_OPT_FLAG:
		*(bool *)f = o->def != 0;
		break;
	case CQP_OPT_U32:
	case CQP_OPT_ENUM:
	case CQP_OPT_MODE:
		*(uint32_t *)f = (uint32_t)o->def;
		break;
	case CQP_OPT_I32:
	case CQP_OPT_CPUS:
		*(int32_t *)f = (int32_t)o->def;
		break;
	case CQP_OPT_U64:
	case CQP_OPT_SIZE:
	case CQP_OPT_RATE:
		*(uint64_t *)f = (uint64_t)o->def;
		break;
	case CQP_OPT_SPINS:
		/* One budget, also the list's only entry. */
		p->spin_us = (uint32_t)o->def;
		p->spin_list[0] = p->spin_us;
		p->nspin = 1;
		break;
	default:
		break;
	}
}

void cqp_params_defaults(struct cqp_params *p, enum cqp_tool tool)
{
	const struct cqp_tool_desc *d = cqp_tool_desc(tool);

	memset(p, 0, sizeof(*p));
	for (const struct cqp_option *o = cqp_options; o->name; o++)
		if (o->def || o->type == CQP_OPT_SPINS)
			set_default(o, p);
	p->burst = 1; /* --arrival burst:N's N, when it is not burst */
	/* The tool's own (base/tools.h): a latency tool has perftest's one
	 * message in flight; cq_poll_bw warms up one send queue's worth (-n
	 * on a fast link is milliseconds); a UD message fits the smallest
	 * RoCE path MTU on standard Ethernet. */
	if (d && d->size)
		p->size = d->size;
	if (d && d->depth)
		p->tx_depth = p->rx_depth = d->depth;
	if (d && d->warmup)
		p->warmup = d->warmup;
}

const void *cqp_opt_cfield(const struct cqp_option *o,
			   const struct cqp_params *p)
{
	return (const char *)p + o->offset;
}

/* Strict unsigned number: the whole string, decimal or 0x hex, no sign or
 * blanks; with `size`, one K/M/G suffix (powers of 1024). */
/* Line rates: decimal suffixes, as in "100g" (10^9 bit/s). */
static int parse_rate(const char *s, uint64_t *out)
{
	static const char units[] = "kmgt";
	size_t n = strlen(s);
	const char *u =
	    n ? strchr(units, tolower((unsigned char)s[n - 1])) : NULL;
	char num[32];
	uint64_t v, mult = 1;

	if (u && *u) {
		for (const char *k = units; k <= u; k++)
			mult *= 1000;
		n--;
	}
	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)num[i]))
			return -1;
	errno = 0;
	v = strtoull(num, NULL, 10);
	if (errno || v > UINT64_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

static int parse_number(const char *s, bool size, uint64_t *out)
{
	const char *digits = s;
	int base = 10;
	char *end;
	uint64_t v, mult = 1;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		digits = s + 2;
		/* strtoull would take a second prefix: "0x0x10" */
		if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
			return -1;
	}
	if (!isxdigit((unsigned char)digits[0]) ||
	    (base == 10 && !isdigit((unsigned char)digits[0])))
		return -1;
	errno = 0;
	v = strtoull(digits, &end, base);
	if (errno)
		return -1;
	if (size && *end && !end[1]) {
		switch (*end) {
		case 'k':
		case 'K':
			mult = KIB;
			break;
		case 'm':
		case 'M':
			mult = MIB;
			break;
		case 'g':
		case 'G':
			mult = GIB;
			break;
		default:
			return -1;
		}
		end++;
	}
	if (*end)
		return -1;
	if (v > UINT64_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

void cqp_opt_format_size(uint64_t v, char *buf, size_t cap)
{
	if (v && v % GIB == 0)
		snprintf(buf, cap, "%" PRIu64 "G", v / GIB);
	else if (v && v % MIB == 0)
		snprintf(buf, cap, "%" PRIu64 "M", v / MIB);
	else if (v && v % KIB == 0)
		snprintf(buf, cap, "%" PRIu64 "K", v / KIB);
	else
		snprintf(buf, cap, "%" PRIu64, v);
}

/* "1..32768", "256..4096", "poll, event or hybrid" */
void cqp_opt_format_range(const struct cqp_option *o, char *buf, size_t cap)
{
	char lo[32], hi[32];
	size_t n = 0;

	if (o->type == CQP_OPT_MODE || o->type == CQP_OPT_MODES) {
		snprintf(buf, cap,
			 "%spoll, event, hybrid, mem, empty:N (N %" PRId64
			 "..%" PRIu64 "), timer, ski, ski:rand or adaptive",
			 o->type == CQP_OPT_MODES ? "a list of " : "", o->min,
			 o->max);
		return;
	}
	if (o->flags & CQP_OPTF_AUTO) {
		snprintf(buf, cap, "%" PRId64 "..%" PRIu64 " or auto", o->min,
			 o->max);
		return;
	}
	if (o->type == CQP_OPT_ENUM || o->type == CQP_OPT_WORDS) {
		buf[0] = '\0';
		for (unsigned i = 0; o->words[i] && n < cap; i++)
			n += snprintf(buf + n, cap - n, "%s%s",
				      i == 0		? ""
				      : o->words[i + 1] ? ", "
							: " or ",
				      o->words[i]);
		return;
	}
	if (o->type == CQP_OPT_ARRIVAL) {
		snprintf(buf, cap,
			 "fixed, poisson, burst:%" PRId64 "..%" PRIu64
			 ", onoff:1..%d,1..%d or pareto:1.1..10",
			 o->min, o->max, CQP_ONOFF_MS_MAX, CQP_ONOFF_MS_MAX);
		return;
	}
	if (o->type == CQP_OPT_SIZE) {
		cqp_opt_format_size((uint64_t)o->min, lo, sizeof(lo));
		cqp_opt_format_size(o->max, hi, sizeof(hi));
	} else {
		snprintf(lo, sizeof(lo), "%" PRId64, o->min);
		snprintf(hi, sizeof(hi), "%" PRIu64, o->max);
	}
	snprintf(buf, cap, "%s..%s", lo, hi);
}

static int bad_value(const struct cqp_option *o, const char *val,
		     const char *what)
{
	char range[128];

	cqp_opt_format_range(o, range, sizeof(range));
	return cqp_fail(CQP_E_USAGE, "--%s: '%s' %s (allowed: %s)", o->name,
			val, what, range);
}

static int set_number(const struct cqp_option *o, struct cqp_params *p,
		      const char *val)
{
	/* -1 is "auto" where an option allows it. */
	bool neg = o->type == CQP_OPT_I32 &&
		   (strcmp(val, "-1") == 0 || strcmp(val, "auto") == 0);
	uint64_t v = 0;

	if (o->flags & CQP_OPTF_AUTO && strcmp(val, "auto") == 0) {
		*(uint32_t *)cqp_opt_field(o, p) = 0;
		return 0;
	}
	if (neg && o->min >= 0)
		return bad_value(o, val, "is out of range");
	if (o->type == CQP_OPT_RATE) {
		if (parse_rate(val, &v) < 0)
			return bad_value(o, val,
					 "is not a rate (a whole number, "
					 "optionally with k, m, g or t)");
	} else if (!neg && parse_number(val, o->type == CQP_OPT_SIZE, &v) < 0)
		return bad_value(o, val,
				 o->type == CQP_OPT_SIZE
				     ? "is not a size (a whole number, "
				       "optionally with K, M or G)"
				     : "is not a whole number");
	if (!neg && ((int64_t)o->min > 0 && v < (uint64_t)o->min))
		return bad_value(o, val, "is out of range");
	if (!neg && v > o->max)
		return bad_value(o, val, "is out of range");
	switch (o->type) {
	case CQP_OPT_U32:
		*(uint32_t *)cqp_opt_field(o, p) = (uint32_t)v;
		break;
	case CQP_OPT_I32:
		*(int32_t *)cqp_opt_field(o, p) = neg ? -1 : (int32_t)v;
		break;
	default:
		*(uint64_t *)cqp_opt_field(o, p) = v;
		break;
	}
	return 0;
}

static int set_cqmod(const struct cqp_option *o, struct cqp_params *p,
		     const char *val)
{
	char count[32];
	const char *comma = strchr(val, ',');
	size_t n = comma ? (size_t)(comma - val) : strlen(val);
	uint64_t c, u = 0;

	if (n >= sizeof(count))
		return bad_value(o, val, "is not COUNT[,USEC]");
	memcpy(count, val, n);
	count[n] = '\0';
	if (parse_number(count, false, &c) < 0 ||
	    (comma && parse_number(comma + 1, false, &u) < 0))
		return bad_value(o, val, "is not COUNT[,USEC]");
	if (c < 1 || c > 65535 || u > 65535)
		return bad_value(o, val,
				 "is out of range (COUNT 1..65535, "
				 "USEC 0..65535)");
	p->cq_mod_count = (uint32_t)c;
	p->cq_mod_usec = (uint32_t)u;
	return 0;
}

/* A decimal of at most three places in thousandths ("1.25" is 1250):
 * what cannot be said exactly in thousandths is refused, not rounded. */
static int parse_milli(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int places = -1;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; *s; s++) {
		if (*s == '.' && places < 0) {
			places = 0;
			continue;
		}
		if (!isdigit((unsigned char)*s) || places == 3 ||
		    v > UINT64_MAX / 100)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		places += places >= 0;
	}
	if (places == 0)
		return -1; /* "2." */
	for (places = places < 0 ? 0 : places; places < 3; places++)
		v *= 10;
	*out = v;
	return 0;
}

/* fixed, poisson, burst:N (N in the row's range), onoff:ON_MS,OFF_MS or
 * pareto:ALPHA. */
static int set_arrival(const struct cqp_option *o, struct cqp_params *p,
		       const char *val)
{
	const char *colon = strchr(val, ':'), *comma;
	size_t n = colon ? (size_t)(colon - val) : strlen(val);
	uint64_t burst = 1, on = 0, off = 0, milli = 0;
	char on_text[16];
	uint32_t kind;

	for (kind = 0; o->words[kind]; kind++)
		if (strlen(o->words[kind]) == n &&
		    strncmp(val, o->words[kind], n) == 0)
			break;
	if (!o->words[kind] || (kind >= CQP_ARRIVAL_BURST) != !!colon)
		return cqp_fail(CQP_E_USAGE,
				"--%s: '%s' is not fixed, poisson, burst:N, "
				"onoff:ON_MS,OFF_MS or pareto:ALPHA",
				o->name, val);
	switch (kind) {
	case CQP_ARRIVAL_BURST:
		if (parse_number(colon + 1, false, &burst) < 0 ||
		    burst < (uint64_t)o->min || burst > o->max)
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s': N of burst:N must be "
					"%" PRId64 "..%" PRIu64,
					o->name, val, o->min, o->max);
		break;
	case CQP_ARRIVAL_ONOFF:
		comma = strchr(colon + 1, ',');
		n = comma ? (size_t)(comma - colon - 1) : 0;
		if (comma && n < sizeof(on_text)) {
			memcpy(on_text, colon + 1, n);
			on_text[n] = '\0';
		}
		if (!comma || n >= sizeof(on_text) ||
		    parse_number(on_text, false, &on) < 0 ||
		    parse_number(comma + 1, false, &off) < 0 || on < 1 ||
		    on > CQP_ONOFF_MS_MAX || off < 1 || off > CQP_ONOFF_MS_MAX)
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s' is not onoff:ON_MS,OFF_MS "
					"(each 1..%d)",
					o->name, val, CQP_ONOFF_MS_MAX);
		break;
	case CQP_ARRIVAL_PARETO:
		if (parse_milli(colon + 1, &milli) < 0)
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s': ALPHA of pareto:ALPHA is "
					"a decimal number of at most 3 places, "
					"1.1..10",
					o->name, val);
		if (milli < CQP_PARETO_MILLI_MIN ||
		    milli > CQP_PARETO_MILLI_MAX)
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s': ALPHA of pareto:ALPHA "
					"must be 1.1..10 (a finite mean needs "
					"ALPHA > 1)",
					o->name, val);
		break;
	default:
		break;
	}
	p->arrival = kind;
	p->burst = (uint32_t)burst;
	p->on_ms = (uint32_t)on;
	p->off_ms = (uint32_t)off;
	p->pareto_milli = (uint32_t)milli;
	return 0;
}

/* U1[,U2...]: distinct budgets in the row's range, at most
 * CQP_MAX_SPINS; the first is the one used outside sweeps. */
/* A comma list that fits a parse buffer of cap: no empty item. */
static bool list_fits(const char *val, size_t cap)
{
	size_t n = strlen(val);

	return n && n < cap && val[0] != ',' && val[n - 1] != ',' &&
	       !strstr(val, ",,");
}

#define LIST_MAX 64 /* items of any list option, beyond its own limit */

/* The comma-separated items of val, split in buf (cap bytes) into
 * items[0..*n): false when an item is empty, or val does not fit. */
static bool split_list(const char *val, char *buf, size_t cap,
		       char *items[LIST_MAX], unsigned *n)
{
	char *save = NULL;

	*n = 0;
	if (!list_fits(val, cap))
		return false;
	strcpy(buf, val);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (*n == LIST_MAX)
			return false;
		items[(*n)++] = t;
	}
	return true;
}

static int set_spins(const struct cqp_option *o, struct cqp_params *p,
		     const char *val)
{
	char buf[128], *items[LIST_MAX];
	unsigned n;

	if (!split_list(val, buf, sizeof(buf), items, &n))
		return bad_value(o, val, "is not USEC[,USEC...]");
	for (unsigned i = 0; i < n; i++) {
		uint64_t v;

		if (parse_number(items[i], false, &v) < 0 || v > o->max)
			return bad_value(o, val, "is not USEC[,USEC...]");
		if (i == CQP_MAX_SPINS)
			return cqp_fail(CQP_E_USAGE, "--%s: at most %d budgets",
					o->name, CQP_MAX_SPINS);
		for (unsigned k = 0; k < i; k++)
			if (p->spin_list[k] == v)
				return cqp_fail(CQP_E_USAGE,
						"--%s: %" PRIu64
						" is there twice",
						o->name, v);
		p->spin_list[i] = (uint32_t)v;
	}
	p->nspin = n;
	p->spin_us = p->spin_list[0];
	return 0;
}

/* An item's index (0..31) in a list option, or a failure naming it. */
typedef int item_fn(const struct cqp_option *o, struct cqp_params *p,
		    const char *item);

/* A comma list of items, each once: the mask of their indexes. */
static int list_mask(const struct cqp_option *o, struct cqp_params *p,
		     const char *val, item_fn *index, uint32_t *mask)
{
	char buf[256], *items[LIST_MAX];
	unsigned n;

	*mask = 0;
	if (!split_list(val, buf, sizeof(buf), items, &n))
		return bad_value(o, val, "is not a comma-separated list");
	for (unsigned k = 0; k < n; k++) {
		int i = index(o, p, items[k]);

		if (i < 0)
			return i;
		if (*mask & 1u << i)
			return cqp_fail(CQP_E_USAGE, "--%s: %s is there twice",
					o->name, items[k]);
		*mask |= 1u << i;
	}
	return 0;
}

static int word_index(const struct cqp_option *o, struct cqp_params *p,
		      const char *item)
{
	(void)p;
	for (int i = 0; o->words[i]; i++)
		if (strcmp(item, o->words[i]) == 0)
			return i;
	return bad_value(o, item, "is not a known word");
}

/* W1,W2,... of o->words, each once: a mask in the words' order. */
static int set_words(const struct cqp_option *o, struct cqp_params *p,
		     const char *val)
{
	uint32_t mask;
	int rc = list_mask(o, p, val, word_index, &mask);

	if (rc == 0)
		*(uint32_t *)cqp_opt_field(o, p) = mask;
	return rc;
}

/* One completion mode word, or empty:N (N in o's range, one N a run:
 * --cq-mode, --client-cq-mode and --compare-modes share it).  At or
 * above CQP_CQ__N: why it is none (bad_mode). */
#define MODE_BAD_N   (UINT32_MAX - 1)
#define MODE_OTHER_N (UINT32_MAX - 2)
static uint32_t parse_mode(const struct cqp_option *o, struct cqp_params *p,
			   const char *val)
{
	const char *n = strncmp(val, "empty:", 6) == 0 ? val + 6 : NULL;
	uint64_t v;

	if (n) {
		if (parse_number(n, false, &v) < 0 || v < (uint64_t)o->min ||
		    v > o->max)
			return MODE_BAD_N;
		if (p->empty_n && p->empty_n != v)
			return MODE_OTHER_N;
		p->empty_n = (uint32_t)v;
		return CQP_CQ_EMPTY;
	}
	for (uint32_t i = 0; o->words[i]; i++)
		if (strcmp(val, o->words[i]) == 0)
			return i;
	return UINT32_MAX;
}

static int bad_mode(const struct cqp_option *o, const struct cqp_params *p,
		    const char *val, uint32_t why)
{
	if (why == MODE_BAD_N)
		return cqp_fail(CQP_E_USAGE,
				"--%s: '%s': N of empty:N must be %" PRId64
				"..%" PRIu64,
				o->name, val, o->min, o->max);
	if (why == MODE_OTHER_N)
		return cqp_fail(CQP_E_USAGE,
				"--%s: '%s': this run's empty:N is already "
				"empty:%" PRIu32 " (one N a run)",
				o->name, val, p->empty_n);
	return bad_value(o, val, "is not a completion mode");
}

static int set_mode(const struct cqp_option *o, struct cqp_params *p,
		    const char *val)
{
	uint32_t m = parse_mode(o, p, val);

	if (m >= CQP_CQ__N)
		return bad_mode(o, p, val, m);
	*(uint32_t *)cqp_opt_field(o, p) = m;
	return 0;
}

static int mode_index(const struct cqp_option *o, struct cqp_params *p,
		      const char *item)
{
	uint32_t m = parse_mode(o, p, item);

	return m < CQP_CQ__N ? (int)m : bad_mode(o, p, item, m);
}

/* --compare-modes: true or false (the flag), or a list of modes. */
static int set_modes(const struct cqp_option *o, struct cqp_params *p,
		     const char *val)
{
	uint32_t mask;
	int rc;

	if (!val || strcmp(val, "true") == 0 || strcmp(val, "false") == 0) {
		p->compare_modes = !val || val[0] == 't';
		p->compare_list = 0;
		return 0;
	}
	if ((rc = list_mask(o, p, val, mode_index, &mask)) < 0)
		return rc;
	p->compare_modes = true;
	p->compare_list = mask;
	return 0;
}

/* Whether val is meant as a list of modes: the argument after
 * --compare-modes is its list when it is one, or has a comma or an
 * "empty:" (no host has), else it is the HOST. */
bool cqp_opt_is_modes_list(const struct cqp_option *o, const char *val)
{
	struct cqp_params scratch;

	memset(&scratch, 0, sizeof(scratch));
	return val && val[0] != '-' &&
	       (strchr(val, ',') || strncmp(val, "empty:", 6) == 0 ||
		set_modes(o, &scratch, val) == 0);
}

/* C1,C2,... with ranges A-B: distinct CPUs this machine has, at most
 * CQP_MAX_THREADS. */
static int set_cpus(const struct cqp_option *o, struct cqp_params *p,
		    const char *val)
{
	long have = sysconf(_SC_NPROCESSORS_CONF);
	char buf[256], *items[LIST_MAX];
	uint32_t n = 0;
	unsigned nitems;

	if (!split_list(val, buf, sizeof(buf), items, &nitems))
		return bad_value(o, val, "is not CPU[,CPU...] (or A-B)");
	for (unsigned i = 0; i < nitems; i++) {
		char *tok = items[i], *dash = strchr(tok, '-');
		uint64_t lo, hi;

		if (dash)
			*dash = '\0';
		if (parse_number(tok, false, &lo) < 0 ||
		    (dash && parse_number(dash + 1, false, &hi) < 0))
			return bad_value(o, val,
					 "is not CPU[,CPU...] (or A-B)");
		if (!dash)
			hi = lo;
		if (hi < lo || hi > o->max)
			return bad_value(o, val,
					 "is not CPU[,CPU...] (or A-B)");
		for (uint64_t c = lo; c <= hi; c++) {
			if (have > 0 && c >= (uint64_t)have)
				return cqp_fail(CQP_E_USAGE,
						"--%s %s: this machine has no "
						"CPU %" PRIu64
						" (it has 0..%ld)",
						o->name, val, c, have - 1);
			if (n == CQP_MAX_THREADS)
				return cqp_fail(CQP_E_USAGE,
						"--%s: at most %d CPUs",
						o->name, CQP_MAX_THREADS);
			for (uint32_t k = 0; k < n; k++)
				if (p->cpus[k] == (int32_t)c)
					return cqp_fail(CQP_E_USAGE,
							"--%s: CPU %" PRIu64
							" is there twice",
							o->name, c);
			p->cpus[n++] = (int32_t)c;
		}
	}
	p->ncpu = n;
	p->cpu = p->cpus[0];
	return 0;
}

/* R1,R2,...: increasing, each in the row's range, max only last. */
static int set_rates(const struct cqp_option *o, struct cqp_params *p,
		     const char *val)
{
	char buf[512], *items[LIST_MAX];
	uint64_t prev = 0;
	uint32_t n = 0;
	unsigned nitems;

	if (!split_list(val, buf, sizeof(buf), items, &nitems))
		return cqp_fail(CQP_E_USAGE,
				"--%s: '%s' is not a list of rates "
				"(R1,R2,... increasing, %" PRId64 "..%" PRIu64
				", optionally ending in max)",
				o->name, val, o->min, o->max);
	for (unsigned i = 0; i < nitems; i++) {
		const char *tok = items[i];
		uint64_t v;

		if (n == CQP_MAX_RATES)
			return cqp_fail(CQP_E_USAGE, "--%s: at most %d rates",
					o->name, CQP_MAX_RATES);
		if (prev == CQP_RATE_MAX)
			return cqp_fail(CQP_E_USAGE,
					"--%s: max must be the last rate",
					o->name);
		if (strcmp(tok, "max") == 0)
			v = CQP_RATE_MAX;
		else if (parse_rate(tok, &v) < 0 || v < (uint64_t)o->min ||
			 v > o->max)
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s' is not a rate (%" PRId64
					"..%" PRIu64
					", k and m suffixes) or max",
					o->name, tok, o->min, o->max);
		if (v <= prev)
			return cqp_fail(CQP_E_USAGE,
					"--%s: rates must increase ('%s' "
					"after %" PRIu64 ")",
					o->name, tok, prev);
		p->rates[n++] = prev = v;
	}
	if (!n)
		return cqp_fail(CQP_E_USAGE, "--%s: '%s' holds no rate",
				o->name, val);
	p->nrates = n;
	return 0;
}

int cqp_option_set(const struct cqp_option *o, struct cqp_params *p,
		   const char *val)
{
	switch (o->type) {
	case CQP_OPT_FLAG:
		if (!val || strcmp(val, "true") == 0)
			*(bool *)cqp_opt_field(o, p) = true;
		else if (strcmp(val, "false") == 0)
			*(bool *)cqp_opt_field(o, p) = false;
		else
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s' is not true or false",
					o->name, val);
		return 0;
	case CQP_OPT_U32:
	case CQP_OPT_I32:
	case CQP_OPT_U64:
	case CQP_OPT_SIZE:
	case CQP_OPT_RATE:
		return set_number(o, p, val);
	case CQP_OPT_ENUM:
		for (unsigned i = 0; o->words[i]; i++) {
			if (strcmp(val, o->words[i]) == 0) {
				*(uint32_t *)cqp_opt_field(o, p) = i;
				return 0;
			}
		}
		return bad_value(o, val, "is not a known word");
	case CQP_OPT_STR:
		if (strlen(val) >= o->str_cap || !val[0])
			return cqp_fail(CQP_E_USAGE,
					"--%s: value must be 1..%zu characters",
					o->name, o->str_cap - 1);
		strcpy((char *)cqp_opt_field(o, p), val);
		return 0;
	case CQP_OPT_CQMOD:
		return set_cqmod(o, p, val);
	case CQP_OPT_ARRIVAL:
		return set_arrival(o, p, val);
	case CQP_OPT_RATES:
		return set_rates(o, p, val);
	case CQP_OPT_SPINS:
		return set_spins(o, p, val);
	case CQP_OPT_CPUS:
		return set_cpus(o, p, val);
	case CQP_OPT_WORDS:
		return set_words(o, p, val);
	case CQP_OPT_MODE:
		return set_mode(o, p, val);
	case CQP_OPT_MODES:
		return set_modes(o, p, val);
	default:
		return cqp_fail(CQP_E_USAGE, "--%s takes no value", o->name);
	}
}

/* Thousandths as the shortest decimal: 1500 "1.5", 2000 "2", 1250 "1.25". */
static void format_milli(uint32_t milli, const char *prefix, char *buf,
			 size_t cap)
{
	uint32_t frac = milli % 1000;
	int places = 3;

	while (frac && frac % 10 == 0) {
		frac /= 10;
		places--;
	}
	if (frac)
		snprintf(buf, cap, "%s%" PRIu32 ".%0*" PRIu32, prefix,
			 milli / 1000, places, frac);
	else
		snprintf(buf, cap, "%s%" PRIu32, prefix, milli / 1000);
}

void cqp_option_format(const struct cqp_option *o, const struct cqp_params *p,
		       char *buf, size_t cap)
{
	const void *f = cqp_opt_cfield(o, p);

	switch (o->type) {
	case CQP_OPT_FLAG:
		snprintf(buf, cap, "%s", *(const bool *)f ? "true" : "false");
		break;
	case CQP_OPT_U32:
		if (o->flags & CQP_OPTF_AUTO && !*(const uint32_t *)f)
			snprintf(buf, cap, "auto");
		else
			snprintf(buf, cap, "%" PRIu32, *(const uint32_t *)f);
		break;
	case CQP_OPT_I32:
		snprintf(buf, cap, "%" PRId32, *(const int32_t *)f);
		break;
	case CQP_OPT_MODE:
		cqp_mode_word(p, *(const uint32_t *)f, buf, cap);
		break;
	case CQP_OPT_MODES: {
		size_t n = 0;

		snprintf(buf, cap, "%s", p->compare_modes ? "true" : "false");
		for (uint32_t m = 0;
		     p->compare_list && m < CQP_CQ__N && n < cap; m++)
			if (p->compare_list & 1u << m) {
				char w[32];

				cqp_mode_word(p, m, w, sizeof(w));
				n += (size_t)snprintf(buf + n, cap - n, "%s%s",
						      n ? "," : "", w);
			}
		break;
	}
	case CQP_OPT_U64:
	case CQP_OPT_SIZE:
	case CQP_OPT_RATE:
		snprintf(buf, cap, "%" PRIu64, *(const uint64_t *)f);
		break;
	case CQP_OPT_ENUM:
		snprintf(buf, cap, "%s", o->words[*(const uint32_t *)f]);
		break;
	case CQP_OPT_STR:
		snprintf(buf, cap, "%s", (const char *)f);
		break;
	case CQP_OPT_WORDS: {
		size_t n = 0;

		buf[0] = '\0';
		for (unsigned i = 0; o->words[i] && n < cap; i++)
			if (*(const uint32_t *)f & 1u << i)
				n +=
				    (size_t)snprintf(buf + n, cap - n, "%s%s",
						     n ? "," : "", o->words[i]);
		break;
	}
	case CQP_OPT_CQMOD:
		snprintf(buf, cap, "%" PRIu32 ",%" PRIu32, p->cq_mod_count,
			 p->cq_mod_usec);
		break;
	case CQP_OPT_SPINS: {
		size_t n = 0;

		buf[0] = '\0';
		for (uint32_t i = 0; i < p->nspin && n < cap; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s%" PRIu32,
					      i ? "," : "", p->spin_list[i]);
		break;
	}
	case CQP_OPT_CPUS: {
		size_t n = 0;

		snprintf(buf, cap, "%" PRId32, p->cpu);
		for (uint32_t i = 0; p->ncpu > 1 && i < p->ncpu && n < cap; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s%" PRId32,
					      i ? "," : "", p->cpus[i]);
		break;
	}
	case CQP_OPT_RATES: {
		size_t n = 0;

		buf[0] = '\0';
		for (uint32_t i = 0; i < p->nrates && n < cap; i++) {
			if (p->rates[i] == CQP_RATE_MAX)
				n += (size_t)snprintf(buf + n, cap - n, "%smax",
						      i ? "," : "");
			else
				n += (size_t)snprintf(
				    buf + n, cap - n, "%s%" PRIu64,
				    i ? "," : "", p->rates[i]);
		}
		break;
	}
	case CQP_OPT_ARRIVAL:
		if (p->arrival == CQP_ARRIVAL_BURST)
			snprintf(buf, cap, "burst:%" PRIu32, p->burst);
		else if (p->arrival == CQP_ARRIVAL_ONOFF)
			snprintf(buf, cap, "onoff:%" PRIu32 ",%" PRIu32,
				 p->on_ms, p->off_ms);
		else if (p->arrival == CQP_ARRIVAL_PARETO)
			format_milli(p->pareto_milli, "pareto:", buf, cap);
		else
			snprintf(buf, cap, "%s", o->words[p->arrival]);
		break;
	default:
		snprintf(buf, cap, "%s", "");
		break;
	}
}
