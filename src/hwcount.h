/* SPDX-License-Identifier: BSD-2-Clause */
/* A port's hardware counters (sysfs hw_counters: rxe's packet and error
 * counts, mlx5's out_of_buffer and rnr_nak_retry_err...), read around each
 * step so that a collapse in throughput comes with its explanation.  They
 * count the whole port, every process on it. */
#ifndef CQP_HWCOUNT_H
#define CQP_HWCOUNT_H

#include <stddef.h>
#include <stdint.h>

#define CQP_HW_MAX 96

struct cqp_hw_counter {
	char name[48];
	uint64_t value;
};

struct cqp_hw_counters {
	unsigned n;
	struct cqp_hw_counter c[CQP_HW_MAX]; /* sorted by name */
};

/* Every counter file in dir (one decimal number each), sorted by name;
 * "lifespan" (a setting, not a counter) and names that are not lower
 * case, digits, '_' and '-' are skipped.  -1: unreadable. */
int cqp_hw_read_dir(const char *dir, struct cqp_hw_counters *out);
/* /sys/class/infiniband/DEV/ports/PORT/hw_counters; -1 without one. */
int cqp_hw_read_port(const char *dev, unsigned port,
		     struct cqp_hw_counters *out);
/* How long the kernel caches the port's counters (its "lifespan"), in
 * ms: a read sooner after traffic may miss its tail. */
unsigned cqp_hw_lifespan_ms(const char *dev, unsigned port);
/* after - before, counter by counter (by name; one missing from either
 * is left out, one that went backwards reads 0). */
void cqp_hw_delta(const struct cqp_hw_counters *before,
		  const struct cqp_hw_counters *after,
		  struct cqp_hw_counters *out);

/* kv keys "hw_NAME", and back (other keys are ignored). */
struct cqp_kv_writer;
void cqp_hw_encode(const struct cqp_hw_counters *d, struct cqp_kv_writer *w);
int cqp_hw_decode(struct cqp_hw_counters *d, const char *text, size_t len);

#endif
