/* SPDX-License-Identifier: BSD-2-Clause */
#include "oob/wait.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/error.h"

/* Monotonic milliseconds: deadlines must not move with the wall clock. */
int64_t cqp_oob_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* -1 means no deadline. */
int64_t cqp_oob_deadline_after(int timeout_ms)
{
	return timeout_ms > 0 ? cqp_oob_now_ms() + timeout_ms : -1;
}

/* false when a signal cut it short: our only signals are SIGINT and
 * SIGTERM (see cqp_oob_wait_fd). */
bool cqp_oob_sleep_ms(int64_t ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	return nanosleep(&ts, &ts) == 0;
}

/* "300 ms", "5 s", "2.5 s" */
const char *cqp_oob_fmt_duration(char *buf, size_t cap, int ms)
{
	if (ms < 1000)
		snprintf(buf, cap, "%d ms", ms);
	else if (ms % 1000 == 0)
		snprintf(buf, cap, "%d s", ms / 1000);
	else
		snprintf(buf, cap, "%.1f s", ms / 1000.0);
	return buf;
}

/* Wait for events on fd until the deadline.  Returns 1 when ready (or on
 * error/hangup, which the following I/O call reports), 0 when the deadline
 * passed, or a CQP_E_SYS failure. */
int cqp_oob_wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int t = -1, r;

		if (deadline >= 0) {
			int64_t left = deadline - cqp_oob_now_ms();

			if (left <= 0)
				return 0;
			t = left > INT_MAX ? INT_MAX : (int)left;
		}
		r = poll(&p, 1, t);
		if (r > 0)
			return 1;
		/* Our only signals are SIGINT and SIGTERM: give up the wait. */
		if (r < 0 && errno == EINTR)
			return cqp_fail(CQP_E_INTERRUPTED, "interrupted");
		if (r < 0)
			return cqp_fail(CQP_E_SYS, "poll: %s", strerror(errno));
		/* timeout: the loop re-checks the deadline */
	}
}
