/* SPDX-License-Identifier: BSD-2-Clause */
/* The out-of-band channel: TCP setup, the framed protocol and every error
 * message that names a frame and the peer.  Long (~1000 lines) because
 * the sockets, the frames and their failures are one state machine: a
 * timeout or a short read is reported where the frame is known. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif

#include "oob/oob.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/kv.h"

/* Pause between connect attempts while the server may still be starting. */
#define RETRY_MS 150
/* send_error must not hold up a run that is already failing. */
#define ERROR_SEND_MS 1000
/* Enough for a hello, a barrier, or the start of an ERROR's reason. */
#define SMALL_PAYLOAD 1024

static const char *const msg_names[CQP_MSG__MAX] = {
    [CQP_MSG_HELLO] = "HELLO",	     [CQP_MSG_PARAMS] = "PARAMS",
    [CQP_MSG_ACCEPT] = "ACCEPT",     [CQP_MSG_REJECT] = "REJECT",
    [CQP_MSG_ENDPOINT] = "ENDPOINT", [CQP_MSG_BARRIER] = "BARRIER",
    [CQP_MSG_RESULTS] = "RESULTS",   [CQP_MSG_ERROR] = "ERROR",
    [CQP_MSG_BYE] = "BYE",	     [CQP_MSG_PORT] = "PORT",
    [CQP_MSG_ALIVE] = "ALIVE",
};

static const char *msg_name(uint16_t type)
{
	if (type == 0 || type >= CQP_MSG__MAX)
		return "an unknown message";
	return msg_names[type];
}

static int64_t now_ms(void);

/* CQPERF_TRACE=oob (cqperf(7) ENVIRONMENT): each frame sent or received,
 * and each wait for one, on standard error.  Read once. */
static bool tracing(void)
{
	static _Atomic int on = -1;
	int v = atomic_load_explicit(&on, memory_order_relaxed);

	if (v < 0) {
		const char *e = getenv("CQPERF_TRACE");

		v = e && strstr(e, "oob") != NULL;
		atomic_store_explicit(&on, v, memory_order_relaxed);
	}
	return v;
}

/* "cq_poll_bw[123] oob +0.012 s -> PARAMS 57 B to HOST:PORT: text" */
static void trace(const struct cqp_oob *o, const char *what, uint16_t type,
		  const void *payload, uint32_t len)
{
	static _Atomic int64_t t0;
	int64_t now, zero = 0;
	char text[161];
	uint32_t n = 0;

	if (!tracing())
		return;
	now = now_ms();
	atomic_compare_exchange_strong(&t0, &zero, now);
	/* kv records: one key=value a line, shown comma-separated */
	for (const char *p = payload; p && n < len && n < sizeof(text) - 1; n++)
		text[n] = p[n] == '\n'			? ','
			  : p[n] >= 0x20 && p[n] < 0x7f ? p[n]
							: '?';
	text[n] = '\0';
	if (n && n == len && text[n - 1] == ',')
		text[n - 1] = '\0';
	fprintf(stderr, "%s[%d] oob +%.3f s %s %s %" PRIu32 " B %s %s%s%s%s\n",
		program_invocation_short_name, (int)getpid(),
		(double)(now - atomic_load(&t0)) / 1e3, what, msg_name(type),
		len, what[0] == '-' ? "to" : "from", o->peer, n ? ": " : "",
		text, len > n ? "..." : "");
}

/* Before a wait: the line a stuck pair ends on says what each side
 * waits for. */
static void trace_wait(const struct cqp_oob *o, uint16_t type)
{
	if (tracing())
		fprintf(stderr, "%s[%d] oob waits for %s from %s\n",
			program_invocation_short_name, (int)getpid(),
			msg_name(type), o->peer);
}

/* Monotonic milliseconds: deadlines must not move with the wall clock. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* -1 means no deadline. */
static int64_t deadline_after(int timeout_ms)
{
	return timeout_ms > 0 ? now_ms() + timeout_ms : -1;
}

/* false when a signal cut it short: our only signals are SIGINT and
 * SIGTERM (see wait_fd). */
static bool sleep_ms(int64_t ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	return nanosleep(&ts, &ts) == 0;
}

