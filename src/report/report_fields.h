/* SPDX-License-Identifier: BSD-2-Clause */
/* What the report modules share (private to report*.c and results.c):
 * one description of each record as a table of named fields, so that
 * the human table (report_human.c), JSON (report_json.c), CSV
 * (report_csv.c) and the kv codec of results (results.c) list the same
 * fields, and a new figure is one row here; plus what the rows of a
 * report hold (struct shape) and the strategy map's helpers. */
#ifndef CQP_REPORT_FIELDS_H
#define CQP_REPORT_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/report.h"

enum field_type {
	FIELD_DOUBLE,
	FIELD_U64,
	FIELD_U32,
	FIELD_BOOL,
	FIELD_TEXT, /* a char array in the record */
	FIELD_LAT,  /* a struct cqp_summary: eight figures */
	FIELD_I32,  /* thread fields only */
};

/* ---- the cost record (struct cqp_cost) ---- */

struct cost_field {
	const char *key;
	enum field_type type;
	size_t offset;
	/* An optional figure exists only when the bool at `present` is
	 * set: older peers and runs that skip it send no key at all. */
	bool optional;
	size_t present;
};
extern const struct cost_field cqp_cost_fields[];
extern const size_t cqp_n_cost_fields;
#define N_COST_FIELDS cqp_n_cost_fields
/* struct shape's room: at least the table's length (checked). */
#define CQP_MAX_COST_FIELDS 48

double cqp_field_double(const struct cqp_cost *c, const struct cost_field *f);
uint64_t cqp_field_u64(const struct cqp_cost *c, const struct cost_field *f);
bool cqp_field_present(const struct cqp_cost *c, const struct cost_field *f);

/* ---- one thread's share (struct cqp_thread_cost, --threads) ---- */

/* In JSON each thread is an object of these keys; over the oob its
 * figures are one comma-separated value in this order. */
struct thread_field {
	const char *key;
	enum field_type type; /* FIELD_I32, FIELD_U64 or FIELD_DOUBLE */
	size_t offset;
};
extern const struct thread_field cqp_thread_fields[];
extern const size_t cqp_n_thread_fields;

/* Figures derived from a side's counters and its row (NaN: unknown),
 * in JSON and CSV; never sent: the receiver computes them. */
struct derived_field {
	const char *key;
	double (*value)(const struct cqp_cost *c, const struct cqp_row *row);
};
extern const struct derived_field cqp_derived_fields[];
extern const size_t cqp_n_derived_fields;
#define N_DERIVED_FIELDS cqp_n_derived_fields
double cqp_compl_per_wakeup(const struct cqp_cost *c,
			    const struct cqp_row *row);
double cqp_wakeups_per_msg(const struct cqp_cost *c, const struct cqp_row *row);
double cqp_wakeups_per_s(const struct cqp_cost *c, const struct cqp_row *row);
double cqp_spin_pct(const struct cqp_cost *c, const struct cqp_row *row);
double cqp_softirq_ns_per_msg(const struct cqp_cost *c,
			      const struct cqp_row *row);
double cqp_kernel_ns_per_msg(const struct cqp_cost *c,
			     const struct cqp_row *row);

/* ---- the load projection (struct cqp_projection) ---- */

struct proj_field {
	const char *key;
	enum field_type type;
	size_t offset;
	unsigned need; /* what it cannot be known without */
};
extern const struct proj_field cqp_proj_fields[];
extern const size_t cqp_n_proj_fields;
#define N_PROJ_FIELDS cqp_n_proj_fields
bool cqp_proj_known(const struct cqp_projection *pr,
		    const struct proj_field *f);
double cqp_proj_double(const struct cqp_projection *pr,
		       const struct proj_field *f);
uint64_t cqp_proj_uint(const struct cqp_projection *pr,
		       const struct proj_field *f);

/* ---- what the server holds (struct cqp_held) ---- */

struct held_field {
	const char *key; /* in JSON's server_mem; mem_KEY over the oob */
	size_t offset;	 /* of a uint64_t */
};
extern const struct held_field cqp_held_fields[];
extern const size_t cqp_n_held_fields;
uint64_t cqp_held_value(const struct cqp_held *h, const struct held_field *f);

/* ---- the latency summary (struct cqp_summary) ---- */

struct lat_field {
	const char *key;
	size_t offset;
};
#define N_LAT_FIELDS 8
extern const struct lat_field cqp_lat_fields[N_LAT_FIELDS];
double cqp_lat_value(const struct cqp_summary *s, const struct lat_field *f);

