/* SPDX-License-Identifier: BSD-2-Clause */
/* The out-of-band channel's TCP: listen, accept, connect with retries
 * within a deadline, and what to say when no server answered. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif

#include "oob/oob.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#include "oob/wait.h"

/* Pause between connect attempts while the server may still be starting. */
#define RETRY_MS 150

static void format_host_port(char *out, size_t cap, const char *host,
			     uint16_t port)
{
	/* Bracket IPv6 literals so the port stays readable. */
	if (strchr(host, ':'))
		snprintf(out, cap, "[%s]:%u", host, port);
	else
		snprintf(out, cap, "%s:%u", host, port);
}

static void sockaddr_to_peer(const struct sockaddr *sa, socklen_t salen,
			     char *out, size_t cap)
{
	/* Numeric: an IPv6 literal with a scope id fits in 80. */
	char host[80], serv[NI_MAXSERV];
	const char *h = host;

	if (getnameinfo(sa, salen, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(out, cap, "?");
		return;
	}
	/* A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d. */
	if (strncmp(h, "::ffff:", 7) == 0 && strchr(h + 7, '.'))
		h += 7;
	format_host_port(out, cap, h, (uint16_t)strtoul(serv, NULL, 10));
}

/* Every session socket: no Nagle, and a peer whose machine is gone
 * (no ACK for the frame timeout, or no answer to keepalives after it)
 * ends the connection, so no wait on it outlives its deadline.  A
 * frozen process still ACKs: the waits' own deadlines catch that. */
static void tune_socket(int fd, int timeout_ms)
{
	int one = 1, sec = timeout_ms > 0 ? (timeout_ms + 999) / 1000 : 30;
	int intvl = sec > 3 ? sec / 3 : 1, cnt = 3;
	unsigned ms = (unsigned)sec * 1000u;

	/* Frames are small and each waits for an answer: Nagle would add
	 * a delayed-ACK round trip.  Each failure here only costs that. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &sec, sizeof(sec));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
}

static int bind_listen(int family, uint16_t port, int *fdp, int *err)
{
	int one = 1, zero = 0, fd;
	struct sockaddr_storage ss;
	socklen_t sl;

	memset(&ss, 0, sizeof(ss));
	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		/* One socket for both families, whatever the sysctl says. */
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
				 sizeof(zero));
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(port);
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		s4->sin_port = htons(port);
		sl = sizeof(*s4);
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 16) < 0) {
		*err = errno;
		close(fd);
		return -1;
	}
	*fdp = fd;
	return 0;
}

int cqp_oob_listen(uint16_t port, int *lfd)
{
	int err = 0;

	if (bind_listen(AF_INET6, port, lfd, &err) == 0)
		return 0;
	/* IPv6 missing from the kernel or disabled: IPv4 only. */
	if (err == EAFNOSUPPORT || err == EADDRNOTAVAIL ||
	    err == EPROTONOSUPPORT) {
		if (bind_listen(AF_INET, port, lfd, &err) == 0)
			return 0;
	}
	if (err == EADDRINUSE)
		return cqp_fail(CQP_E_NET,
				"cannot listen on TCP port %u: it is already "
				"in use (another server running? choose "
				"another with --port)",
				port);
	return cqp_fail(CQP_E_NET, "cannot listen on TCP port %u: %s", port,
			strerror(err));
}

static unsigned local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

int cqp_oob_local_gid(const struct cqp_oob *o, uint8_t gid[16])
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (o->fd < 0 || getsockname(o->fd, (struct sockaddr *)&ss, &sl) < 0)
		return -1;
	if (ss.ss_family == AF_INET6) {
		memcpy(gid, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
		return 0;
	}
	if (ss.ss_family != AF_INET)
		return -1;
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	return 0;
}

