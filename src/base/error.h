/* SPDX-License-Identifier: BSD-2-Clause */
/* Central error catalogue: every failure has a code and one message.
 *
 * The function that understands a failure records it with cqp_fail(), which
 * formats the message into a per-thread buffer and returns the negative
 * code; callers only propagate the code.  main() prints cqp_errmsg() once
 * and maps the code to an exit status with cqp_exit_status().
 */
#ifndef CQP_ERROR_H
#define CQP_ERROR_H

enum cqp_errcode {
	CQP_OK = 0,
	CQP_E_USAGE,	   /* bad option or parameter: exit 2 */
	CQP_E_NODEV,	   /* no RDMA device at all: exit 77 */
	CQP_E_DEVICE,	   /* a verbs call failed or the device refused */
	CQP_E_NOMEM,	   /* allocation failed */
	CQP_E_TIMEOUT,	   /* a deadline passed while waiting on the peer */
	CQP_E_PEER_CLOSED, /* the peer closed the out-of-band connection */
	CQP_E_PROTO,	   /* malformed or unexpected out-of-band frame */
	CQP_E_VERSION,	   /* protocol version or tool mismatch */
	CQP_E_REJECTED,	   /* the server refused our parameters */
	CQP_E_PEER_FAILED, /* the peer reported a failure of its own */
	CQP_E_NET,	   /* socket-level failure (resolve, connect, I/O) */
	CQP_E_COMPLETION,  /* a work completion with an error status */
	CQP_E_INTERRUPTED, /* SIGINT/SIGTERM */
	CQP_E_SYS,	   /* any other system call failure */
	CQP_E__COUNT
};

/* A function that only reports a failure: kept out of line and out of
 * the hot loops that call it. */
#define CQP_COLD __attribute__((cold, noinline))

/* Record a failure; returns -code so callers can `return cqp_fail(...)`.
 * Cold: the compiler moves the paths that fail out of the per-message
 * loops they sit in. */
int cqp_fail(enum cqp_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), cold));

/* Re-fail with context: "PREFIX: <the last message>" (the last message
 * is copied first: cqp_fail formats into the buffer cqp_errmsg reads). */
int cqp_fail_wrap(enum cqp_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), cold));

/* The code and message of the last cqp_fail() on this thread. */
enum cqp_errcode cqp_errcode(void);
const char *cqp_errmsg(void);
void cqp_errclear(void);

/* A failure kept across calls that may fail in turn (sending the reason
 * to the peer, asking it why), or handed to another thread. */
#define CQP_ERRMSG_MAX 512
struct cqp_error {
	enum cqp_errcode code;
	char msg[CQP_ERRMSG_MAX];
};
void cqp_error_save(struct cqp_error *e);
/* Makes it the thread's last failure again (or none); returns -code. */
int cqp_error_restore(const struct cqp_error *e);

/* Short name of a code ("timeout", "peer closed", ...). */
const char *cqp_errname(enum cqp_errcode code);

/* Process exit status for a code: 0, 1, 2 or 77. */
int cqp_exit_status(enum cqp_errcode code);

#endif
