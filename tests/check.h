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

/* Writes text to dir/name: the files of a directory tree a test fakes
 * (sysfs, /proc). */
static inline void check_put_file(const char *dir, const char *name,
				  const char *text)
{
	char path[1024];
	FILE *f = NULL;
	int len = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (len > 0 && (size_t)len < sizeof(path))
		f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static inline int check_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
