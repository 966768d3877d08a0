/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local enum cqp_errcode last_code;
static _Thread_local char last_msg[CQP_ERRMSG_MAX];

static const char *const names[CQP_E__COUNT] = {
    [CQP_OK] = "ok",
    [CQP_E_USAGE] = "usage",
    [CQP_E_NODEV] = "no RDMA device",
    [CQP_E_DEVICE] = "device",
    [CQP_E_NOMEM] = "out of memory",
    [CQP_E_TIMEOUT] = "timeout",
    [CQP_E_PEER_CLOSED] = "peer closed",
    [CQP_E_PROTO] = "protocol",
    [CQP_E_VERSION] = "version mismatch",
    [CQP_E_REJECTED] = "rejected",
    [CQP_E_PEER_FAILED] = "peer failed",
    [CQP_E_NET] = "network",
    [CQP_E_COMPLETION] = "completion error",
    [CQP_E_INTERRUPTED] = "interrupted",
    [CQP_E_SYS] = "system",
};

int cqp_fail(enum cqp_errcode code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	va_end(ap);
	last_code = code;
	return -(int)code;
}

int cqp_fail_wrap(enum cqp_errcode code, const char *fmt, ...)
{
	struct cqp_error saved;
	char prefix[sizeof(last_msg)];
	va_list ap;

	cqp_error_save(&saved);
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	return cqp_fail(code, "%s: %s", prefix, saved.msg);
}

enum cqp_errcode cqp_errcode(void)
{
	return last_code;
}

const char *cqp_errmsg(void)
{
	return last_code == CQP_OK ? "" : last_msg;
}

void cqp_errclear(void)
{
	last_code = CQP_OK;
	last_msg[0] = '\0';
}

void cqp_error_save(struct cqp_error *e)
{
	e->code = last_code;
	snprintf(e->msg, sizeof(e->msg), "%s", cqp_errmsg());
}

int cqp_error_restore(const struct cqp_error *e)
{
	if (e->code == CQP_OK) {
		cqp_errclear();
		return 0;
	}
	return cqp_fail(e->code, "%s", e->msg);
}

const char *cqp_errname(enum cqp_errcode code)
{
	if ((unsigned)code >= CQP_E__COUNT)
		return "unknown";
	return names[code];
}

int cqp_exit_status(enum cqp_errcode code)
{
	switch (code) {
	case CQP_OK:
		return 0;
	case CQP_E_USAGE:
		return 2;
	case CQP_E_NODEV:
		return 77;
	default:
		return 1;
	}
}
