/* SPDX-License-Identifier: BSD-2-Clause */
/* Whether the TSC is trusted, on machines made of files: the CPU's
 * promise (/proc/cpuinfo) and the kernel's own verdict (its current
 * clocksource) must both say so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "base/clock.h"
#include "base/error.h"

static const char invariant[] =
    "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp\n";

/* ROOT/proc/cpuinfo and, clocksource non-NULL, ROOT/sys/devices/system/
 * clocksource/clocksource0/current_clocksource. */
static void machine(char *root, const char *cpuinfo, const char *clocksource)
{
	static const char *const dirs[] = {
	    "proc",
	    "sys",
	    "sys/devices",
	    "sys/devices/system",
	    "sys/devices/system/clocksource",
	    "sys/devices/system/clocksource/clocksource0"};
	char path[512];

	strcpy(root, "/tmp/cqperf-clock.XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		CHECK(mkdir(path, 0700) == 0);
	}
	check_put_file(root, "proc/cpuinfo", cpuinfo);
	if (clocksource)
		check_put_file(root,
			       "sys/devices/system/clocksource/clocksource0/"
			       "current_clocksource",
			       clocksource);
}

static void unmachine(const char *root)
{
	static const char *const paths[] = {
	    "sys/devices/system/clocksource/clocksource0/current_clocksource",
	    "sys/devices/system/clocksource/clocksource0",
	    "sys/devices/system/clocksource",
	    "sys/devices/system",
	    "sys/devices",
	    "sys",
	    "proc/cpuinfo",
	    "proc",
	    ""};
	char path[512];

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, paths[i]);
		if (unlink(path) != 0)
			rmdir(path);
	}
}

/* The rule alone, and the reason it gives. */
static void rule(void)
{
	char why[192];

	CHECK(cqp_tsc_trusted(true, "tsc", why, sizeof(why)));
	CHECK_STR(why, "");
	CHECK(!cqp_tsc_trusted(true, "hpet", why, sizeof(why)));
	CHECK(strstr(why, "clocksource is hpet, not tsc") != NULL);
	CHECK(!cqp_tsc_trusted(true, "kvm-clock", why, sizeof(why)));
	CHECK(strstr(why, "kvm-clock") != NULL);
	CHECK(!cqp_tsc_trusted(true, "", why, sizeof(why)));
	CHECK(strstr(why, "cannot be read") != NULL);
	CHECK(!cqp_tsc_trusted(false, "tsc", why, sizeof(why)));
	CHECK(strstr(why, "invariant") != NULL);
}

/* The source --clock auto picks on that machine; -1 if init failed. */
static int auto_picks_tsc(const char *root)
{
	struct cqp_clock_info ci;

	if (cqp_clock_init_at(CQP_CLOCK_AUTO, root) < 0)
		return -1;
	cqp_clock_get(&ci);
	return ci.tsc;
}

int main(void)
{
	char root[64];
	int tsc;

#if !defined(__x86_64__) && !defined(__i386__)
	printf("no TSC on this CPU: skipped\n");
	return 77;
#endif
	/* The CPU promises, but the kernel gave up on the TSC (it found it
	 * unstable, or never trusted it): not ours to trust either. */
	rule();
	machine(root, invariant, "hpet\n");
	tsc = auto_picks_tsc(root);
	if (tsc != 0)
		fprintf(stderr,
			"cpuinfo invariant, clocksource hpet: auto picked "
			"%s\n",
			tsc > 0 ? "the TSC" : "nothing (init failed)");
	CHECK(tsc == 0);
	{
		struct cqp_clock_info ci;

		cqp_clock_get(&ci);
		CHECK_STR(ci.kernel_clocksource, "hpet");
		CHECK(ci.invariant_tsc && ci.why_not_tsc &&
		      strstr(ci.why_not_tsc, "hpet") != NULL);
	}
	tsc = cqp_clock_init_at(CQP_CLOCK_TSC, root);
	if (tsc == 0)
		fprintf(stderr, "cpuinfo invariant, clocksource hpet: "
				"--clock tsc accepted\n");
	CHECK(tsc < 0);
	CHECK(strstr(cqp_errmsg(), "--clock tsc: the kernel's clocksource "
				   "is hpet") != NULL);
	/* Asked for, the TSC still: an HPET guest's choice. */
	CHECK(cqp_clock_init_at(CQP_CLOCK_TSC_FORCE, root) == 0);
	unmachine(root);

	/* Both agree: the TSC. */
	machine(root, invariant, "tsc\n");
	CHECK(auto_picks_tsc(root) == 1);
	CHECK(cqp_clock_init_at(CQP_CLOCK_TSC, root) == 0);
	unmachine(root);

	/* No promise: the kernel's word alone is not enough. */
	machine(root, "flags\t\t: fpu tsc rdtscp\n", "tsc\n");
	CHECK(auto_picks_tsc(root) == 0);
	unmachine(root);

	/* No clocksource to read (no sysfs): not trusted. */
	machine(root, invariant, NULL);
	CHECK(auto_picks_tsc(root) == 0);
	unmachine(root);

	cqp_clock_init(CQP_CLOCK_MONOTONIC);
	return check_done("test_clock");
}
