/* SPDX-License-Identifier: BSD-2-Clause */
#include "hwcount.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cqp_hw_counter *)a)->name,
		      ((const struct cqp_hw_counter *)b)->name);
}

/* Names travel as kv keys: lower case, digits, '_' and '-'. */
static bool name_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-'))
			return false;
	return true;
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
	struct dirent *e;
	char path[512];

	out->n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)) && out->n < CQP_HW_MAX) {
		struct cqp_hw_counter *c = &out->c[out->n];

		if (!name_ok(e->d_name) || strcmp(e->d_name, "lifespan") == 0 ||
		    strlen(e->d_name) >= sizeof(c->name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (read_u64(path, &c->value) < 0)
			continue;
		snprintf(c->name, sizeof(c->name), "%s", e->d_name);
		out->n++;
	}
	closedir(d);
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

void cqp_hw_delta(const struct cqp_hw_counters *before,
		  const struct cqp_hw_counters *after,
		  struct cqp_hw_counters *out)
{
	unsigned i = 0, j = 0;

	out->n = 0;
	/* Both sorted by name: one merge pass. */
	while (i < before->n && j < after->n) {
		int cmp = strcmp(before->c[i].name, after->c[j].name);

		if (cmp < 0) {
			i++;
		} else if (cmp > 0) {
			j++;
		} else {
			struct cqp_hw_counter *c = &out->c[out->n++];
			uint64_t a = before->c[i].value, b = after->c[j].value;

			*c = after->c[j];
			c->value = b >= a ? b - a : 0;
			i++;
			j++;
		}
	}
}

void cqp_hw_encode(const struct cqp_hw_counters *d, struct cqp_kv_writer *w)
{
	char key[64];

	for (unsigned i = 0; i < d->n; i++) {
		snprintf(key, sizeof(key), "hw_%s", d->c[i].name);
		cqp_kv_add_u64(w, key, d->c[i].value);
	}
}

static int collect(void *ctx, const char *key, const char *val)
{
	struct cqp_hw_counters *d = ctx;
	struct cqp_hw_counter *c;
	char *end;

	if (strncmp(key, "hw_", 3) != 0 || d->n >= CQP_HW_MAX ||
	    strlen(key + 3) >= sizeof(c->name))
		return 0;
	c = &d->c[d->n];
	errno = 0;
	c->value = strtoull(val, &end, 10);
	if (errno || end == val || *end)
		return 0;
	snprintf(c->name, sizeof(c->name), "%s", key + 3);
	d->n++;
	return 0;
}

int cqp_hw_decode(struct cqp_hw_counters *d, const char *text, size_t len)
{
	d->n = 0;
	return cqp_kv_parse(text, len, collect, d) < 0 ? -1 : 0;
}
