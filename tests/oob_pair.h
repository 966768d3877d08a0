/* SPDX-License-Identifier: BSD-2-Clause */
/* The oob and session tests' helpers: a socketpair of two oob ends,
 * monotonic milliseconds, writes and sends that cannot fall short. */
#ifndef CQP_TEST_OOB_PAIR_H
#define CQP_TEST_OOB_PAIR_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "oob/oob.h"

#define T_MS 300 /* the deadline of most socketpair tests */

static inline int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Two ends of a socketpair: a is "us", b is the peer. */
static inline void make_pair(struct cqp_oob *a, struct cqp_oob *b,
			     int timeout_ms)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		exit(1);
	}
	cqp_oob_from_fd(a, sv[0], timeout_ms, "side-b:2");
	cqp_oob_from_fd(b, sv[1], timeout_ms, "side-a:1");
}

static inline void write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			perror("write");
			exit(1);
		}
		p += r;
		n -= (size_t)r;
	}
}

static inline int send_str(struct cqp_oob *o, uint16_t type, const char *s)
{
	return cqp_oob_send(o, type, s, (uint32_t)strlen(s));
}

/* No control byte in a message a peer's garbage produced. */
static inline bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

#endif
