/* SPDX-License-Identifier: BSD-2-Clause */
/* Deadlines and waits of the out-of-band channel, shared by its sockets
 * (socket.c) and its frames (oob.c); nothing outside src/oob includes it. */
#ifndef CQP_OOB_WAIT_H
#define CQP_OOB_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Monotonic milliseconds: deadlines must not move with the wall clock. */
int64_t cqp_oob_now_ms(void);
/* now + timeout_ms; -1 (no deadline) for timeout_ms <= 0. */
int64_t cqp_oob_deadline_after(int timeout_ms);
/* false when a signal cut it short. */
bool cqp_oob_sleep_ms(int64_t ms);
/* "300 ms", "5 s", "2.5 s" into buf, which it returns. */
const char *cqp_oob_fmt_duration(char *buf, size_t cap, int ms);
/* Waits for events on fd until the deadline: 1 when ready (or on an
 * error or hangup, which the next I/O call reports), 0 when the deadline
 * passed, or a CQP_E_SYS or CQP_E_INTERRUPTED failure. */
int cqp_oob_wait_fd(int fd, short events, int64_t deadline);

#endif
