/* SPDX-License-Identifier: BSD-2-Clause */
/* Checks of the error model (base/error.h) for the unit tests. */
#ifndef CQP_TEST_CHECK_ERR_H
#define CQP_TEST_CHECK_ERR_H

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "check.h"

/* Check a failure: return value, recorded code and a message fragment. */
#define CHECK_ERR(expr, code, frag)                                            \
	do {                                                                   \
		int rc_ = (expr);                                              \
		CHECK(rc_ == -(int)(code));                                    \
		CHECK(cqp_errcode() == (code));                                \
		CHECK(strstr(cqp_errmsg(), (frag)) != NULL);                   \
		if (rc_ != -(int)(code) || !strstr(cqp_errmsg(), (frag)))      \
			fprintf(stderr, "  got rc %d (%s): %s\n", rc_,         \
				cqp_errname(cqp_errcode()), cqp_errmsg());     \
	} while (0)

#define CHECK_OK(expr)                                                         \
	do {                                                                   \
		int rc_ = (expr);                                              \
		CHECK(rc_ == 0);                                               \
		if (rc_ != 0)                                                  \
			fprintf(stderr, "  got rc %d: %s\n", rc_,              \
				cqp_errmsg());                                 \
	} while (0)

#endif