int cqp_oob_accept(int lfd, int timeout_ms, struct cqp_oob *o)
{
	int64_t deadline = cqp_oob_deadline_after(timeout_ms);
	char d[32];

	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd, r;

		r = cqp_oob_wait_fd(lfd, POLLIN, deadline);
		if (r < 0)
			return r;
		if (r == 0)
			return cqp_fail(
			    CQP_E_TIMEOUT,
			    "no client connected to TCP port %u "
			    "within %s",
			    local_port(lfd),
			    cqp_oob_fmt_duration(d, sizeof(d), timeout_ms));
		fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
		if (fd < 0) {
			/* The client may have gone between poll and accept,
			 * or the listen socket may be blocking: wait again. */
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK || errno == ECONNABORTED ||
			    errno == EPROTO)
				continue;
			return cqp_fail(CQP_E_NET,
					"accepting a client on TCP port %u: %s",
					local_port(lfd), strerror(errno));
		}
		tune_socket(fd, timeout_ms);
		o->fd = fd;
		o->timeout_ms = timeout_ms;
		sl = sizeof(ss);
		if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
			sockaddr_to_peer((struct sockaddr *)&ss, sl, o->peer,
					 sizeof(o->peer));
		else
			snprintf(o->peer, sizeof(o->peer), "?");
		return 0;
	}
}

/* Errors worth another attempt: the server may not be up yet, or the
 * network may still be coming up. */
static bool connect_retryable(int err)
{
	switch (err) {
	case ECONNREFUSED:
	case ENETUNREACH:
	case EHOSTUNREACH:
	case ETIMEDOUT:
	case ECONNRESET:
	case ECONNABORTED:
	case EAGAIN:
	case EINTR:
	case ENETDOWN:
	case EHOSTDOWN:
		return true;
	default:
		return false;
	}
}

/* One non-blocking attempt bounded by the deadline.  Returns the connected
 * fd, or -1 with *err set (ETIMEDOUT when the deadline cut it short). */
static int connect_once(const struct addrinfo *ai, int64_t deadline, int *err)
{
	int fd, r, soerr = 0;
	socklen_t sl = sizeof(soerr);

	fd = socket(ai->ai_family,
		    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    ai->ai_protocol);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS && errno != EINTR) {
			*err = errno;
			close(fd);
			return -1;
		}
		r = cqp_oob_wait_fd(fd, POLLOUT, deadline);
		if (r <= 0) {
			*err = r == 0				    ? ETIMEDOUT
			       : cqp_errcode() == CQP_E_INTERRUPTED ? EINTR
								    : EIO;
			close(fd);
			return -1;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
			soerr = errno;
		if (soerr) {
			*err = soerr;
			close(fd);
			return -1;
		}
	}
	/* Back to blocking for anyone using o->fd directly; our own I/O
	 * uses MSG_DONTWAIT and poll. */
	r = fcntl(fd, F_GETFL);
	if (r >= 0)
		(void)fcntl(fd, F_SETFL, r & ~O_NONBLOCK);
	return fd;
}

/* The client's one note while it retries, and its end by a signal. */
static void say_retrying(const char *note_as, const char *where, int timeout_ms)
{
	char d[32];

	if (!note_as)
		return;
	if (timeout_ms > 0)
		fprintf(stderr, "%s: no server on %s yet; retrying for %s\n",
			note_as, where,
			cqp_oob_fmt_duration(d, sizeof(d), timeout_ms));
	else
		fprintf(stderr, "%s: no server on %s yet; retrying\n", note_as,
			where);
}

static int interrupted(struct addrinfo *res, const char *where)
{
	freeaddrinfo(res);
	return cqp_fail(CQP_E_INTERRUPTED,
			"interrupted while waiting for the server on %s",
			where);
}

