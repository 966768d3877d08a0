/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/textfile.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

ssize_t cqp_read_text(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

bool cqp_read_line(const char *path, char *buf, size_t cap)
{
	if (cqp_read_text(path, buf, cap) < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] != '\0';
}
