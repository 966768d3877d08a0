/* SPDX-License-Identifier: BSD-2-Clause */
/* The generic parser over the option table: the command line (getopt),
 * --help, and the kv encoding of what was asked for the negotiation. */
#include "base/options_impl.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/error.h"
#include "base/kv.h"
#include "base/version.h"

const struct cqp_option *cqp_option_find(const char *name)
{
	for (const struct cqp_option *o = cqp_options; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/* Two tools may give one name two rows (--threads). */
static const struct cqp_option *find_for(const char *name, enum cqp_tool tool)
{
	for (const struct cqp_option *o = cqp_options; o->name; o++)
		if (strcmp(o->name, name) == 0 && (o->tools & tool))
			return o;
	return NULL;
}

static bool takes_arg(const struct cqp_option *o)
{
	return o->type != CQP_OPT_FLAG && o->type != CQP_OPT_HELP &&
	       o->type != CQP_OPT_VERSION && o->type != CQP_OPT_MODES;
}

/* A default outside the option's range means "not set": say so. */
static void default_text(const struct cqp_option *o, const struct cqp_params *d,
			 char *buf, size_t cap)
{
	const void *f = cqp_opt_cfield(o, d);

	if (o->type == CQP_OPT_SIZE) {
		cqp_opt_format_size(*(const uint64_t *)f, buf, cap);
	} else if ((o->type == CQP_OPT_CQMOD && !d->cq_mod_count) ||
		   (o->type == CQP_OPT_RATES && !d->nrates) ||
		   (o->type == CQP_OPT_WORDS && !*(const uint32_t *)f) ||
		   (o->type == CQP_OPT_MODES && !d->compare_modes) ||
		   (o->type == CQP_OPT_U32 && *(const uint32_t *)f < o->min) ||
		   (o->type == CQP_OPT_RATE &&
		    *(const uint64_t *)f < (uint64_t)o->min) ||
		   ((o->type == CQP_OPT_I32 || o->type == CQP_OPT_CPUS) &&
		    *(const int32_t *)f < o->min)) {
		snprintf(buf, cap, "%s", "none");
	} else {
		cqp_option_format(o, d, buf, cap);
	}
}

/* --help's width: the terminal's, else 80 (piped, or too narrow to
 * read at all). */
static unsigned help_width(FILE *out)
{
	struct winsize ws;
	int fd = fileno(out);

	if (fd >= 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col >= 60)
		return ws.ws_col;
	return 80;
}

/* text from column `at` on, folded at blanks within width and going on
 * in column `indent`; a word longer than a line has one of its own. */
static void fold(FILE *out, const char *text, unsigned at, unsigned indent,
		 unsigned width)
{
	unsigned col = at;
	bool first = true;

	while (*text) {
		size_t len = strcspn(text, " ");

		if (!first && col + 1 + len > width) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
			first = true;
		}
		fprintf(out, "%s%.*s", first ? "" : " ", (int)len, text);
		col += (first ? 0 : 1) + (unsigned)len;
		first = false;
		text += len;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

static const char *const group_names[CQP_G__N] = {
    [CQP_G_CONNECTION] = "Connection", [CQP_G_TRAFFIC] = "Traffic",
    [CQP_G_COMPLETION] = "Completion", [CQP_G_OPEN_LOOP] = "Open loop",
    [CQP_G_THREADS] = "Threads",       [CQP_G_OUTPUT] = "Output",
};

static void usage_option(const struct cqp_option *o, const struct cqp_params *d,
			 unsigned width, FILE *out)
{
	/* --rates' default and range: a few dozen characters. */
	char left[64], def[64], range[96], text[640];
	bool modes = o->type == CQP_OPT_MODES;
	int n;

	snprintf(left, sizeof(left), "%c%c%s--%s%s%s%s",
		 o->short_name ? '-' : ' ', o->short_name ? o->short_name : ' ',
		 o->short_name ? ", " : "  ", o->name,
		 takes_arg(o) ? "="
		 : modes      ? "[="
			      : "",
		 takes_arg(o) || modes ? o->argname : "", modes ? "]" : "");
	n = snprintf(text, sizeof(text), "%s", o->help);
	if ((takes_arg(o) || modes) && o->type != CQP_OPT_STR && n > 0 &&
	    (size_t)n < sizeof(text)) {
		default_text(o, d, def, sizeof(def));
		cqp_opt_format_range(o, range, sizeof(range));
		snprintf(text + n, sizeof(text) - (size_t)n,
			 " [%s; default %s]", range, def);
	}
	n = fprintf(out, "  %-28s ", left);
	fold(out, text, n > 0 ? (unsigned)n : 0, 31, width);
}

void cqp_params_usage(enum cqp_tool tool, FILE *out)
{
	struct cqp_params d;
	const char *name = cqp_tool_name(tool);
	unsigned width = help_width(out);

	cqp_params_defaults(&d, tool);
	fprintf(out,
		"Usage: %s [OPTIONS]         serve (wait for a client)\n"
		"       %s [OPTIONS] HOST    run against the server on HOST\n"
		"The server takes the test parameters from the client.\n",
		name, name);
	for (unsigned g = 0; g < CQP_G__N; g++) {
		bool heading = false;

		for (const struct cqp_option *o = cqp_options; o->name; o++) {
			if (!(o->tools & tool) || o->group != g)
				continue;
			if (!heading)
				fprintf(out, "\n%s:\n", group_names[g]);
			heading = true;
			usage_option(o, &d, width, out);
		}
	}
}

/* Builds getopt_long's tables for the options `tool` uses. */
static int build_getopt(enum cqp_tool tool, struct option *longs, char *shorts,
			const struct cqp_option **by_index)
{
	int n = 0;
	size_t s = 0;

	shorts[s++] = ':';
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		if (!(o->tools & tool))
			continue;
		longs[n].name = o->name;
		longs[n].has_arg = takes_arg(o) ? required_argument
				   : o->type == CQP_OPT_MODES
				       ? optional_argument
				       : no_argument;
		longs[n].flag = NULL;
		longs[n].val = 256 + n;
		by_index[n] = o;
		if (o->short_name) {
			shorts[s++] = o->short_name;
			if (takes_arg(o))
				shorts[s++] = ':';
		}
		n++;
	}
	memset(&longs[n], 0, sizeof(longs[n]));
	shorts[s] = '\0';
	return n;
}

static const struct cqp_option *
by_short(char c, const struct cqp_option **by_index, int n)
{
	for (int i = 0; i < n; i++)
		if (by_index[i]->short_name == c)
			return by_index[i];
	return NULL;
}

/* Edit distance of a and b (each at most 63 characters counted). */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[64], la = (unsigned)strnlen(a, 63),
			  lb = (unsigned)strnlen(b, 63);

	for (unsigned j = 0; j <= lb; j++)
		row[j] = j;
	for (unsigned i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = i;
		for (unsigned j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The tool's option nearest to an unknown "--name[=value]", when it is
 * near enough to be a typo (two edits, one for short names). */
static const struct cqp_option *nearest_option(enum cqp_tool tool,
					       const char *arg)
{
	const struct cqp_option *best = NULL;
	unsigned best_d = ~0u;
	char name[64];

	if (strncmp(arg, "--", 2) != 0)
		return NULL;
	snprintf(name, sizeof(name), "%s", arg + 2);
	name[strcspn(name, "=")] = '\0';
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		unsigned d;

		if (!(o->tools & tool))
			continue;
		d = edit_distance(name, o->name);
		if (d < best_d) {
			best_d = d;
			best = o;
		}
	}
	return best_d <= (strlen(name) > 4 ? 2u : 1u) ? best : NULL;
}

int cqp_params_parse(struct cqp_params *p, enum cqp_tool tool, int argc,
		     char **argv, FILE *out)
{
	struct option longs[MAXOPT + 1];
	const struct cqp_option *by_index[MAXOPT];
	char shorts[2 * MAXOPT + 2];
	bool seen[MAXOPT] = {false};
	int n, c, idx, rc;

	cqp_params_defaults(p, tool);
	n = build_getopt(tool, longs, shorts, by_index);
	opterr = 0;
	optind = 0; /* full reset: parse may run more than once (tests) */
	while ((c = getopt_long(argc, argv, shorts, longs, &idx)) != -1) {
		const struct cqp_option *o;

		if (c == '?') {
			if (optopt >= 256)
				return cqp_fail(CQP_E_USAGE,
						"--%s takes no value",
						by_index[optopt - 256]->name);
			if (optopt)
				return cqp_fail(
				    CQP_E_USAGE,
				    "unknown option '-%c' (see --help)",
				    optopt);
			o = nearest_option(tool, argv[optind - 1]);
			if (o)
				return cqp_fail(CQP_E_USAGE,
						"unknown option '%s' (did you "
						"mean --%s? see --help)",
						argv[optind - 1], o->name);
			return cqp_fail(CQP_E_USAGE,
					"unknown option '%s' (see --help)",
					argv[optind - 1]);
		}
		if (c == ':') {
			/* a long option's full name, even when abbreviated */
			const struct cqp_option *m =
			    optopt >= 256 ? by_index[optopt - 256]
			    : optopt	  ? by_short((char)optopt, by_index, n)
					  : NULL;
			if (m)
				return cqp_fail(CQP_E_USAGE,
						"--%s needs a value", m->name);
			return cqp_fail(CQP_E_USAGE, "%s needs a value",
					argv[optind - 1]);
		}
		o = c >= 256 ? by_index[c - 256]
			     : by_short((char)c, by_index, n);
		if (!o)
			return cqp_fail(CQP_E_USAGE, "unknown option '-%c'", c);
		if (o->type == CQP_OPT_HELP) {
			cqp_params_usage(tool, out);
			return CQP_PARSE_HELP;
		}
		if (o->type == CQP_OPT_VERSION) {
			fprintf(out, "%s (cqperf) %s\n", cqp_tool_name(tool),
				CQP_VERSION);
			return CQP_PARSE_VERSION;
		}
		/* --compare-modes LIST, as well as --compare-modes=LIST. */
		if (o->type == CQP_OPT_MODES && !optarg && optind < argc &&
		    cqp_opt_is_modes_list(o, argv[optind]))
			optarg = argv[optind++];
		rc = cqp_option_set(
		    o, p,
		    takes_arg(o) || o->type == CQP_OPT_MODES ? optarg : NULL);
		if (rc < 0)
			return rc;
		seen[o - cqp_options] = true;
	}
	if (optind < argc - 1)
		return cqp_fail(CQP_E_USAGE,
				"unexpected argument '%s': only one HOST may "
				"be given",
				argv[optind + 1]);
	if (optind == argc - 1) {
		if (strlen(argv[optind]) >= sizeof(p->host) || !argv[optind][0])
			return cqp_fail(CQP_E_USAGE, "HOST '%s' is not a host",
					argv[optind]);
		strcpy(p->host, argv[optind]);
	}
	if (seen[cqp_option_find("all") - cqp_options] &&
	    seen[cqp_option_find("size") - cqp_options])
		return cqp_fail(CQP_E_USAGE,
				"--all and --size conflict: --all runs every "
				"size");
	if (seen[cqp_option_find("iters") - cqp_options] &&
	    seen[cqp_option_find("duration") - cqp_options])
		return cqp_fail(CQP_E_USAGE,
				"--iters and --duration conflict: pick one");
	if (tool & LAT_TOOLS &&
	    seen[cqp_option_find("client-cq-mode") - cqp_options] && !p->rate &&
	    !p->nrates)
		return cqp_fail(CQP_E_USAGE,
				"--client-cq-mode needs --rate or --rates: in "
				"ping-pong both sides reap in --cq-mode");
	if (seen[cqp_option_find("verb") - cqp_options] &&
	    seen[cqp_option_find("verbs") - cqp_options])
		return cqp_fail(CQP_E_USAGE,
				"--verb and --verbs conflict: one verb, or a "
				"set of steps per verb");
	/* A verb's own default: atomics are 8 bytes, and the target of a
	 * plain WRITE has only memory to poll. */
	if (cqp_params_verbs(p) & 1u << CQP_VERB_ATOMIC &&
	    !seen[cqp_option_find("size") - cqp_options] && !p->all)
		p->size = 8;
	if (p->verb == CQP_VERB_WRITE && !p->verbs &&
	    !seen[cqp_option_find("cq-mode") - cqp_options])
		p->cq_mode = CQP_CQ_MEM;
	return cqp_params_validate(p, tool);
}

/* The checks of --verb and --verbs against the modes and sizes. */

static void each_asked(const struct cqp_params *p, enum cqp_tool tool,
		       void (*fn)(void *, const struct cqp_option *,
				  const char *),
		       void *arg)
{
	struct cqp_params d;

	cqp_params_defaults(&d, tool);
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		/* --rates: 16 rates of up to 9 digits and their commas. */
		char mine[512], def[512];

		if (!(o->flags & CQP_OPTF_NEGOTIATED) || !(o->tools & tool))
			continue;
		cqp_option_format(o, p, mine, sizeof(mine));
		cqp_option_format(o, &d, def, sizeof(def));
		if (strcmp(mine, def) != 0)
			fn(arg, o, mine);
	}
}

static void encode_one(void *w, const struct cqp_option *o, const char *val)
{
	cqp_kv_add_str(w, o->name, val);
}

void cqp_params_encode(const struct cqp_params *p, enum cqp_tool tool,
		       struct cqp_kv_writer *w)
{
	/* Only what differs from the defaults travels: the server starts
	 * from the same defaults (the hello checked both run one version). */
	each_asked(p, tool, encode_one, w);
}

struct asked_text {
	char *buf;
	size_t cap, len;
};

static void asked_one(void *arg, const struct cqp_option *o, const char *val)
{
	struct asked_text *t = arg;
	/* As a user types it: a flag, or --compare-modes with its default
	 * list, alone (the wire's "true" is not a word of the option). */
	bool flag = (o->type == CQP_OPT_FLAG || o->type == CQP_OPT_MODES) &&
		    strcmp(val, "true") == 0;
	int n;

	if (t->len >= t->cap)
		return;
	n = snprintf(t->buf + t->len, t->cap - t->len, "%s--%s%s%s",
		     t->len ? " " : "", o->name, flag ? "" : " ",
		     flag ? "" : val);
	t->len += n > 0 ? (size_t)n : 0;
}

void cqp_params_asked(const struct cqp_params *p, enum cqp_tool tool, char *buf,
		      size_t cap)
{
	struct asked_text t = {buf, cap, 0};

	buf[0] = '\0';
	each_asked(p, tool, asked_one, &t);
	if (t.len >= cap && cap > 4)
		memcpy(buf + cap - 4, "...", 4);
	else if (!t.len)
		snprintf(buf, cap, "%s", "the defaults");
}

const char *cqp_params_differ(const struct cqp_params *a,
			      const struct cqp_params *b, enum cqp_tool tool,
			      char *va, char *vb, size_t cap)
{
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		if (!(o->flags & CQP_OPTF_NEGOTIATED) || !(o->tools & tool))
			continue;
		cqp_option_format(o, a, va, cap);
		cqp_option_format(o, b, vb, cap);
		if (strcmp(va, vb) != 0)
			return o->name;
	}
	return NULL;
}

struct decode_ctx {
	struct cqp_params *p;
	enum cqp_tool tool;
};

static int decode_one(void *ctx, const char *key, const char *val)
{
	struct decode_ctx *d = ctx;
	const struct cqp_option *o = find_for(key, d->tool);

	if (!o || !(o->flags & CQP_OPTF_NEGOTIATED))
		return cqp_fail(CQP_E_USAGE,
				"parameter '%s' is not one %s accepts", key,
				cqp_tool_name(d->tool));
	return cqp_option_set(o, d->p, val);
}

int cqp_params_decode(struct cqp_params *p, enum cqp_tool tool,
		      const char *text, size_t len)
{
	struct cqp_params d;
	struct decode_ctx ctx = {p, tool};
	int rc;

	cqp_params_defaults(&d, tool);
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		if (!(o->flags & CQP_OPTF_NEGOTIATED))
			continue;
		if (o->type == CQP_OPT_CQMOD) {
			p->cq_mod_count = d.cq_mod_count;
			p->cq_mod_usec = d.cq_mod_usec;
		} else if (o->type == CQP_OPT_ARRIVAL) {
			p->arrival = d.arrival;
			p->burst = d.burst;
			p->on_ms = d.on_ms;
			p->off_ms = d.off_ms;
			p->pareto_milli = d.pareto_milli;
		} else if (o->type == CQP_OPT_RATES) {
			p->nrates = 0;
		} else if (o->type == CQP_OPT_MODE ||
			   o->type == CQP_OPT_MODES) {
			p->compare_modes = d.compare_modes;
			p->compare_list = d.compare_list;
			p->cq_mode = d.cq_mode;
			p->client_cq_mode = d.client_cq_mode;
			p->empty_n = d.empty_n;
		} else if (o->type == CQP_OPT_SPINS) {
			p->spin_us = d.spin_us;
			p->nspin = d.nspin;
			memcpy(p->spin_list, d.spin_list, sizeof(p->spin_list));
		} else {
			size_t sz = o->type == CQP_OPT_FLAG  ? sizeof(bool)
				    : o->type == CQP_OPT_STR ? o->str_cap
				    : o->type == CQP_OPT_U64 ||
					    o->type == CQP_OPT_SIZE ||
					    o->type == CQP_OPT_RATE
					? sizeof(uint64_t)
					: sizeof(uint32_t);
			memcpy(cqp_opt_field(o, p), cqp_opt_cfield(o, &d), sz);
		}
	}
	rc = cqp_kv_parse(text, len, decode_one, &ctx);
	if (rc < 0)
		return rc;
	return cqp_params_validate(p, tool);
}
