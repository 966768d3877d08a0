/* SPDX-License-Identifier: BSD-2-Clause */
/* The one random number generator of the schedules and the policies:
 * xorshift64*, seeded by the caller (any state but 0). */
#ifndef CQP_RNG_H
#define CQP_RNG_H

#include <stdint.h>

/* Uniform in (0, 1]: never 0, so that a log or a power of it is finite. */
static inline double cqp_uniform(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return ((double)((x * 0x2545f4914f6cdd1dull) >> 11) + 1.0) /
	       9007199254740992.0;
}

#endif
