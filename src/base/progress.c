/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/progress.h"

#include <string.h>
#include <unistd.h>

#define NS_PER_S 1000000000ull

bool cqp_progress_wanted(const struct cqp_params *p, unsigned nsteps, int fd)
{
	if (p->quiet || (nsteps < 2 && !p->duration_s))
		return false;
	return isatty(fd) == 1;
}

void cqp_progress_init(struct cqp_progress *pg, FILE *out, unsigned nsteps,
		       uint32_t step_s)
{
	memset(pg, 0, sizeof(*pg));
	pg->out = out;
	pg->n = nsteps;
	pg->step_ns = (uint64_t)step_s * NS_PER_S;
	pthread_mutex_init(&pg->lock, NULL);
}

/* Nanoseconds left, or UINT64_MAX when nothing tells yet.  A step is
 * -D long, or as long as the finished ones took on average when that
 * is longer (warm-up, exchanges) or there is no -D. */
static uint64_t left_ns(const struct cqp_progress *pg, uint64_t now)
{
	uint64_t per = pg->step_ns, in_step;

	if (pg->i > 0) {
		uint64_t avg = (pg->begun_ns - pg->first_ns) / pg->i;

		if (avg > per)
			per = avg;
	}
	if (!per)
		return UINT64_MAX;
	in_step = now > pg->begun_ns ? now - pg->begun_ns : 0;
	return per * (pg->n - pg->i - 1) + (in_step < per ? per - in_step : 0);
}

static void say_left(uint64_t ns, char *buf, size_t cap)
{
	uint64_t s = (ns + NS_PER_S - 1) / NS_PER_S;

	if (ns == UINT64_MAX)
		snprintf(buf, cap, "? left");
	else if (s < 60)
		snprintf(buf, cap, "%u s left", (unsigned)s);
	else if (s < 3600)
		snprintf(buf, cap, "%u min %02u s left", (unsigned)(s / 60),
			 (unsigned)(s % 60));
	else
		snprintf(buf, cap, "%llu h %02u min left",
			 (unsigned long long)(s / 3600),
			 (unsigned)(s / 60 % 60));
}

size_t cqp_progress_text(const struct cqp_progress *pg, uint64_t now_ns,
			 char *buf, size_t cap)
{
	char head[32], tail[32];
	int room, len;

	if (!cap)
		return 0;
	snprintf(head, sizeof(head), "step %u/%u  ", pg->i + 1, pg->n);
	say_left(left_ns(pg, now_ns), tail, sizeof(tail));
	/* What gives way when the line would not fit. */
	room = CQP_PROGRESS_COLS - (int)strlen(head) - 2 - (int)strlen(tail);
	if (room < 0)
		room = 0;
	len = snprintf(buf, cap, "%s%.*s  %s", head, room, pg->what, tail);
	if (len < 0)
		len = 0;
	return (size_t)len < cap ? (size_t)len : cap - 1;
}

/* With the lock held.  One write: the whole line in one buffer. */
static void draw(struct cqp_progress *pg, uint64_t now, bool changed_only)
{
	char text[CQP_PROGRESS_COLS + 1], line[CQP_PROGRESS_COLS + 8];
	int len;

	if (pg->shown && now - pg->drawn_ns < CQP_PROGRESS_EVERY_NS)
		return;
	cqp_progress_text(pg, now, text, sizeof(text));
	if (changed_only && pg->shown && strcmp(text, pg->last) == 0)
		return;
	len = snprintf(line, sizeof(line), "\r%s\033[K", text);
	fwrite(line, 1, (size_t)len, pg->out);
	fflush(pg->out);
	memcpy(pg->last, text, sizeof(pg->last));
	pg->drawn_ns = now;
	pg->shown = true;
}

void cqp_progress_step(struct cqp_progress *pg, unsigned i, const char *what,
		       uint64_t now_ns)
{
	if (!pg || !pg->out)
		return;
	pthread_mutex_lock(&pg->lock);
	if (!pg->started)
		pg->first_ns = now_ns;
	pg->started = true;
	pg->i = i < pg->n ? i : (pg->n ? pg->n - 1 : 0);
	pg->begun_ns = now_ns;
	snprintf(pg->what, sizeof(pg->what), "%s", what);
	draw(pg, now_ns, false);
	pthread_mutex_unlock(&pg->lock);
}

void cqp_progress_tick(struct cqp_progress *pg, uint64_t now_ns)
{
	if (!pg || !pg->out || pthread_mutex_trylock(&pg->lock))
		return;
	if (pg->started)
		draw(pg, now_ns, true);
	pthread_mutex_unlock(&pg->lock);
}

static void clear_locked(struct cqp_progress *pg)
{
	if (!pg->shown)
		return;
	fputs("\r\033[K", pg->out);
	fflush(pg->out);
	pg->shown = false;
	pg->last[0] = '\0';
}

void cqp_progress_clear(struct cqp_progress *pg)
{
	if (!pg || !pg->out)
		return;
	pthread_mutex_lock(&pg->lock);
	clear_locked(pg);
	pthread_mutex_unlock(&pg->lock);
}

void cqp_progress_end(struct cqp_progress *pg)
{
	if (!pg || !pg->out)
		return;
	pthread_mutex_lock(&pg->lock);
	clear_locked(pg);
	pg->out = NULL;
	pthread_mutex_unlock(&pg->lock);
}
