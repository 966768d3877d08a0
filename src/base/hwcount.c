/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/hwcount.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kv.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cqp_hw_counter *)a)->name,
		      ((const struct cqp_hw_counter *)b)->name);
}

/* The schema's property names: irdma's camelCase (cnpHandled, RxECNMrkd)
 * as much as rxe's snake case. */
static bool name_ok(const char *s)
{
	if (*s == '.' || !*s) /* ".", "..", hidden files */
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
		      *s == '.'))
			return false;
	return true;
}

/* What explains a collapse, in any provider's spelling: rx_drops,
 * ip4InDiscards, tcpRetransSegs, rnr_nak_retry_err, cnpHandled,
 * RxECNMrkd, out_of_buffer, duplicate_request... */
static bool wanted(const char *name)
{
	static const char *const words[] = {
	    "drop", "discard", "retr", "err",	  "nak", "rnr",	 "cnp",
	    "ecn",  "out_of",  "seq",  "timeout", "dup", "oflow"};
	char low[CQP_HW_NAME];
	size_t i;

	for (i = 0; name[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z'
				    ? name[i] - 'A' + 'a'
				    : name[i]);
	low[i] = '\0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

/* The wanted ones first, then by name. */
static int by_need(const void *a, const void *b)
{
	const struct cqp_hw_counter *x = a, *y = b;
	bool wx = wanted(x->name), wy = wanted(y->name);

	if (wx != wy)
		return wx ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

int cqp_hw_read_dir(const char *dir, struct cqp_hw_counters *out)
{
	DIR *d = opendir(dir);
	struct cqp_hw_counter *all = NULL;
	unsigned n = 0, cap = 0;
	struct dirent *e;
	char path[512];

	out->n = out->left_out = 0;
	if (!d)
		return -1;
	/* All of them first: which to keep cannot depend on readdir's
	 * order. */
	while ((e = readdir(d))) {
		uint64_t v;

		if (!name_ok(e->d_name) || strcmp(e->d_name, "lifespan") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (read_u64(path, &v) < 0)
			continue;
		if (strlen(e->d_name) >= CQP_HW_NAME) {
			out->left_out++;
			continue;
		}
		if (n == cap) {
			unsigned ncap = cap ? 2 * cap : CQP_HW_MAX;
			struct cqp_hw_counter *p =
			    realloc(all, ncap * sizeof(*p));

			if (!p) { /* keep what we have, and say so */
				out->left_out++;
				continue;
			}
			all = p;
			cap = ncap;
		}
		snprintf(all[n].name, sizeof(all[n].name), "%s", e->d_name);
		all[n++].value = v;
	}
	closedir(d);
	if (n > CQP_HW_MAX) {
		qsort(all, n, sizeof(all[0]), by_need);
		out->left_out += n - CQP_HW_MAX;
		n = CQP_HW_MAX;
	}
	if (n)
		memcpy(out->c, all, n * sizeof(all[0]));
	out->n = n;
	free(all);
	qsort(out->c, out->n, sizeof(out->c[0]), by_name);
	return 0;
}

static void port_dir(char *buf, size_t cap, const char *dev, unsigned port)
{
	snprintf(buf, cap, "/sys/class/infiniband/%s/ports/%u/hw_counters", dev,
		 port);
}

int cqp_hw_read_port(const char *dev, unsigned port,
		     struct cqp_hw_counters *out)
{
	char dir[256];

	port_dir(dir, sizeof(dir), dev, port);
	return cqp_hw_read_dir(dir, out);
}

unsigned cqp_hw_lifespan_ms(const char *dev, unsigned port)
{
	char path[300];
	uint64_t v;

	port_dir(path, sizeof(path), dev, port);
	strncat(path, "/lifespan", sizeof(path) - strlen(path) - 1);
	if (read_u64(path, &v) < 0)
		return 0;
	return v > 1000 ? 1000 : (unsigned)v;
}

/* A counter that went backwards wrapped if both reads fit in 32 bits,
 * else it was reset (cqp_hw_delta). */
static uint64_t counter_delta(uint64_t before, uint64_t after)
{
	if (after >= before)
		return after - before;
	if (before <= UINT32_MAX)
		return (uint32_t)(after - before);
	return 0;
}

void cqp_hw_delta(const struct cqp_hw_counters *before,
		  const struct cqp_hw_counters *after,
		  struct cqp_hw_counters *out)
{
	unsigned i = 0, j = 0;

	out->n = 0;
	out->left_out = after->left_out;
	/* Both sorted by name: one merge pass. */
	while (i < before->n && j < after->n) {
		int cmp = strcmp(before->c[i].name, after->c[j].name);

		if (cmp < 0) {
			i++;
		} else if (cmp > 0) {
			j++;
		} else {
			struct cqp_hw_counter *c = &out->c[out->n++];

			*c = after->c[j];
			c->value = counter_delta(before->c[i].value,
						 after->c[j].value);
			i++;
			j++;
		}
	}
}

/* name as a kv key's tail (cqp_hw_encode's escapes); false: no room. */
static bool to_wire(const char *name, char *out, size_t cap)
{
	size_t n = 0;

	for (; *name; name++) {
		char c = *name;

		if (n + 3 > cap)
			return false;
		if (c >= 'A' && c <= 'Z') {
			out[n++] = '-';
			out[n++] = (char)(c - 'A' + 'a');
		} else if (c == '-' || c == '.') {
			out[n++] = '-';
			out[n++] = c == '-' ? '-' : '_';
		} else {
			out[n++] = c;
		}
	}
	out[n] = '\0';
	return true;
}

/* And back; false for an escape we never write, or a name too long. */
static bool from_wire(const char *key, char *out, size_t cap)
{
	size_t n = 0;

	for (; *key; key++) {
		char c = *key;

		if (n + 1 >= cap)
			return false;
		if (c == '-') {
			c = *++key;
			if (c >= 'a' && c <= 'z')
				c = (char)(c - 'a' + 'A');
			else if (c == '_')
				c = '.';
			else if (c != '-')
				return false;
		}
		out[n++] = c;
	}
	out[n] = '\0';
	return true;
}

void cqp_hw_encode(const struct cqp_hw_counters *d, struct cqp_kv_writer *w)
{
	char key[3 + 2 * CQP_HW_NAME];

	for (unsigned i = 0; i < d->n; i++) {
		memcpy(key, "hw_", 3);
		if (to_wire(d->c[i].name, key + 3, sizeof(key) - 3))
			cqp_kv_add_u64(w, key, d->c[i].value);
	}
}

static int collect(void *ctx, const char *key, const char *val)
{
	struct cqp_hw_counters *d = ctx;
	struct cqp_hw_counter *c;
	char *end;

	if (strncmp(key, "hw_", 3) != 0 || d->n >= CQP_HW_MAX)
		return 0;
	c = &d->c[d->n];
	errno = 0;
	c->value = strtoull(val, &end, 10);
	if (errno || end == val || *end ||
	    !from_wire(key + 3, c->name, sizeof(c->name)))
		return 0;
	d->n++;
	return 0;
}

int cqp_hw_decode(struct cqp_hw_counters *d, const char *text, size_t len)
{
	d->n = d->left_out = 0;
	return cqp_kv_parse(text, len, collect, d) < 0 ? -1 : 0;
}
