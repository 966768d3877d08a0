/* SPDX-License-Identifier: BSD-2-Clause */
/* The progress line on a fake clock and a memory stream: its text (step,
 * what, time left), the in-place rewrite, the throttle, the clear, and
 * that a line that is off writes nothing. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/progress.h"
#include "check.h"

#define MS 1000000ull
#define S  1000000000ull

static char *mem;
static size_t memlen;

static FILE *open_mem(void)
{
	FILE *f = open_memstream(&mem, &memlen);

	CHECK(f != NULL);
	return f;
}

/* What the stream got since the last call. */
static size_t seen;
static const char *news(FILE *f)
{
	static char buf[4096];
	size_t n;

	fflush(f);
	n = memlen - seen;
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, mem + seen, n);
	buf[n] = '\0';
	seen = memlen;
	return buf;
}

static const char *text(const struct cqp_progress *pg, uint64_t now)
{
	static char buf[256];

	cqp_progress_text(pg, now, buf, sizeof(buf));
	return buf;
}

static void test_text(void)
{
	struct cqp_progress pg;
	char buf[256];
	size_t len;

	/* No -D: "?" until a step finished, then the average step. */
	cqp_progress_init(&pg, NULL, 23, 0);
	pg.started = true;
	snprintf(pg.what, sizeof(pg.what), "2 B, poll");
	CHECK_STR(text(&pg, 0), "step 1/23  2 B, poll  ? left");
	CHECK_STR(text(&pg, 5 * S), "step 1/23  2 B, poll  ? left");
	/* Three steps of 1 s each done, the fourth just begun: 19 more
	 * steps after it and all of it. */
	pg.i = 3;
	pg.first_ns = 10 * S;
	pg.begun_ns = 13 * S;
	snprintf(pg.what, sizeof(pg.what), "4096 B, event");
	CHECK_STR(text(&pg, 13 * S), "step 4/23  4096 B, event  20 s left");
	/* Half-way through it: seconds round up. */
	CHECK_STR(text(&pg, 13 * S + 500 * MS),
		  "step 4/23  4096 B, event  20 s left");
	/* A step that runs long counts as all but done, never as less. */
	CHECK_STR(text(&pg, 14 * S + 200 * MS),
		  "step 4/23  4096 B, event  19 s left");
	CHECK_STR(text(&pg, 20 * S), "step 4/23  4096 B, event  19 s left");

	/* -D 3: known before any step finished. */
	cqp_progress_init(&pg, NULL, 12, 3);
	pg.started = true;
	snprintf(pg.what, sizeof(pg.what), "64 B, hybrid:50");
	CHECK_STR(text(&pg, 0), "step 1/12  64 B, hybrid:50  36 s left");
	CHECK_STR(text(&pg, 1500 * MS),
		  "step 1/12  64 B, hybrid:50  35 s left");
	/* Steps took 4 s each (warm-up, exchanges): that, not -D. */
	pg.i = 2;
	pg.first_ns = 0;
	pg.begun_ns = 8 * S;
	CHECK_STR(text(&pg, 8 * S), "step 3/12  64 B, hybrid:50  40 s left");
	/* Minutes, hours. */
	cqp_progress_init(&pg, NULL, 100, 3);
	CHECK_STR(text(&pg, 0) + strlen(text(&pg, 0)) - 15, "5 min 00 s left");
	cqp_progress_init(&pg, NULL, 2, 86400);
	CHECK_STR(text(&pg, 0) + strlen(text(&pg, 0)) - 16, "48 h 00 min left");

	/* What gives way: the line stays within 79 columns, the time
	 * left stays whole. */
	cqp_progress_init(&pg, NULL, 256, 86400);
	pg.i = 255;
	memset(pg.what, 'x', sizeof(pg.what) - 1);
	len = cqp_progress_text(&pg, 0, buf, sizeof(buf));
	CHECK(len == strlen(buf));
	CHECK(len <= CQP_PROGRESS_COLS);
	CHECK(strncmp(buf, "step 256/256  xxx", 17) == 0);
	CHECK(strstr(buf, "  24 h 00 min left") == buf + len - 18);
	/* A small buffer is cut, terminated. */
	len = cqp_progress_text(&pg, 0, buf, 8);
	CHECK(len == 7 && strcmp(buf, "step 25") == 0);
}

