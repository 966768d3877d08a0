/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/textfile.h"

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_TSC 1
static inline uint64_t rdtsc(void)
{
	return __builtin_ia32_rdtsc();
}
#else
#define HAVE_TSC 0
static inline uint64_t rdtsc(void)
{
	return 0;
}
#endif

/* ns = ns0 + (tsc - tsc0) * mult >> SHIFT: one multiply per timestamp. */
#define SHIFT 32

/* Process-wide, like the kernel's clocksource: written once by
 * cqp_clock_init before any thread reads it. */
static struct {
	bool tsc, invariant;
	double hz;
	uint64_t tsc0, ns0, mult;
	char clocksource[32]; /* the kernel's; "" unread */
	char why[192];	      /* why not the TSC; "" when it is used */
} clk;

uint64_t cqp_clock_ns(clockid_t id)
{
	struct timespec ts;

	/* Only fails for an invalid clock id. */
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cqp_monotonic_ns(void)
{
	return cqp_clock_ns(CLOCK_MONOTONIC);
}

uint64_t cqp_now_ns(void)
{
	if (clk.tsc) {
		__extension__ unsigned __int128 d = rdtsc() - clk.tsc0;

		return clk.ns0 + (uint64_t)((d * clk.mult) >> SHIFT);
	}
	return cqp_monotonic_ns();
}

/* The flags line holds both words (whole words, not prefixes). */
static bool has_flag(const char *flags, size_t len, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = flags; p + n <= flags + len; p++)
		if (memcmp(p, word, n) == 0 && (p == flags || p[-1] == ' ') &&
		    (p + n == flags + len || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

bool cqp_cpuinfo_invariant_tsc(const char *text)
{
	const char *line = strstr(text, "\nflags");

	if (strncmp(text, "flags", 5) == 0)
		line = text;
	else if (line)
		line++;
	if (!line || !(line = strchr(line, ':')))
		return false;
	size_t len = strcspn(line, "\n");

	return has_flag(line, len, "constant_tsc") &&
	       has_flag(line, len, "nonstop_tsc");
}

static bool read_invariant(const char *root)
{
	char buf[16384], path[4096];

	snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	/* The first CPU's flags come within the first few KiB. */
	return cqp_read_text(path, buf, sizeof(buf)) > 0 &&
	       cqp_cpuinfo_invariant_tsc(buf);
}

/* The kernel's current clocksource, its first word; "" unreadable. */
static void read_clocksource(const char *root, char *out, size_t cap)
{
	char path[4096];

	snprintf(path, sizeof(path),
		 "%s/sys/devices/system/clocksource/clocksource0/"
		 "current_clocksource",
		 root);
	cqp_read_line(path, out, cap);
	out[strcspn(out, " \t")] = '\0';
}

bool cqp_tsc_trusted(bool invariant, const char *clocksource, char *why,
		     size_t cap)
{
	if (!invariant)
		snprintf(why, cap,
			 "/proc/cpuinfo does not promise an invariant TSC "
			 "(constant_tsc and nonstop_tsc)");
	else if (!clocksource[0])
		snprintf(why, cap,
			 "the kernel's clocksource cannot be read, so whether "
			 "it trusts the TSC is unknown");
	else if (strcmp(clocksource, "tsc") != 0)
		snprintf(why, cap,
			 "the kernel's clocksource is %s, not tsc (it may have "
			 "found the TSC unstable)",
			 clocksource);
	else {
		if (cap)
			why[0] = '\0';
		return true;
	}
	return false;
}

/* A TSC reading and clock id's time between two of them: the tightest
 * of a few tries, so a preemption does not skew it. */
static void pair(clockid_t id, uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t a = rdtsc(), t = cqp_clock_ns(id), b = rdtsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = t;
		}
	}
}

double cqp_tsc_calibrate(uint64_t window_ns)
{
	struct timespec w = {.tv_sec = (time_t)(window_ns / 1000000000u),
			     .tv_nsec = (long)(window_ns % 1000000000u)};
	uint64_t t0, n0, t1, n1;

	if (!HAVE_TSC)
		return 0;
	/* RAW: NTP slews CLOCK_MONOTONIC's rate (up to 500 ppm), and a
	 * rate measured during a slew would keep it all run. */
	pair(CLOCK_MONOTONIC_RAW, &t0, &n0);
	nanosleep(&w, NULL);
	pair(CLOCK_MONOTONIC_RAW, &t1, &n1);
	if (n1 <= n0 || t1 <= t0)
		return 0;
	return (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
}

int cqp_clock_init(uint32_t mode)
{
	return cqp_clock_init_at(mode, "");
}

int cqp_clock_init_at(uint32_t mode, const char *root)
{
	bool trusted;
	double hz;

	clk.tsc = false;
	clk.invariant = HAVE_TSC && read_invariant(root);
	clk.hz = 1e9;
	read_clocksource(root, clk.clocksource, sizeof(clk.clocksource));
	trusted = cqp_tsc_trusted(clk.invariant, clk.clocksource, clk.why,
				  sizeof(clk.why));
	if (!HAVE_TSC)
		snprintf(clk.why, sizeof(clk.why), "this CPU has no TSC");
	if (mode == CQP_CLOCK_MONOTONIC) {
		snprintf(clk.why, sizeof(clk.why), "--clock monotonic");
		return 0;
	}
	if (mode == CQP_CLOCK_AUTO && !trusted)
		return 0;
	if (!HAVE_TSC)
		return cqp_fail(CQP_E_USAGE,
				"--clock tsc: this CPU has no TSC (use auto "
				"or monotonic)");
	if (mode == CQP_CLOCK_TSC && !trusted)
		return cqp_fail(CQP_E_USAGE,
				"--clock tsc: %s; use auto, monotonic, or "
				"force-tsc",
				clk.why);
	/* 10 ms: the pairs are good to well under a microsecond, so the
	 * rate is good to about 1e-5. */
	hz = cqp_tsc_calibrate(10 * 1000 * 1000);
	if (hz <= 0)
		return cqp_fail(CQP_E_SYS, "--clock: cannot calibrate the TSC "
					   "against CLOCK_MONOTONIC_RAW");
	clk.hz = hz;
	clk.mult = (uint64_t)(1e9 / hz * (double)(1ull << SHIFT) + 0.5);
	/* CLOCK_MONOTONIC's epoch, so timestamps compare with it. */
	pair(CLOCK_MONOTONIC, &clk.tsc0, &clk.ns0);
	clk.why[0] = '\0';
	clk.tsc = true;
	return 0;
}

void cqp_clock_get(struct cqp_clock_info *out)
{
	out->tsc = clk.tsc;
	out->invariant_tsc = clk.invariant;
	out->hz = clk.hz;
	out->kernel_clocksource = clk.clocksource;
	out->why_not_tsc = clk.tsc ? NULL : clk.why;
}
