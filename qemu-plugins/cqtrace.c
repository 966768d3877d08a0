/* SPDX-License-Identifier: BSD-2-Clause */
/* cqtrace: preloaded into any verbs program (ours, perftest's, rdma-core's
 * examples), it timestamps each poll that found completions and each
 * post's doorbell system call, so that two tools' critical paths can be
 * compared segment by segment from outside both (scripts/dev/cqtrace.py):
 *
 *   CQPERF_TRACE=PREFIX LD_PRELOAD=.../libcqptrace.so CMD...
 *
 * At exit it writes PREFIX.PID: a header line, then one line per event,
 * "TSC KIND N": R a poll that found N completions, a receive among them;
 * S one that found sends only; W a post's doorbell write() begins; X it
 * returned.  The doorbell is rxe's (a POST_SEND command written to an
 * opened context's uverbs file); a provider that rings its doorbell in user
 * space shows no W.  The header gives the TSC and CLOCK_MONOTONIC_RAW at load
 * and at exit, for the TSC's rate (where there is no TSC, the stamps are that
 * clock's).  A diagnostic: built, never installed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlsym's RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

struct ev {
	uint64_t tsc;
	uint32_t kind, n;
};

static struct ev *evs;
static unsigned long nev, cap;
static uint64_t tsc0, ns0;
static int (*real_poll)(struct ibv_cq *, int, struct ibv_wc *);
static ssize_t (*real_write)(int, const void *, size_t);
/* The opened contexts' command files: only their writes are doorbells. */
#define MAX_CTX 16
static int cmd_fds[MAX_CTX];
static unsigned ncmd;

static bool is_cmd_fd(int fd)
{
	for (unsigned i = 0; i < ncmd; i++)
		if (cmd_fds[i] == fd)
			return true;
	return false;
}

static uint64_t raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t stamp(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return raw_ns();
#endif
}

__attribute__((constructor)) static void start(void)
{
	const char *m = getenv("CQPERF_TRACE_MAX");

	cap = m ? strtoul(m, NULL, 10) : 1ul << 21;
	/* Untouched pages cost nothing: room for long runs. */
	if (getenv("CQPERF_TRACE"))
		evs = calloc(cap, sizeof(*evs));
	tsc0 = stamp();
	ns0 = raw_ns();
}

/* One event; a full buffer drops the rest (the header counts them). */
static void note(uint32_t kind, uint32_t n)
{
	unsigned long i = __atomic_fetch_add(&nev, 1, __ATOMIC_RELAXED);

	if (evs && i < cap)
		evs[i] = (struct ev){stamp(), kind, n};
}

static int traced_poll(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
	int n = real_poll(cq, ne, wc), recv = 0;

	if (n <= 0)
		return n;
	for (int i = 0; i < n; i++)
		recv |= (wc[i].opcode & IBV_WC_RECV) != 0;
	note(recv ? 'R' : 'S', (uint32_t)n);
	return n;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	const struct ib_uverbs_cmd_hdr *h = buf;
	bool post = evs && len >= sizeof(*h) && is_cmd_fd(fd) &&
		    h->command == IB_USER_VERBS_CMD_POST_SEND;
	ssize_t r;

	if (!real_write)
		real_write = (ssize_t(*)(int, const void *, size_t))dlsym(
		    RTLD_NEXT, "write");
	if (post)
		note('W', 0);
	r = real_write(fd, buf, len);
	if (post)
		note('X', 0);
	return r;
}

struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
	static struct ibv_context *(*real)(struct ibv_device *);
	struct ibv_context *c;

	if (!real)
		real = (struct ibv_context * (*)(struct ibv_device *))
		    dlsym(RTLD_NEXT, "ibv_open_device");
	c = real(dev);
	/* ibv_poll_cq is inline: it calls the context's op. */
	if (c && evs && c->ops.poll_cq != traced_poll) {
		real_poll = c->ops.poll_cq;
		c->ops.poll_cq = traced_poll;
		if (ncmd < MAX_CTX)
			cmd_fds[ncmd++] = c->cmd_fd;
	}
	return c;
}

__attribute__((destructor)) static void dump(void)
{
	const char *prefix = getenv("CQPERF_TRACE");
	uint64_t tsc1 = stamp(), ns1 = raw_ns();
	unsigned long kept = nev < cap ? nev : cap;
	char name[4096];
	FILE *o;

	if (!evs || !prefix)
		return;
	snprintf(name, sizeof(name), "%s.%d", prefix, (int)getpid());
	if (!(o = fopen(name, "w"))) {
		perror(name);
		return;
	}
	fprintf(o,
		"# cqtrace 1 tsc0 %llu ns0 %llu tsc1 %llu ns1 %llu events %lu "
		"dropped %lu\n",
		(unsigned long long)tsc0, (unsigned long long)ns0,
		(unsigned long long)tsc1, (unsigned long long)ns1, kept,
		nev - kept);
	for (unsigned long i = 0; i < kept; i++)
		fprintf(o, "%llu %c %u\n", (unsigned long long)evs[i].tsc,
			(char)evs[i].kind, evs[i].n);
	fclose(o);
}
