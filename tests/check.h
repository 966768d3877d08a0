/* SPDX-License-Identifier: BSD-2-Clause */
/* A tiny assertion kit for the unit tests: each failed CHECK prints where
 * and what, and the test exits non-zero through check_done(). */
#ifndef CQP_TEST_CHECK_H
#define CQP_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                            \
	do {                                                                   \
		check_count++;                                                 \
		if (!(cond)) {                                                 \
			check_failures++;                                      \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
		}                                                              \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *check_a_ = (a), *check_b_ = (b);                   \
		check_count++;                                                 \
		if (strcmp(check_a_, check_b_) != 0) {                         \
			check_failures++;                                      \
			fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, \
				__LINE__, check_a_, check_b_);                 \
		}                                                              \
	} while (0)

#define CHECK_NEAR(a, b, eps)                                                  \
	do {                                                                   \
		double check_a_ = (a), check_b_ = (b);                         \
		check_count++;                                                 \
		if (!(check_a_ - check_b_ <= (eps) &&                          \
		      check_b_ - check_a_ <= (eps))) {                         \
			check_failures++;                                      \
			fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g\n",   \
				__FILE__, __LINE__, #a, check_a_, check_b_);   \
		}                                                              \
	} while (0)

static inline int check_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
