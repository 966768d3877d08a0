/* SPDX-License-Identifier: BSD-2-Clause */
/* Small text files of /proc and /sys, read whole or by their first line:
 * the one reader for every module that asks the kernel something. */
#ifndef CQP_TEXTFILE_H
#define CQP_TEXTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Up to cap - 1 bytes of path, NUL-terminated; the length, or -1 when it
 * cannot be opened. */
ssize_t cqp_read_text(const char *path, char *buf, size_t cap);
/* The first line of path without its newline; false when it cannot be
 * read or the line is empty (buf then ""). */
bool cqp_read_line(const char *path, char *buf, size_t cap);

#endif
