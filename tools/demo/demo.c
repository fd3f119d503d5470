// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd demo: four "compiler" processes share one pool.
 *
 * Each process attaches to the pool "demo", registers the classes
 * "builtin.type" and "builtin.string" (and gets the same class ids as
 * everyone else), and interns its own, overlapping subset of a small
 * vocabulary: half of it with single INTERN calls, half with one
 * INTERN_BATCH. They all start at the same moment. The parent then shows
 * which process created each entry, checks that every process got the same
 * handle for the same (class, content), resolves every handle back, and
 * prints the pool's STATS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/uniqd.h>

#include "harness.h"

#define NPROC	4
#define NCLASS	2
#define NWORDS	12

#define U64P(p) ((__u64)(uintptr_t)(p))

static const char *const class_names[NCLASS] = {
	"builtin.type", "builtin.string",
};

static const char *const words[NCLASS][NWORDS] = {
	{ "i1", "i8", "i32", "i64", "f16", "f32", "f64", "index",
	  "tensor<4x4xf32>", "memref<?xi8>", "vector<8xf16>", "!llvm.ptr" },
	{ "main", "loop.body", "entry", "exit", "x", "y", "acc", "tmp",
	  "kernel_0", "kernel_1", "\"hello\"", "" },
};

struct result {
	__u32 class_id[NPROC][NCLASS];
	__u64 handle[NPROC][NCLASS][NWORDS];	/* 0: not interned by it */
	__u32 created[NPROC][NCLASS][NWORDS];
	int failed[NPROC];
	char why[NPROC][96];
};

/* Process p interns word w unless this says no: every word by 3 of the 4. */
static int wants(int p, int c, int w)
{
	return (w + 5 * c + p) % NPROC != 0;
}

