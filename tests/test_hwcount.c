/* SPDX-License-Identifier: BSD-2-Clause */
/* Port counters: a directory laid out like sysfs hw_counters, the delta
 * between two reads, and the trip through a results record. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "hwcount.h"
#include "kv.h"

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void cleanup(const char *dir)
{
	static const char *const names[] = {"sent_pkts",    "rcvd_pkts",
					    "rcvd_rnr_err", "lifespan",
					    "VL15_dropped", "junk"};
	char path[512];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	char dir[] = "/tmp/cqperf-hw.XXXXXX";
	struct cqp_hw_counters a, b, d, back;
	struct cqp_kv_writer w;
	char rec[1024];

	CHECK(mkdtemp(dir) != NULL);
	/* rxe's layout: a counter per file, plus the cache's lifespan. */
	put(dir, "sent_pkts", "100\n");
	put(dir, "rcvd_pkts", "90\n");
	put(dir, "rcvd_rnr_err", "7\n");
	put(dir, "lifespan", "10\n");
	put(dir, "VL15_dropped", "1\n"); /* not a kv key: skipped */
	put(dir, "junk", "n/a\n");
	CHECK(cqp_hw_read_dir(dir, &a) == 0);
	CHECK(a.n == 3);
	CHECK_STR(a.c[0].name, "rcvd_pkts");
	CHECK_STR(a.c[1].name, "rcvd_rnr_err");
	CHECK_STR(a.c[2].name, "sent_pkts");
	CHECK(a.c[2].value == 100);

	put(dir, "sent_pkts", "1100\n");
	put(dir, "rcvd_pkts", "1090\n");
	put(dir, "rcvd_rnr_err", "3\n"); /* reset: reads 0, not a wrap */
	CHECK(cqp_hw_read_dir(dir, &b) == 0);
	cqp_hw_delta(&a, &b, &d);
	CHECK(d.n == 3);
	CHECK(d.c[0].value == 1000 && d.c[1].value == 0 &&
	      d.c[2].value == 1000);
	/* A counter on one side only is left out. */
	b.n = 2;
	cqp_hw_delta(&a, &b, &d);
	CHECK(d.n == 2);

	cqp_hw_delta(&a, &a, &d);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_u64(&w, "iterations", 5);
	cqp_hw_encode(&d, &w);
	CHECK(!w.overflow);
	CHECK(cqp_hw_decode(&back, rec, w.len) == 0);
	CHECK(back.n == 3);
	CHECK_STR(back.c[2].name, "sent_pkts");
	CHECK(back.c[2].value == 0);

	cleanup(dir);
	CHECK(cqp_hw_read_dir(dir, &a) == -1 && a.n == 0);
	return check_done("test_hwcount");
}
