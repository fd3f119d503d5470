// SPDX-License-Identifier: GPL-2.0
/*
 * Several processes intern overlapping keys into one pool at the same time
 * (single INTERNs and batches, while the tables grow) and must agree on
 * every handle; each key is created exactly once; every handle resolves to
 * its own content.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "harness.h"
#include "uniqd_test.h"

#define NPROC	4
#define NCLASS	3
#define NKEYS	6000
#define BATCH	64

static const char *const class_names[NCLASS] = { "type", "attr", "loc" };

struct shared {
	__u32 class_id[NPROC][NCLASS];
	__u64 handle[NPROC][NCLASS][NKEYS];
	__u32 created[NPROC];
	int failed[NPROC];
	char why[NPROC][128];
};

/* Key i of class c: mostly short, every 61st longer than the stack buffer. */
static size_t make_key(char *buf, int c, int i)
{
	size_t n = (size_t)snprintf(buf, 64, "%s/key-%d", class_names[c], i);

	if (i % 61 == 0) {
		memset(buf + n, 'x', 300 + i % 50);
		n += 300 + i % 50;
	}
	return n;
}

static void child(struct shared *sh, int me, int go)
{
	struct uniqd_key keys[BATCH];
	char bufs[BATCH][512];
	int fd, c, n, i, j;
	char x;

	fd = ut_open();
	/* Everyone starts at once. */
	if (read(go, &x, 1) < 0)
		_exit(2);
	if (fd < 0 || ut_attach(fd, "concurrent", UNIQD_ATTACH_EXISTING)) {
		snprintf(sh->why[me], 128, "attach: %s", strerror(errno));
		sh->failed[me] = 1;
		_exit(1);
	}
	for (c = 0; c < NCLASS; c++) {
		sh->class_id[me][c] = ut_class(fd, class_names[c]);
		if (!sh->class_id[me][c]) {
			snprintf(sh->why[me], 128, "class: %s", strerror(errno));
			sh->failed[me] = 1;
			_exit(1);
		}
	}
	/*
	 * Each process walks the keys from its own starting point, odd ones
	 * with single INTERNs and even ones with batches.
	 */
	for (n = 0; n < NKEYS * NCLASS; ) {
		int start = (n + me * NKEYS * NCLASS / NPROC) % (NKEYS * NCLASS);

		if (me % 2) {
			__u32 status;

			c = start / NKEYS;
			i = start % NKEYS;
			make_key(bufs[0], c, i);
			if (ut_intern(fd, sh->class_id[me][c], bufs[0],
				      make_key(bufs[0], c, i),
				      &sh->handle[me][c][i], &status)) {
				snprintf(sh->why[me], 128, "intern: %s",
					 strerror(errno));
				sh->failed[me] = 1;
				_exit(1);
			}
			if (status & UNIQD_STATUS_NEW)
				sh->created[me]++;
			n++;
		} else {
			struct uniqd_batch b;
			int cnt = 0;

			for (j = 0; j < BATCH && n < NKEYS * NCLASS; j++, n++) {
				int k = (start + j) % (NKEYS * NCLASS);

				c = k / NKEYS;
				i = k % NKEYS;
				memset(&keys[cnt], 0, sizeof(keys[cnt]));
				keys[cnt].class_id = sh->class_id[me][c];
				keys[cnt].len = make_key(bufs[cnt], c, i);
				keys[cnt].data = U64P(bufs[cnt]);
				keys[cnt].handle = (__u64)k;	/* remember the key */
				cnt++;
			}
			memset(&b, 0, sizeof(b));
			b.keys = U64P(keys);
			b.count = cnt;
			b.key_size = sizeof(keys[0]);
			if (ioctl(fd, UNIQD_IOC_INTERN_BATCH, &b) ||
			    b.done != (__u32)cnt) {
				snprintf(sh->why[me], 128, "batch: %s done %u",
					 strerror(errno), b.done);
				sh->failed[me] = 1;
				_exit(1);
			}
			sh->created[me] += b.created;
			for (j = 0; j < cnt; j++) {
				int k = (start + j) % (NKEYS * NCLASS);

				sh->handle[me][k / NKEYS][k % NKEYS] =
					keys[j].handle;
			}
		}
	}
	close(fd);
	_exit(0);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	struct shared *sh;
	struct uniqd_stats st;
	int go[2], fd, p, c, i;
	pid_t pids[NPROC];

	th_init("intern_concurrent");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = ut_pool("concurrent", UNIQD_ATTACH_NEW);

	th_case("setup") {
		CHECK(sh != MAP_FAILED, "mmap");
		CHECK(fd >= 0, "attach: %s", strerror(errno));
	}
	if (sh == MAP_FAILED || fd < 0)
		return th_finish();

	th_case("processes run") {
		CHECK_OK(pipe(go));
		fflush(stdout);
		for (p = 0; p < NPROC; p++) {
			pids[p] = fork();
			if (!pids[p]) {
				close(go[1]);
				child(sh, p, go[0]);
			}
		}
		close(go[0]);
		close(go[1]);	/* go */
		for (p = 0; p < NPROC; p++) {
			int status;

			CHECK(waitpid(pids[p], &status, 0) == pids[p], "wait");
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "child %d: status %d: %s", p, status, sh->why[p]);
		}
	}

	th_case("every process got the same class ids") {
		for (p = 1; p < NPROC; p++)
			for (c = 0; c < NCLASS; c++)
				CHECK(sh->class_id[p][c] == sh->class_id[0][c],
				      "proc %d class %d: %u vs %u", p, c,
				      sh->class_id[p][c], sh->class_id[0][c]);
		for (c = 0; c < NCLASS; c++)
			CHECK(sh->class_id[0][c] >= 1 && sh->class_id[0][c] <= NCLASS,
			      "id %u", sh->class_id[0][c]);
	}

	th_case("every process got the same handles") {
		int bad = 0;

		for (p = 1; p < NPROC; p++)
			for (c = 0; c < NCLASS; c++)
				for (i = 0; i < NKEYS; i++)
					if (sh->handle[p][c][i] != sh->handle[0][c][i] ||
					    !sh->handle[p][c][i])
						bad++;
		CHECK(!bad, "%d disagreements", bad);
	}

	th_case("different keys got different handles") {
		static __u64 all[NCLASS * NKEYS];
		int dups = 0;

		memcpy(all, sh->handle[0], sizeof(all));
		qsort(all, NCLASS * NKEYS, sizeof(all[0]), cmp_u64);
		for (i = 1; i < NCLASS * NKEYS; i++)
			if (all[i] == all[i - 1])
				dups++;
		CHECK(!dups, "%d duplicates", dups);
	}

	th_case("each key was created exactly once") {
		__u32 created = 0;

		for (p = 0; p < NPROC; p++)
			created += sh->created[p];
		CHECK(created == NCLASS * NKEYS, "created %u", created);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.entries == NCLASS * NKEYS, "entries %llu",
		      (unsigned long long)st.entries);
		CHECK(st.classes == NCLASS, "classes %u", st.classes);
		CHECK(st.misses == NCLASS * NKEYS, "misses %llu",
		      (unsigned long long)st.misses);
		CHECK(st.hits == (NPROC - 1) * NCLASS * NKEYS, "hits %llu",
		      (unsigned long long)st.hits);
		CHECK(st.attached == 1, "attached %u", st.attached);
	}

	th_case("every handle resolves to its content") {
		char want[512], got[512];
		int bad = 0;
		__u32 len, cls;

		for (c = 0; c < NCLASS; c++)
			for (i = 0; i < NKEYS; i++) {
				size_t n = make_key(want, c, i);

				if (ut_resolve(fd, sh->handle[0][c][i], got,
					       sizeof(got), &len, &cls) ||
				    len != n || memcmp(got, want, n) ||
				    cls != sh->class_id[0][c])
					bad++;
			}
		CHECK(!bad, "%d wrong", bad);
	}

	close(fd);
	munmap(sh, sizeof(*sh));
	return th_finish();
}