int cqp_oob_connect(const char *host, uint16_t port, int timeout_ms,
		    const struct cqp_oob_wait *how, struct cqp_oob *o)
{
	const char *note_as = how ? how->note_as : NULL;
	int64_t deadline = cqp_oob_deadline_after(timeout_ms);
	struct addrinfo hints, *res = NULL;
	char serv[8], where[300], msg[512];
	int rc, err = 0;
	bool noted = false, refused = false;

	format_host_port(where, sizeof(where), host, port);
	snprintf(serv, sizeof(serv), "%u", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	for (;;) {
		rc = getaddrinfo(host, serv, &hints, &res);
		if (rc == 0)
			break;
		/* Only a temporary resolver failure is worth waiting for. */
		if (rc != EAI_AGAIN ||
		    (deadline >= 0 && cqp_oob_now_ms() + RETRY_MS > deadline))
			return cqp_fail(CQP_E_NET, "cannot resolve host %s: %s",
					host,
					rc == EAI_SYSTEM ? strerror(errno)
							 : gai_strerror(rc));
		if (!cqp_oob_sleep_ms(RETRY_MS))
			return cqp_fail(CQP_E_INTERRUPTED,
					"interrupted while resolving %s", host);
	}

	for (;;) {
		bool retry = false;
		int64_t left;

		if (how && how->stop && *how->stop)
			return interrupted(res, where);
		for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			int e = 0, fd = connect_once(ai, deadline, &e);

			if (fd >= 0) {
				freeaddrinfo(res);
				tune_socket(fd, timeout_ms);
				o->fd = fd;
				o->timeout_ms = timeout_ms;
				format_host_port(o->peer, sizeof(o->peer), host,
						 port);
				return 0;
			}
			/* Prefer reporting a meaningful error over the
			 * "no IPv6 here" of a secondary address. */
			if (!err || e != EAFNOSUPPORT)
				err = e;
			if (e == EINTR)
				return interrupted(res, where);
			refused |= e == ECONNREFUSED;
			if (connect_retryable(e))
				retry = true;
		}
		if (!retry)
			break;
		left = deadline < 0 ? RETRY_MS : deadline - cqp_oob_now_ms();
		if (left <= 0)
			break;
		if (!noted)
			say_retrying(note_as, where, timeout_ms);
		noted = true;
		if (!cqp_oob_sleep_ms(left < RETRY_MS ? left : RETRY_MS))
			return interrupted(res, where);
	}
	freeaddrinfo(res);
	cqp_oob_unreached(msg, sizeof(msg), how ? how->tool : NULL, where, err,
			  refused, timeout_ms > 0 ? timeout_ms : 0);
	return cqp_fail(CQP_E_NET, "%s", msg);
}

void cqp_oob_unreached(char *buf, size_t cap, const char *tool,
		       const char *where, int err, bool refused, int waited_ms)
{
	char d[32] = "", how_long[64] = "";

	if (waited_ms > 0)
		snprintf(how_long, sizeof(how_long), " within %s",
			 cqp_oob_fmt_duration(d, sizeof(d), waited_ms));
	if (refused || err == ECONNREFUSED) {
		snprintf(buf, cap,
			 "could not connect to %s%s: connection refused, no "
			 "%s%sserver listens there; start one on that host "
			 "with `%s -d DEV`",
			 where, how_long, tool ? tool : "", tool ? " " : "",
			 tool ? tool : "TOOL");
		return;
	}
	switch (err) {
	case ENETUNREACH:
	case EHOSTUNREACH:
	case EHOSTDOWN:
	case ENETDOWN:
		snprintf(buf, cap,
			 "could not connect to %s%s: %s (no route to it from "
			 "here: check the address, or the link and route to "
			 "it)",
			 where, how_long, strerror(err));
		return;
	case ETIMEDOUT:
		snprintf(buf, cap,
			 "could not connect to %s%s: no answer (%s: the host "
			 "may be down, or a firewall drops that TCP port)",
			 where, how_long, strerror(err));
		return;
	default:
		snprintf(buf, cap, "could not connect to %s%s: %s", where,
			 how_long, strerror(err));
	}
}

void cqp_oob_from_fd(struct cqp_oob *o, int fd, int timeout_ms,
		     const char *peer)
{
	o->fd = fd;
	o->timeout_ms = timeout_ms;
	snprintf(o->peer, sizeof(o->peer), "%s", peer ? peer : "?");
}

void cqp_oob_close(struct cqp_oob *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}
