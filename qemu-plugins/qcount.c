/* SPDX-License-Identifier: BSD-2-Clause */
/* qcount: a QEMU TCG plugin that counts the guest instructions each vCPU
 * executes, apart in kernel and user space, and its RDTSC/RDTSCP reads, so
 * that two tools' work per message is compared from outside both and
 * outside the emulator's timing (scripts/dev/qcount.py reads it):
 *
 *   CQPERF_QEMU_PLUGIN=build/qemu-plugins/libqcount.so \
 *       scripts/guest/softroce-run.sh ...
 *
 * The guest asks for a snapshot by creating qmark-NAME in $CQPERF_OUT
 * (the plugin's dir= argument, on the host); the plugin appends a line
 * to qcount.log there and removes the file, so a guest that waits for it
 * to go knows the snapshot is taken.  NAME starting with "tb-" also writes
 * qtb-NAME.txt: each translated block's address, length and executions
 * per vCPU.  Counts are cumulative since boot.  A diagnostic: built, never
 * installed.  Declares the part of QEMU's plugin API (version 1, QEMU 7.2)
 * it uses, so that no QEMU headers are needed to build it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nanosleep under -std=c11 too */
#endif
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info_t;
typedef void (*trans_cb_t)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*exec_cb_t)(unsigned int vcpu, void *udata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, trans_cb_t);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *, exec_cb_t,
					  int flags, void *);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *,
					    exec_cb_t, int flags, void *);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *,
						 size_t);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *);

API int qemu_plugin_version = 1;
API int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
			    int argc, char **argv);

#define NCPU 8
/* x86-64 kernel addresses: the upper half. */
#define KERNEL(va) ((va) >= 0xffff800000000000ull)

/* One translated block; a block translated again is another one. */
struct block {
	uint64_t vaddr;
	uint32_t insns;
	uint64_t runs[NCPU];
	struct block *next;
};

/* Each vCPU writes only its own counters (one vCPU, one thread). */
static struct {
	uint64_t insns[2], blocks[2], tsc[2]; /* [0] user, [1] kernel */
} cpu[NCPU];
static struct block *blocks;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *dir = ".";

static void block_ran(unsigned int vcpu, void *udata)
{
	struct block *b = udata;
	int k = KERNEL(b->vaddr);

	if (vcpu >= NCPU)
		return;
	cpu[vcpu].insns[k] += b->insns;
	cpu[vcpu].blocks[k]++;
	b->runs[vcpu]++;
}

static void tsc_read(unsigned int vcpu, void *udata)
{
	if (vcpu < NCPU)
		cpu[vcpu].tsc[udata != NULL]++;
}

/* RDTSC (0f 31) or RDTSCP (0f 01 f9), after any prefixes. */
static bool reads_tsc(const unsigned char *b, size_t n)
{
	size_t o = 0;

	while (o < n && (b[o] == 0x66 || b[o] == 0xf2 || b[o] == 0xf3 ||
			 (b[o] & 0xf0) == 0x40))
		o++;
	return (o + 2 <= n && b[o] == 0x0f && b[o + 1] == 0x31) ||
	       (o + 3 <= n && b[o] == 0x0f && b[o + 1] == 0x01 &&
		b[o + 2] == 0xf9);
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = calloc(1, sizeof(*b));

	(void)id;
	if (!b)
		return;
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = (uint32_t)qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&blocks_lock);
	b->next = blocks;
	blocks = b;
	pthread_mutex_unlock(&blocks_lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_ran, 0, b);
	for (size_t i = 0; i < b->insns; i++) {
		struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);

		if (reads_tsc(qemu_plugin_insn_data(in),
			      qemu_plugin_insn_size(in)))
			qemu_plugin_register_vcpu_insn_exec_cb(
			    in, tsc_read, 0,
			    KERNEL(b->vaddr) ? (void *)1 : NULL);
	}
}

/* Only blocks run since boot, newest first; qcount.py sums by address. */
static void dump_blocks(const char *name)
{
	char path[4096];
	struct block *b;
	FILE *f;

	snprintf(path, sizeof(path), "%s/qtb-%s.txt", dir, name);
	if (!(f = fopen(path, "w")))
		return;
	pthread_mutex_lock(&blocks_lock);
	b = blocks;
	pthread_mutex_unlock(&blocks_lock);
	for (; b; b = b->next) {
		uint64_t any = 0;

		for (int c = 0; c < NCPU; c++)
			any |= b->runs[c];
		if (!any)
			continue;
		fprintf(f, "%" PRIx64 " %u", b->vaddr, b->insns);
		for (int c = 0; c < NCPU; c++)
			fprintf(f, " %" PRIu64, b->runs[c]);
		fputc('\n', f);
	}
	fclose(f);
}

/* "NAME vcpus V" then per vCPU: user and kernel instructions, blocks and
 * TSC reads. */
static void snapshot(const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/qcount.log", dir);
	if (!(f = fopen(path, "a")))
		return;
	fprintf(f, "%s vcpus %d", name, NCPU);
	for (int c = 0; c < NCPU; c++)
		fprintf(f,
			" %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %" PRIu64 " %" PRIu64,
			cpu[c].insns[0], cpu[c].insns[1], cpu[c].blocks[0],
			cpu[c].blocks[1], cpu[c].tsc[0], cpu[c].tsc[1]);
	fputc('\n', f);
	fclose(f);
	if (strncmp(name, "tb-", 3) == 0)
		dump_blocks(name);
}

static void *watch(void *arg)
{
	const struct timespec nap = {0, 2000000};
	char path[4096];

	(void)arg;
	for (;;) {
		DIR *d = opendir(dir);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			if (strncmp(e->d_name, "qmark-", 6) != 0)
				continue;
			snapshot(e->d_name + 6);
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
		if (d)
			closedir(d);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
			int argc, char **argv)
{
	pthread_t th;

	(void)info;
	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "dir=", 4) == 0)
			dir = argv[i] + 4;
	if (pthread_create(&th, NULL, watch, NULL) != 0)
		return -1;
	pthread_detach(th);
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	return 0;
}
