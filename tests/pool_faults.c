// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures (failslab and fail_page_alloc, on kernels that have
 * fault injection: the debug kernel): every call either works or fails with
 * ENOMEM, a failed call changes nothing visible, and afterwards the pool
 * holds exactly what was reported, with exact byte accounting.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "harness.h"
#include "uniqd_test.h"

#define DBG	"/sys/kernel/debug"
#define OPS	3000
#define MAXREC	4000
#define MAXCLS	64

struct rec {
	__u32 cls;		/* index into classes[] */
	__u32 key;
	__u64 handle;
};

struct shared {
	__u32 class_id[MAXCLS];	/* 0: not registered (yet) */
	int nclass;
	struct rec rec[MAXREC];
	int nrec;
	int enomem;
	int bad_errno;
	char why[128];
};

static char keybuf[20000 + 64];

/* The content of key @k: its length and bytes are a function of k. */
static __u32 make_key(__u32 k)
{
	__u32 len = k % 5 == 0 ? 9000 + (k * 7919) % 11000 : k % 300;

	memset(keybuf, 'a' + k % 26, len);
	if (len >= 4)
		memcpy(keybuf, &k, 4);
	return len;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static int setup(const char *dir, const char *probability)
{
	char p[128];
	static const char *const kv[][2] = {
		{ "task-filter", "Y" }, { "interval", "1" }, { "times", "-1" },
		{ "verbose", "0" }, { "space", "0" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, kv[i][0]);
		if (write_file(p, kv[i][1]))
			return -1;
	}
	snprintf(p, sizeof(p), "%s/ignore-gfp-wait", dir);
	if (write_file(p, "N"))
		return -1;
	snprintf(p, sizeof(p), "%s/probability", dir);
	return write_file(p, probability);
}

static __u64 rng = 88172645463325252ULL;

static __u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void note(struct shared *sh, const char *what, int e)
{
	if (e == ENOMEM) {
		sh->enomem++;
		return;
	}
	if (!sh->bad_errno) {
		sh->bad_errno = e ? e : -1;
		snprintf(sh->why, sizeof(sh->why), "%s: %s", what, strerror(e));
	}
}

/* Content of a record, in keybuf; its length. */
static __u32 content(const struct rec *r)
{
	if (r->key & 0x80000000U) {
		__u32 id = r->key & 0x7fffffffU;

		memcpy(keybuf, &id, 4);
		memcpy(keybuf + 4, "bat", 4);
		return 8;
	}
	return make_key(r->key);
}

static void hammer(struct shared *sh, int fd)
{
	__u32 next_key = 0;
	int op;

	for (op = 0; op < OPS && !sh->bad_errno; op++) {
		unsigned int what = rnd() % 10;

		if (what == 0 && sh->nclass < MAXCLS) {
			char name[24];
			__u32 id;

			snprintf(name, sizeof(name), "class-%d", sh->nclass);
			if (ut_class_full(fd, name, 0, &id, NULL)) {
				note(sh, "class", errno);
				continue;
			}
			if (id != (__u32)sh->nclass + 1)
				note(sh, "class id not dense", 0);
			sh->class_id[sh->nclass++] = id;
		} else if (what <= 5 && sh->nclass && sh->nrec < MAXREC - 8) {
			__u32 c = rnd() % sh->nclass, len = make_key(next_key);
			__u64 h;
			__u32 status;

			if (ut_intern(fd, sh->class_id[c], keybuf, len, &h,
				      &status)) {
				note(sh, "intern", errno);
				next_key++;
				continue;
			}
			if (!(status & UNIQD_STATUS_NEW))
				note(sh, "new key not new", 0);
			sh->rec[sh->nrec++] = (struct rec){ c, next_key++, h };
		} else if (what <= 7 && sh->nrec) {
			struct rec *r = &sh->rec[rnd() % sh->nrec];
			__u32 len = content(r);
			__u64 h;

			if (ut_lookup(fd, sh->class_id[r->cls], keybuf, len, &h,
				      NULL)) {
				note(sh, "lookup", errno);
				continue;
			}
			if (h != r->handle)
				note(sh, "lookup handle", 0);
		} else if (what == 8 && sh->nclass && sh->nrec < MAXREC - 8) {
			/* A batch of 4 new small keys. */
			static struct uniqd_key k[4];
			static char small[4][8];
			struct uniqd_batch b;
			__u32 c = rnd() % sh->nclass, i;
			int ret;

			memset(k, 0, sizeof(k));
			for (i = 0; i < 4; i++) {
				__u32 id = next_key + i;

				memcpy(small[i], &id, 4);
				memcpy(small[i] + 4, "bat", 4);
				k[i].class_id = sh->class_id[c];
				k[i].data = U64P(small[i]);
				k[i].len = 8;
			}
			memset(&b, 0, sizeof(b));
			b.keys = U64P(k);
			b.count = 4;
			b.key_size = sizeof(k[0]);
			ret = ioctl(fd, UNIQD_IOC_INTERN_BATCH, &b);
			if (ret)
				note(sh, "batch", errno);
			/* Batch keys are recorded with a marker bit. */
			for (i = 0; i < b.done; i++)
				sh->rec[sh->nrec++] = (struct rec){
					c, (next_key + i) | 0x80000000U,
					k[i].handle };
			next_key += 4;
		} else if (sh->nrec) {
			struct rec *r = &sh->rec[rnd() % sh->nrec];
			static char out[20064];
			__u32 len, cls;

			if (ut_resolve(fd, r->handle, out, sizeof(out), &len, &cls))
				note(sh, "resolve", errno);
		}
	}
}

int main(void)
{
	struct shared *sh;
	struct uniqd_stats st;
	static char out[20064];
	__u64 want_bytes = 0, want_content = 0;
	int fd, status, i;
	pid_t pid;

	th_init("pool_faults");
	if (access(DBG "/failslab/probability", F_OK) ||
	    access(DBG "/fail_page_alloc/probability", F_OK)) {
		th_skip("allocation failures",
			"no failslab/fail_page_alloc (fault injection) in this kernel");
		return th_finish();
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = ut_pool("faults", UNIQD_ATTACH_NEW);

	th_case("setup") {
		CHECK(sh != MAP_FAILED && fd >= 0, "setup: %s", strerror(errno));
		CHECK_OK(setup(DBG "/failslab", "10"));
		CHECK_OK(setup(DBG "/fail_page_alloc", "10"));
		/* Order-0 pages (page faults, page tables) never fail. */
		CHECK_OK(write_file(DBG "/fail_page_alloc/min-order", "1"));
	}

	th_case("every call works or fails with ENOMEM") {
		fflush(stdout);
		pid = fork();
		if (!pid) {
			memset(keybuf, 0, sizeof(keybuf));
			mlockall(MCL_CURRENT | MCL_FUTURE);
			if (write_file("/proc/self/make-it-fail", "1"))
				_exit(3);
			hammer(sh, fd);
			write_file("/proc/self/make-it-fail", "0");
			_exit(0);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && !WEXITSTATUS(status), "status %d",
		      status);
		CHECK(!sh->bad_errno, "%s", sh->why);
		CHECK(sh->enomem > 0, "no allocation failed");
		printf("# %d ENOMEM, %d classes, %d entries\n", sh->enomem,
		       sh->nclass, sh->nrec);
		write_file(DBG "/failslab/probability", "0");
		write_file(DBG "/fail_page_alloc/probability", "0");
	}

	th_case("the pool holds exactly what was reported") {
		__u32 len, cls;
		__u64 h;

		for (i = 0; i < sh->nrec; i++) {
			__u32 n = content(&sh->rec[i]);

			CHECK_OK(ut_resolve(fd, sh->rec[i].handle, out, sizeof(out),
					    &len, &cls));
			CHECK(len == n && !memcmp(out, keybuf, n) &&
			      cls == sh->class_id[sh->rec[i].cls], "entry %d", i);
			CHECK_OK(ut_intern(fd, sh->class_id[sh->rec[i].cls], keybuf,
					   n, &h, NULL));
			CHECK(h == sh->rec[i].handle, "entry %d handle", i);
			want_bytes += ut_rec_size(n);
			want_content += n;
		}
		for (i = 0; i < sh->nclass; i++) {
			char name[24];

			snprintf(name, sizeof(name), "class-%d", i);
			CHECK(ut_class(fd, name) == sh->class_id[i], "class %d", i);
			want_bytes += ut_rec_size(strlen(name));
		}
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.entries == (__u64)sh->nrec, "entries %llu, reported %d",
		      (unsigned long long)st.entries, sh->nrec);
		CHECK(st.classes == (__u32)sh->nclass, "classes %u, reported %d",
		      st.classes, sh->nclass);
		CHECK(st.bytes == want_content, "bytes %llu, want %llu",
		      (unsigned long long)st.bytes,
		      (unsigned long long)want_content);
		CHECK(st.arena_bytes == want_bytes, "arena_bytes %llu, want %llu",
		      (unsigned long long)st.arena_bytes,
		      (unsigned long long)want_bytes);
	}

	close(fd);
	return th_finish();
}