/* "300 ms", "5 s", "2.5 s" */
static const char *fmt_duration(char *buf, size_t cap, int ms)
{
	if (ms < 1000)
		snprintf(buf, cap, "%d ms", ms);
	else if (ms % 1000 == 0)
		snprintf(buf, cap, "%d s", ms / 1000);
	else
		snprintf(buf, cap, "%.1f s", ms / 1000.0);
	return buf;
}

/* Length of the well-formed UTF-8 sequence at s (1..4) and its code
 * point, or 0: a stray continuation byte, a truncated or overlong
 * sequence, a surrogate or past U+10FFFF. */
static int utf8_seq(const unsigned char *s, uint32_t *cp)
{
	static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
	int n = s[0] < 0x80		      ? 1
		: s[0] >= 0xc0 && s[0] < 0xe0 ? 2
		: s[0] >= 0xe0 && s[0] < 0xf0 ? 3
		: s[0] >= 0xf0 && s[0] < 0xf8 ? 4
					      : 0;
	uint32_t c;

	if (n == 0)
		return 0;
	c = n == 1 ? s[0] : s[0] & (0x7fu >> n);
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	if (c < least[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void cqp_oob_sanitize(char *s)
{
	char *out = s;

	while (*s) {
		uint32_t cp = 0;
		int n = utf8_seq((const unsigned char *)s, &cp);

		/* C0, DEL and C1 (U+0080..U+009F, CSI among them) are what a
		 * terminal acts on; so are bytes of no character at all. */
		if (n == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
			*out++ = '?';
			s += n ? n : 1;
			continue;
		}
		memmove(out, s, (size_t)n);
		out += n;
		s += n;
	}
	*out = '\0';
}

/* Wait for events on fd until the deadline.  Returns 1 when ready (or on
 * error/hangup, which the following I/O call reports), 0 when the deadline
 * passed, or a CQP_E_SYS failure. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int t = -1, r;

		if (deadline >= 0) {
			int64_t left = deadline - now_ms();

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
	int64_t deadline = deadline_after(timeout_ms);
	char d[32];

	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd, r;

		r = wait_fd(lfd, POLLIN, deadline);
		if (r < 0)
			return r;
		if (r == 0)
			return cqp_fail(CQP_E_TIMEOUT,
					"no client connected to TCP port %u "
					"within %s",
					local_port(lfd),
					fmt_duration(d, sizeof(d), timeout_ms));
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
		r = wait_fd(fd, POLLOUT, deadline);
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
			note_as, where, fmt_duration(d, sizeof(d), timeout_ms));
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
	int64_t deadline = deadline_after(timeout_ms);
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
		    (deadline >= 0 && now_ms() + RETRY_MS > deadline))
			return cqp_fail(CQP_E_NET, "cannot resolve host %s: %s",
					host,
					rc == EAI_SYSTEM ? strerror(errno)
							 : gai_strerror(rc));
		if (!sleep_ms(RETRY_MS))
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
		left = deadline < 0 ? RETRY_MS : deadline - now_ms();
		if (left <= 0)
			break;
		if (!noted)
			say_retrying(note_as, where, timeout_ms);
		noted = true;
		if (!sleep_ms(left < RETRY_MS ? left : RETRY_MS))
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
			 fmt_duration(d, sizeof(d), waited_ms));
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

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

void cqp_oob_hdr_encode(uint8_t hdr[CQP_OOB_HDR_LEN], uint16_t type,
			uint32_t len)
{
	put_be32(hdr, CQP_OOB_MAGIC);
	put_be16(hdr + 4, CQP_OOB_VERSION);
	put_be16(hdr + 6, type);
	put_be32(hdr + 8, len);
}

/* who: "peer" or "peer HOST:PORT", so the public decoder and recv share
 * the messages. */
static int hdr_decode(const uint8_t hdr[CQP_OOB_HDR_LEN], uint16_t *type,
		      uint32_t *len, const char *who)
{
	uint32_t magic = get_be32(hdr), l = get_be32(hdr + 8);
	uint16_t ver = get_be16(hdr + 4), t = get_be16(hdr + 6);

	if (magic != CQP_OOB_MAGIC)
		return cqp_fail(CQP_E_PROTO,
				"%s sent a frame with bad magic 0x%08x "
				"(expected 0x%08x \"CQPF\"): not a cqperf "
				"peer, or the stream is out of step",
				who, magic, CQP_OOB_MAGIC);
	/* Before the type: another version may have other types. */
	if (ver != CQP_OOB_VERSION)
		return cqp_fail(CQP_E_VERSION,
				"%s speaks cqperf protocol v%u, we speak v%u",
				who, ver, CQP_OOB_VERSION);
	if (t == 0 || t >= CQP_MSG__MAX)
		return cqp_fail(CQP_E_PROTO, "%s sent unknown message type %u",
				who, t);
	if (l > CQP_OOB_MAX_PAYLOAD)
		return cqp_fail(CQP_E_PROTO,
				"%s announced a %s payload of %u bytes, over "
				"the limit of %u bytes",
				who, msg_names[t], l, CQP_OOB_MAX_PAYLOAD);
	*type = t;
	*len = l;
	return 0;
}

int cqp_oob_hdr_decode(const uint8_t hdr[CQP_OOB_HDR_LEN], uint16_t *type,
		       uint32_t *len)
{
	return hdr_decode(hdr, type, len, "peer");
}

/* Progress through one frame, for messages about where it stopped. */
struct frame_pos {
	int64_t deadline;
	uint32_t done;	/* frame bytes moved so far */
	uint32_t total; /* header + payload, 0 while the length is unknown */
	uint16_t want;	/* the message expected, 0 for any */
};

static void where_in_frame(char *buf, size_t cap, const struct frame_pos *f)
{
	if (f->done == 0)
		buf[0] = '\0';
	else if (f->total == 0)
		snprintf(buf, cap, " (mid-frame after %u of %u header bytes)",
			 f->done, CQP_OOB_HDR_LEN);
	else
		snprintf(buf, cap, " (mid-frame after %u of %u bytes)", f->done,
			 f->total);
}

static int read_full(struct cqp_oob *o, void *buf, uint32_t n,
		     struct frame_pos *f)
{
	uint8_t *p = buf;
	char at[80], d[32];

	while (n) {
		ssize_t r = recv(o->fd, p, n, MSG_DONTWAIT);

		if (r > 0) {
			p += r;
			n -= (uint32_t)r;
			f->done += (uint32_t)r;
			continue;
		}
		where_in_frame(at, sizeof(at), f);
		if (r == 0)
			return cqp_fail(CQP_E_PEER_CLOSED,
					"peer %s closed the connection%s",
					o->peer, at);
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int w = wait_fd(o->fd, POLLIN, f->deadline);

			if (w < 0)
				return w;
			/* Say what we waited for: a server's log then tells
			 * a silent client from one that stalled later. */
			if (w == 0 && f->want && f->done == 0)
				return cqp_fail(
				    CQP_E_TIMEOUT,
				    "no answer from peer %s within %s "
				    "(waiting for its %s)",
				    o->peer,
				    fmt_duration(d, sizeof(d), o->timeout_ms),
				    msg_name(f->want));
			if (w == 0)
				return cqp_fail(
				    CQP_E_TIMEOUT,
				    "no answer from peer %s within %s%s",
				    o->peer,
				    fmt_duration(d, sizeof(d), o->timeout_ms),
				    at);
			continue;
		}
		/* A killed peer often shows up as a reset, not a close. */
		if (errno == ECONNRESET)
			return cqp_fail(CQP_E_PEER_CLOSED,
					"peer %s reset the connection%s",
					o->peer, at);
		return cqp_fail(CQP_E_NET, "reading from peer %s: %s%s",
				o->peer, strerror(errno), at);
	}
	return 0;
}

static int send_frame(struct cqp_oob *o, uint16_t type, const void *buf,
		      uint32_t len, int timeout_ms)
{
	uint8_t hdr[CQP_OOB_HDR_LEN];
	struct iovec iov[2] = {
	    {.iov_base = hdr, .iov_len = sizeof(hdr)},
	    {.iov_base = (void *)buf, .iov_len = len},
	};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	struct frame_pos f = {.deadline = deadline_after(timeout_ms),
			      .total = CQP_OOB_HDR_LEN + len};
	char at[80], d[32];

	if (type == 0 || type >= CQP_MSG__MAX || len > CQP_OOB_MAX_PAYLOAD)
		return cqp_fail(CQP_E_PROTO,
				"refusing to send message type %u with a "
				"%u-byte payload to peer %s (limit %u)",
				type, len, o->peer, CQP_OOB_MAX_PAYLOAD);
	cqp_oob_hdr_encode(hdr, type, len);
	while (f.done < f.total) {
		/* MSG_NOSIGNAL: a vanished peer is an error, not SIGPIPE. */
		ssize_t r = sendmsg(o->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r >= 0) {
			size_t left = (size_t)r;

			f.done += (uint32_t)r;
			while (mh.msg_iovlen && left >= mh.msg_iov->iov_len) {
				left -= mh.msg_iov->iov_len;
				mh.msg_iov++;
				mh.msg_iovlen--;
			}
			if (mh.msg_iovlen) {
				mh.msg_iov->iov_base =
				    (uint8_t *)mh.msg_iov->iov_base + left;
				mh.msg_iov->iov_len -= left;
			}
			continue;
		}
		where_in_frame(at, sizeof(at), &f);
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int w = wait_fd(o->fd, POLLOUT, f.deadline);

			if (w < 0)
				return w;
			if (w == 0)
				return cqp_fail(
				    CQP_E_TIMEOUT,
				    "peer %s did not take our %s "
				    "within %s (it stopped "
				    "reading)%s",
				    o->peer, msg_names[type],
				    fmt_duration(d, sizeof(d), timeout_ms), at);
			continue;
		}
		if (errno == EPIPE || errno == ECONNRESET)
			return cqp_fail(CQP_E_PEER_CLOSED,
					"peer %s closed the connection "
					"(sending %s)%s",
					o->peer, msg_names[type], at);
		return cqp_fail(CQP_E_NET, "sending %s to peer %s: %s%s",
				msg_names[type], o->peer, strerror(errno), at);
	}
	trace(o, "->", type, buf, len);
	return 0;
}

int cqp_oob_send(struct cqp_oob *o, uint16_t type, const void *buf,
		 uint32_t len)
{
	return send_frame(o, type, buf, len, o->timeout_ms);
}

static int recv_hdr(struct cqp_oob *o, struct frame_pos *f, uint16_t *type,
		    uint32_t *len)
{
	uint8_t hdr[CQP_OOB_HDR_LEN];
	char who[128];
	int rc;

	rc = read_full(o, hdr, sizeof(hdr), f);
	if (rc < 0)
		return rc;
	snprintf(who, sizeof(who), "peer %s", o->peer);
	rc = hdr_decode(hdr, type, len, who);
	if (rc < 0)
		return rc;
	f->total = CQP_OOB_HDR_LEN + *len;
	return 0;
}

/* Read the payload announced by the header into the caller's buffer. */
static int recv_payload(struct cqp_oob *o, struct frame_pos *f, uint16_t t,
			uint32_t l, void *buf, uint32_t cap, uint32_t *len)
{
	int rc;

	/* Refuse before reading: an oversized payload is never buffered. */
	if (l > cap)
		return cqp_fail(CQP_E_PROTO,
				"peer %s sent a %u-byte %s, larger than our "
				"%u-byte buffer",
				o->peer, l, msg_names[t], cap);
	rc = read_full(o, buf, l, f);
	if (rc < 0)
		return rc;
	if (l < cap)
		((char *)buf)[l] = '\0';
	if (len)
		*len = l;
	return 0;
}

int cqp_oob_recv(struct cqp_oob *o, uint16_t *type, void *buf, uint32_t cap,
		 uint32_t *len)
{
	struct frame_pos f = {.deadline = deadline_after(o->timeout_ms)};
	uint16_t t;
	uint32_t l;
	int rc;

	rc = recv_hdr(o, &f, &t, &l);
	if (rc < 0)
		return rc;
	rc = recv_payload(o, &f, t, l, buf, cap, len);
	if (rc < 0)
		return rc;
	trace(o, "<-", t, buf, l);
	*type = t;
	return 0;
}

/* The reason of an ERROR/REJECT payload, whatever else it carries. */
static void peer_reason(const char *text, uint32_t len, char *out, size_t cap)
{
	if (cqp_kv_get_str(text, len, "reason", out, cap) < 0)
		snprintf(out, cap, "(no reason given)");
	cqp_oob_sanitize(out);
}

int cqp_oob_expect(struct cqp_oob *o, uint16_t type, void *buf, uint32_t cap,
		   uint32_t *len)
{
	struct frame_pos f = {.deadline = deadline_after(o->timeout_ms),
			      .want = type};
	char small[SMALL_PAYLOAD], reason[512];
	uint16_t t;
	uint32_t l, keep;
	int rc;

	trace_wait(o, type);
	rc = recv_hdr(o, &f, &t, &l);
	if (rc < 0)
		return rc;
	if (t == type) {
		rc = recv_payload(o, &f, t, l, buf, cap, len);
		if (rc == 0)
			trace(o, "<-", t, buf, l);
		return rc;
	}
	if (t != CQP_MSG_ERROR && t != CQP_MSG_REJECT)
		return cqp_fail(CQP_E_PROTO, "expected %s from peer %s, got %s",
				msg_name(type), o->peer, msg_names[t]);

	/* Read the reason into our own buffer: the caller's may be small
	 * or absent, and the reason must not be lost to a size check.
	 * Beyond what fits we read and drop, keeping the stream in step. */
	keep = l < sizeof(small) ? l : (uint32_t)sizeof(small);
	rc = read_full(o, small, keep, &f);
	for (uint32_t left = l - keep; rc == 0 && left;) {
		char sink[256];
		uint32_t n = left < sizeof(sink) ? left : sizeof(sink);

		rc = read_full(o, sink, n, &f);
		left -= n;
	}
	if (rc < 0)
		return rc;
	trace(o, "<-", t, small, keep);
	peer_reason(small, keep, reason, sizeof(reason));
	if (t == CQP_MSG_ERROR)
		return cqp_fail(CQP_E_PEER_FAILED, "peer %s failed: %s",
				o->peer, reason);
	return cqp_fail(CQP_E_REJECTED, "peer %s rejected the parameters: %s",
			o->peer, reason);
}

void cqp_oob_send_error(struct cqp_oob *o, const char *reason)
{
	struct cqp_error saved;
	char text[512], buf[600];
	struct cqp_kv_writer w;
	int t = o->timeout_ms;

	if (o->fd < 0)
		return;
	/* The caller is about to report its own failure: keep it intact. */
	cqp_error_save(&saved);
	/* A kv value cannot hold a newline. */
	snprintf(text, sizeof(text), "%s", reason ? reason : "");
	for (char *p = text; *p; p++)
		if (*p == '\n')
			*p = ' ';
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_kv_add_str(&w, "reason", text);
	if (!w.overflow)
		(void)send_frame(o, CQP_MSG_ERROR, buf, (uint32_t)w.len,
				 t > 0 && t < ERROR_SEND_MS ? t
							    : ERROR_SEND_MS);
	(void)cqp_error_restore(&saved);
}

bool cqp_oob_pending(const struct cqp_oob *o)
{
	struct pollfd pfd = {.fd = o->fd, .events = POLLIN};

	return o->fd >= 0 && poll(&pfd, 1, 0) > 0;
}

int cqp_oob_peek(const struct cqp_oob *o, uint16_t *type)
{
	uint8_t hdr[CQP_OOB_HDR_LEN];
	uint32_t len;
	ssize_t r;
	int ret;

	if (!cqp_oob_pending(o))
		return 0;
	/* A frame left waiting (the peer's results) is seen again at every
	 * look and hides a close behind it; the session reads both soon. */
	r = recv(o->fd, hdr, sizeof(hdr), MSG_PEEK | MSG_DONTWAIT);
	if (r < 0 &&
	    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	if (r <= 0)
		return cqp_fail(CQP_E_PEER_CLOSED,
				"peer %s closed the connection mid-run%s%s",
				o->peer, r < 0 ? ": " : "",
				r < 0 ? strerror(errno) : "");
	if (r < (ssize_t)sizeof(hdr))
		return 0;
	/* garbage: the session would fail on it, so fail now, naming it */
	ret = cqp_oob_hdr_decode(hdr, type, &len);
	return ret < 0 ? ret : 1;
}