static int attach(const char *name, __u32 flags)
{
	struct uniqd_attach a;
	int fd = open(UNIQD_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.name = U64P(name);
	a.name_len = strlen(name);
	a.flags = flags;
	if (ioctl(fd, UNIQD_IOC_ATTACH, &a)) {
		close(fd);
		return -1;
	}
	return fd;
}

static __u32 class_id(int fd, const char *name)
{
	struct uniqd_class c;

	memset(&c, 0, sizeof(c));
	c.name = U64P(name);
	c.name_len = strlen(name);
	return ioctl(fd, UNIQD_IOC_CLASS, &c) ? 0 : c.class_id;
}

static void fail(struct result *r, int p, const char *what)
{
	snprintf(r->why[p], sizeof(r->why[p]), "%s: %s", what, strerror(errno));
	r->failed[p] = 1;
	_exit(1);
}

static void worker(struct result *r, int p, int go)
{
	struct uniqd_key keys[NCLASS * NWORDS];
	int idx[NCLASS * NWORDS][2];
	struct uniqd_batch b;
	int fd, c, w, n = 0, singles = 0;
	char x;

	if (read(go, &x, 1) < 0)
		_exit(2);
	fd = attach("demo", UNIQD_ATTACH_EXISTING);
	if (fd < 0)
		fail(r, p, "attach");
	for (c = 0; c < NCLASS; c++) {
		r->class_id[p][c] = class_id(fd, class_names[c]);
		if (!r->class_id[p][c])
			fail(r, p, "class");
	}
	for (c = 0; c < NCLASS; c++) {
		for (w = 0; w < NWORDS; w++) {
			struct uniqd_key k;

			if (!wants(p, c, w))
				continue;
			memset(&k, 0, sizeof(k));
			k.class_id = r->class_id[p][c];
			k.data = U64P(words[c][w]);
			k.len = strlen(words[c][w]);
			if (w % 2) {
				/* Odd words one by one... */
				if (ioctl(fd, UNIQD_IOC_INTERN, &k))
					fail(r, p, "intern");
				r->handle[p][c][w] = k.handle;
				r->created[p][c][w] = k.status & UNIQD_STATUS_NEW;
				singles++;
			} else {
				/* ...even words in one batch. */
				keys[n] = k;
				idx[n][0] = c;
				idx[n][1] = w;
				n++;
			}
		}
	}
	memset(&b, 0, sizeof(b));
	b.keys = U64P(keys);
	b.count = n;
	b.key_size = sizeof(keys[0]);
	if (ioctl(fd, UNIQD_IOC_INTERN_BATCH, &b))
		fail(r, p, "batch");
	for (w = 0; w < n; w++) {
		r->handle[p][idx[w][0]][idx[w][1]] = keys[w].handle;
		r->created[p][idx[w][0]][idx[w][1]] =
			keys[w].status & UNIQD_STATUS_NEW;
	}
	printf("  process %d (pid %d): classes %s=%u %s=%u, %d single INTERNs, "
	       "one INTERN_BATCH of %d keys (%u new)\n", p, (int)getpid(),
	       class_names[0], r->class_id[p][0], class_names[1],
	       r->class_id[p][1], singles, n, b.created);
	close(fd);
	_exit(0);
}

int main(void)
{
	int fd, go[2], p, c, w, agree = 0, entries = 0, bad = 0, once = 1;
	struct uniqd_stats st;
	struct result *r;
	pid_t pids[NPROC];

	th_init("demo");
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = attach("demo", UNIQD_ATTACH_NEW | UNIQD_ATTACH_SHARE_ALL);
	th_case("pool created") {
		CHECK(r != MAP_FAILED, "mmap");
		CHECK(fd >= 0, "attach %s: %s", UNIQD_DEVICE_PATH, strerror(errno));
	}
	if (fd < 0 || r == MAP_FAILED)
		return th_finish();

	printf("\nuniqd demo: %d processes share the pool \"demo\"\n", NPROC);
	th_case("processes ran") {
		CHECK(pipe(go) == 0, "pipe");
		fflush(stdout);
		for (p = 0; p < NPROC; p++) {
			pids[p] = fork();
			if (!pids[p]) {
				close(go[1]);
				worker(r, p, go[0]);
			}
		}
		close(go[0]);
		close(go[1]);	/* everyone starts now */
		for (p = 0; p < NPROC; p++) {
			int status;

			waitpid(pids[p], &status, 0);
			CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
			      "process %d: %s", p, r->why[p]);
		}
	}

	printf("\n  %-15s %-18s %-18s %-13s %s\n", "class", "content", "handle",
	       "interned by", "created by");
	for (c = 0; c < NCLASS; c++) {
		for (w = 0; w < NWORDS; w++) {
			char by[32] = "", creator[8] = "-", shown[24];
			__u64 h = 0;
			int same = 1, creators = 0;

			for (p = 0; p < NPROC; p++) {
				if (!r->handle[p][c][w])
					continue;
				snprintf(by + strlen(by), sizeof(by) - strlen(by),
					 "P%d ", p);
				if (!h)
					h = r->handle[p][c][w];
				else if (r->handle[p][c][w] != h)
					same = 0;
				if (r->created[p][c][w]) {
					creators++;
					snprintf(creator, sizeof(creator), "P%d", p);
				}
			}
			if (!h)
				continue;
			entries++;
			agree += same;
			if (creators != 1)
				once = 0;
			snprintf(shown, sizeof(shown), "\"%s\"", words[c][w]);
			printf("  %-15s %-18s 0x%016llx %-13s %s%s\n",
			       class_names[c], shown, (unsigned long long)h, by,
			       creator, same ? "" : "   <-- DISAGREE");
		}
	}

	th_case("every process got the same class ids") {
		for (p = 1; p < NPROC; p++)
			for (c = 0; c < NCLASS; c++)
				CHECK(r->class_id[p][c] == r->class_id[0][c],
				      "process %d class %s", p, class_names[c]);
	}

	th_case("all processes agree on every handle") {
		CHECK(agree == entries, "%d of %d entries agree", agree, entries);
	}
	printf("\n  %d entries, each interned by 3 of the %d processes at once: "
	       "they agree on %d of %d handles\n", entries, NPROC, agree,
	       entries);

	th_case("each entry was created by exactly one process") {
		CHECK(once, "an entry created twice or never");
	}

	th_case("every handle resolves to its content") {
		for (c = 0; c < NCLASS; c++) {
			for (w = 0; w < NWORDS; w++) {
				struct uniqd_resolve res;
				char buf[64];

				for (p = 0; p < NPROC && !r->handle[p][c][w]; p++)
					;
				if (p == NPROC)
					continue;
				memset(&res, 0, sizeof(res));
				res.handle = r->handle[p][c][w];
				res.buf = U64P(buf);
				res.buf_len = sizeof(buf);
				if (ioctl(fd, UNIQD_IOC_RESOLVE, &res) ||
				    res.len != strlen(words[c][w]) ||
				    memcmp(buf, words[c][w], res.len) ||
				    res.class_id != r->class_id[0][c])
					bad++;
			}
		}
		CHECK(!bad, "%d handles resolve wrong", bad);
	}

	th_case("STATS") {
		CHECK(ioctl(fd, UNIQD_IOC_STATS, &st) == 0, "stats: %s",
		      strerror(errno));
		CHECK(st.entries == (__u64)entries, "entries %llu",
		      (unsigned long long)st.entries);
	}
	printf("\n  STATS of \"demo\": %llu entries (%llu content bytes, %llu arena "
	       "bytes), %u classes,\n  %llu hits, %llu misses, %llu table "
	       "buckets (%llu bytes), %u file(s) attached\n\n",
	       (unsigned long long)st.entries, (unsigned long long)st.bytes,
	       (unsigned long long)st.arena_bytes, st.classes,
	       (unsigned long long)st.hits, (unsigned long long)st.misses,
	       (unsigned long long)st.table_slots + st.class_slots,
	       (unsigned long long)st.table_bytes, st.attached);

	close(fd);
	return th_finish();
}
