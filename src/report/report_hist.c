/* SPDX-License-Identifier: BSD-2-Clause */
/* -H: a row's latency distribution as lines of '#', on the log-linear
 * histogram's own bucket edges so that every count is exact. */
#include "report/report_text.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static int imax(int a, int b)
{
	return a > b ? a : b;
}

#define HIST_BINS 24 /* display lines at most */
#define HIST_BAR  50 /* '#' for the fullest line */

struct hist_bin {
	double lo, hi; /* ns; hi exclusive except for the last bin */
	uint64_t count;
};

/* Groups of `group` consecutive log-linear buckets from first to last,
 * each run of empty groups folded into one bin.  Fills at most cap bins;
 * returns how many it took, or cap + 1 when that is not enough. */
static unsigned hist_group(const struct cqp_hist *h, unsigned first,
			   unsigned last, unsigned group, struct hist_bin *bins,
			   unsigned cap)
{
	unsigned n = 0, a, z, i;
	uint64_t lo, width, count;

	for (a = first; a <= last; a = z + 1) {
		z = a + group - 1 < last ? a + group - 1 : last;
		for (count = 0, i = a; i <= z; i++)
			count += h->count[i];
		if (count || n == 0 || bins[n - 1].count) {
			if (n == cap)
				return cap + 1;
			cqp_hist_bucket_range(a, &lo, &width);
			bins[n].lo = (double)lo;
			bins[n++].count = count;
		}
		cqp_hist_bucket_range(z, &lo, &width);
		/* In double: the top bucket's end is 2^64. */
		bins[n - 1].hi = (double)lo + (double)width;
	}
	return n;
}

/* Every bucket is a fixed fraction of its value, so equal groups of
 * buckets make near-geometric bins whose edges, on bucket edges, keep
 * every count exact.  The smallest group that fits gives the most
 * detail; folding empty runs keeps a sparse tail from eating the lines
 * the bulk of the data needs. */
static unsigned hist_bins(const struct cqp_hist *h, struct hist_bin *bins)
{
	unsigned first = CQP_HIST_BUCKETS, last = 0, group, n, i;

	for (i = 0; i < CQP_HIST_BUCKETS; i++)
		if (h->count[i]) {
			if (first == CQP_HIST_BUCKETS)
				first = i;
			last = i;
		}
	if (first == CQP_HIST_BUCKETS)
		return 0;
	/* Ends at the latest with HIST_BINS groups, no folding needed. */
	for (group = 1; (n = hist_group(h, first, last, group, bins,
					HIST_BINS)) > HIST_BINS;
	     group++)
		;
	return n;
}

void cqp_human_hist(const struct cqp_hist *h, FILE *out)
{
	struct hist_bin bins[HIST_BINS];
	char los[HIST_BINS][32], his[HIST_BINS][32], cnt[32];
	unsigned n, b;
	uint64_t most = 0;
	double narrow = INFINITY;
	int dec, wlo = 0, whi = 0, wcnt;

	if (h->n == 0)
		return;
	n = hist_bins(h, bins);
	if (n == 0)
		return;
	for (b = 0; b < n; b++) {
		if (bins[b].count > most)
			most = bins[b].count;
		if (bins[b].count && bins[b].hi - bins[b].lo < narrow)
			narrow = bins[b].hi - bins[b].lo;
	}
	/* The data's own ends are tighter than the outer buckets'. */
	if ((double)h->min > bins[0].lo && (double)h->min < bins[0].hi)
		bins[0].lo = (double)h->min;
	if ((double)h->max >= bins[n - 1].lo && (double)h->max < bins[n - 1].hi)
		bins[n - 1].hi = (double)h->max;
	/* Enough decimals to tell the narrowest bin's edges apart, down
	 * to the nanosecond. */
	dec = isfinite(narrow) ? (int)ceil(-log10(narrow / 1e3)) + 1 : 3;
	dec = dec < 0 ? 0 : dec > 3 ? 3 : dec;
	for (b = 0; b < n; b++) {
		snprintf(los[b], sizeof(los[b]), "%.*f", dec, bins[b].lo / 1e3);
		snprintf(his[b], sizeof(his[b]), "%.*f", dec, bins[b].hi / 1e3);
		wlo = imax(wlo, (int)strlen(los[b]));
		whi = imax(whi, (int)strlen(his[b]));
	}
	wcnt = snprintf(cnt, sizeof(cnt), "%" PRIu64, most);
	for (b = 0; b < n; b++) {
		int bar = (int)lround((double)bins[b].count * HIST_BAR /
				      (double)most);

		if (bins[b].count && bar == 0)
			bar = 1; /* a rare outlier still shows */
		fprintf(out, "   %*s..%-*s usec  %*" PRIu64, wlo, los[b], whi,
			his[b], wcnt, bins[b].count);
		if (bar)
			fputs("  ", out);
		while (bar-- > 0)
			fputc('#', out);
		fputc('\n', out);
	}
}