/* ---- a row's own figures (struct cqp_row), for every format ---- */

/* When a row has a figure: each group is one of the row's kinds or
 * flags (a size row or a CM event row, has_bw, has_delivery, ...). */
enum row_group {
	RG_EVENT,    /* cm_event_stress: a side and event type */
	RG_LABEL,    /* a size row with a label (--compare-modes) */
	RG_VERB,     /* a size row of a run with a verb other than SEND */
	RG_SIZE,     /* every other tool's rows */
	RG_BW,	     /* has_bw */
	RG_DELIVERY, /* has_delivery (UD bandwidth) */
	RG_LOST,     /* has_lost (UD ping-pong) */
	RG_LAT,	     /* has_lat */
	RG_OPEN,     /* open_loop (--rate) */
	RG_OPEN_LAT, /* open_loop and has_lat */
	RG_FANIN,    /* a server's --clients group (nclients > 0) */
};
#define RG_BIT(g) (1u << (g))
#define RG_ALWAYS (~0u)

/* How the human table prints a figure. */
enum row_fmt {
	RF_NONE,  /* not in the human table */
	RF_TEXT,  /* as it is */
	RF_EVENT, /* an rdma_cm event without RDMA_CM_EVENT_ */
	RF_LABEL, /* text, "-" where empty */
	RF_U64,
	RF_RATE,  /* k/M */
	RF_BW,	  /* Gb/s in the row: MB/s (2^20 bytes, as perftest) or Gb/s */
	RF_FIXED, /* decimals */
	RF_US,	  /* microseconds */
};

/* A column of the human table: heading (head_gbits under --report_gbits),
 * under: the row groups that, when the table holds one, put it under the
 * row rather than on it (RG_ALWAYS: always); dash: what a "-" in it means,
 * for the notes under the table. */
struct row_head {
	const char *head, *head_gbits;
	enum row_fmt fmt;
	int decimals;
	unsigned under;
	const char *dash;
};

/* One figure of a row, in the order every format lists it: its key in
 * JSON and over the out-of-band channel (results.c), its CSV column
 * (csv: whether CSV has it; a latency summary is eight, KEY_min ...),
 * its human column (human; a latency summary's are lat[], one per
 * cqp_lat_fields, RF_NONE where it has none).  At offset, or derived by
 * value() (offset and size 0), which is never sent: the receiver
 * computes it.  json_if, when
 * set, must hold for JSON to write it (fanout only past 1). */
struct row_field {
	const char *key;
	enum field_type type;
	enum row_group group;
	size_t offset, size; /* size: of the member (a text's room) */
	double (*value)(const struct cqp_report *r, const struct cqp_row *row);
	bool (*json_if)(const struct cqp_row *row);
	bool csv;
	struct row_head human;
	const struct row_head *lat;
};
extern const struct row_field cqp_row_fields[];
extern const size_t cqp_n_row_fields;
/* Whether this row has the group's figures; whether some row does. */
bool cqp_row_has(const struct cqp_row *row, enum row_group g);
/* A double figure's value (at offset, or derived). */
double cqp_row_double(const struct cqp_report *r, const struct cqp_row *row,
		      const struct row_field *f);

/* ---- what the rows hold, so that every format shows the same columns */

struct shape {
	bool label, verb, bw, lat, client, server;
	bool idle;     /* some side of some row measured idle CPU */
	bool policy;   /* some side of some row ran a policy (has_policy) */
	bool rx_mem;   /* some side of some row reported receive memory */
	bool delivery; /* UD: sent against received */
	bool lost;     /* ud_send_lat: lost exchanges */
	bool open;     /* open loop (--rate): rates, late sends, service */
	bool event;    /* cm_event_stress: rows are event types */
	bool fanin;    /* a server's group: clients, fairness */
	/* some side of some row has cqp_cost_fields[i] */
	bool field[CQP_MAX_COST_FIELDS];
};
struct shape cqp_report_shape(const struct cqp_report *r);
bool cqp_shape_has(const struct shape *s, enum row_group g);

/* ---- the strategy map ---- */

const char *cqp_chosen_mode(const struct cqp_choice *c);
/* Where the choice changes from the previous rate of the same size. */
bool cqp_crossover(const struct cqp_strategy *st, unsigned i);

/* ---- the renderers, which cqp_report_print picks by --output ---- */

void cqp_report_human(const struct cqp_report *r, FILE *out);
void cqp_report_json(const struct cqp_report *r, FILE *out);
void cqp_report_csv(const struct cqp_report *r, FILE *out);

#endif