static void test_draw(void)
{
	struct cqp_progress pg;
	FILE *f = open_mem();

	seen = 0;
	/* Two -D 3 steps. */
	cqp_progress_init(&pg, f, 2, 3);
	/* Nothing before the first step, however often it ticks. */
	cqp_progress_tick(&pg, 0);
	CHECK_STR(news(f), "");
	cqp_progress_step(&pg, 0, "4096 B, poll", 0);
	CHECK_STR(news(f), "\rstep 1/2  4096 B, poll  6 s left\033[K");
	/* The throttle: not again within CQP_PROGRESS_EVERY_NS. */
	cqp_progress_tick(&pg, 100 * MS);
	CHECK_STR(news(f), "");
	/* Due, but the text is the same (5.7 s is still 6 s). */
	cqp_progress_tick(&pg, 300 * MS);
	CHECK_STR(news(f), "");
	/* Due and changed: rewritten in place. */
	cqp_progress_tick(&pg, 1100 * MS);
	CHECK_STR(news(f), "\rstep 1/2  4096 B, poll  5 s left\033[K");
	/* A step boundary within the throttle waits for the next tick... */
	cqp_progress_step(&pg, 1, "4096 B, event", 1200 * MS);
	CHECK_STR(news(f), "");
	cqp_progress_tick(&pg, 1300 * MS);
	CHECK_STR(news(f), "");
	/* ...which says the new step (3 s: -D, the first took less). */
	cqp_progress_tick(&pg, 1400 * MS);
	CHECK_STR(news(f), "\rstep 2/2  4096 B, event  3 s left\033[K");
	/* Cleared: back to column 0, the line erased. */
	cqp_progress_clear(&pg);
	CHECK_STR(news(f), "\r\033[K");
	/* Nothing to clear twice. */
	cqp_progress_clear(&pg);
	CHECK_STR(news(f), "");
	/* A tick after a clear draws it again, at once. */
	cqp_progress_tick(&pg, 1450 * MS);
	CHECK_STR(news(f), "\rstep 2/2  4096 B, event  3 s left\033[K");
	/* The end clears, and then nothing draws any more. */
	cqp_progress_end(&pg);
	CHECK_STR(news(f), "\r\033[K");
	cqp_progress_tick(&pg, 10 * S);
	cqp_progress_step(&pg, 1, "x", 11 * S);
	cqp_progress_clear(&pg);
	cqp_progress_end(&pg);
	CHECK_STR(news(f), "");
	/* Ended before it drew: nothing at all. */
	cqp_progress_init(&pg, f, 5, 0);
	cqp_progress_end(&pg);
	CHECK_STR(news(f), "");
	fclose(f);
	free(mem);
	mem = NULL;
}

/* Off (a pipe, --quiet, one plain step): no call writes a byte. */
static void test_off(void)
{
	struct cqp_progress pg;
	struct cqp_params p;
	int fds[2], pt;
	FILE *f = open_mem();

	seen = 0;
	cqp_progress_init(&pg, NULL, 23, 3);
	cqp_progress_step(&pg, 0, "2 B, poll", 0);
	cqp_progress_tick(&pg, 5 * S);
	cqp_progress_clear(&pg);
	cqp_progress_end(&pg);
	/* NULL: a server's, or a run without steps. */
	cqp_progress_step(NULL, 0, "x", 0);
	cqp_progress_tick(NULL, 0);
	cqp_progress_clear(NULL);
	cqp_progress_end(NULL);
	CHECK_STR(news(f), "");
	fclose(f);
	free(mem);
	mem = NULL;

	cqp_params_defaults(&p, CQP_TOOL_CQ_POLL_BW);
	CHECK(pipe(fds) == 0);
	CHECK(!cqp_progress_wanted(&p, 23, fds[1]));
	close(fds[0]);
	close(fds[1]);
	CHECK(!cqp_progress_wanted(&p, 23, -1));
	/* A terminal: the line unless --quiet or a lone plain step. */
	pt = posix_openpt(O_RDWR | O_NOCTTY);
	if (pt >= 0 && grantpt(pt) == 0 && unlockpt(pt) == 0) {
		int tty = open(ptsname(pt), O_RDWR | O_NOCTTY);

		CHECK(tty >= 0);
		CHECK(cqp_progress_wanted(&p, 23, tty));
		CHECK(!cqp_progress_wanted(&p, 1, tty));
		p.duration_s = 3;
		CHECK(cqp_progress_wanted(&p, 1, tty));
		p.quiet = true;
		CHECK(!cqp_progress_wanted(&p, 23, tty));
		close(tty);
	} else {
		printf("test_progress: no pseudo-terminal here; "
		       "the terminal case is left to the integration test\n");
	}
	if (pt >= 0)
		close(pt);
}

int main(void)
{
	test_text();
	test_draw();
	test_off();
	return check_done("test_progress");
}
