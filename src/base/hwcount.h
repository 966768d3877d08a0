/* SPDX-License-Identifier: BSD-2-Clause */
/* A port's hardware counters (sysfs hw_counters: rxe's packet and error
 * counts, mlx5's out_of_buffer and rnr_nak_retry_err...), read around each
 * step so that a collapse in throughput comes with its explanation.  They
 * count the whole port, every process on it. */
#ifndef CQP_HWCOUNT_H
#define CQP_HWCOUNT_H

#include <stddef.h>
#include <stdint.h>

/* The most a report keeps (bnxt_re has over 100, mlx5 about 60): past
 * it, the counters that explain a collapse first (see cqp_hw_read_dir). */
#define CQP_HW_MAX  256
#define CQP_HW_NAME 48 /* bytes, with the NUL */

struct cqp_hw_counter {
	char name[CQP_HW_NAME];
	uint64_t value;
};

struct cqp_hw_counters {
	unsigned n;
	unsigned left_out; /* counters the directory had that are not here */
	struct cqp_hw_counter c[CQP_HW_MAX]; /* sorted by name */
};

/* Every counter file in dir (one decimal number each), sorted by name
 * (strcmp: irdma's camelCase names as they are).  "lifespan" (a setting,
 * not a counter) and names outside [A-Za-z0-9_.-] are skipped.  Past
 * CQP_HW_MAX, or with a name too long to keep, a counter is counted in
 * left_out; the ones kept are drops, discards, retransmissions, errors,
 * NAKs and congestion (CNP, ECN) first, then by name: never the
 * directory's order.  -1: unreadable. */
int cqp_hw_read_dir(const char *dir, struct cqp_hw_counters *out);
/* /sys/class/infiniband/DEV/ports/PORT/hw_counters; -1 without one. */
int cqp_hw_read_port(const char *dev, unsigned port,
		     struct cqp_hw_counters *out);
/* How long the kernel caches the port's counters (its "lifespan"), in
 * ms: a read sooner after traffic may miss its tail. */
unsigned cqp_hw_lifespan_ms(const char *dev, unsigned port);
/* after - before, counter by counter (by name; one missing from either
 * is left out).  One that went backwards wrapped if both reads fit in 32
 * bits (sysfs shows u64, but many providers keep 32-bit hardware
 * counters): the difference modulo 2^32.  Else it was reset: 0. */
void cqp_hw_delta(const struct cqp_hw_counters *before,
		  const struct cqp_hw_counters *after,
		  struct cqp_hw_counters *out);

/* The most bytes cqp_hw_encode adds to a record: "hw_", a name escaped
 * to twice its length, '=', a u64 and '\n' per counter. */
#define CQP_HW_KV_MAX (CQP_HW_MAX * (3 + 2 * (CQP_HW_NAME - 1) + 1 + 20 + 1))

/* kv keys "hw_NAME", and back (other keys are ignored).  kv keys are
 * lower case: an upper-case letter travels as '-' and its lower case,
 * '-' as "--" and '.' as "-_". */
struct cqp_kv_writer;
void cqp_hw_encode(const struct cqp_hw_counters *d, struct cqp_kv_writer *w);
int cqp_hw_decode(struct cqp_hw_counters *d, const char *text, size_t len);

#endif
