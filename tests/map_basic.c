// SPDX-License-Identifier: GPL-2.0
/*
 * The mapped pool: its layout, every refusal (write, exec, mprotect,
 * /proc/self/mem, process_vm_writev, ptrace, mremap, offsets, unattached
 * files), a scan of every mapped word, and lifetimes (fork, exec,
 * MADV_DONTNEED, close-then-read, freed after the last munmap, SIGKILL of
 * readers, rmmod refused while mapped).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "harness.h"
#include "uniqd_map_test.h"

#define NKEYS 3000

static char *key(int i, char *buf)
{
	/* Lengths 0..70 and both sides of 8-byte padding. */
	int n = i % 71, k;

	for (k = 0; k < n; k++)
		buf[k] = 'a' + (i * 7 + k) % 26;
	snprintf(buf + n, 32, "#%d", i);
	return buf;
}

/* Is @p in the words of the header that the ABI names? */
static int scan_header(const struct ut_map *m, __u64 page)
{
	const struct uniqd_map_header *h = m->h;
	const __u8 *p = (const __u8 *)h + sizeof(*h);
	int bad = 0;

	for (size_t i = 0; i < sizeof(h->reserved) / 8; i++)
		bad += h->reserved[i] != 0;
	for (; p < m->base + page; p++)
		bad += *p != 0;
	return bad;
}

int main(int argc, char **argv)
{
	static __u64 handles[NKEYS];
	__u64 h0 = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct uniqd_stats st;
	struct ut_map m;
	char buf[128];
	__u32 cls, cls2;
	int fd, i;

	/* The exec case re-runs this program: it must see no mapping. */
	if (argc > 1 && !strcmp(argv[1], "--maps-after-exec")) {
		FILE *f = fopen("/proc/self/maps", "r");
		char line[512];
		int found = 0;

		while (f && fgets(line, sizeof(line), f))
			found |= strstr(line, "uniqd") != NULL;
		return found ? 1 : 0;
	}

	th_init("map_basic");
	fd = ut_pool("map-basic", 0);
	if (fd < 0) {
		perror("attach");
		return 1;
	}
	cls = ut_class(fd, "ident");
	cls2 = ut_class(fd, "type");

	th_case("VERSION offers the mapping") {
		struct uniqd_version v = { 0 };

		CHECK_OK(ioctl(fd, UNIQD_IOC_VERSION, &v));
		CHECK(v.features & UNIQD_FEAT_MAP, "features %llx",
		      (unsigned long long)v.features);
	}

	th_case("the header describes the pool") {
		CHECK_OK(ut_map(fd, &m));
		CHECK_OK(ut_intern(fd, cls, "first", 5, &h0, NULL));
		CHECK_OK(ut_stats(fd, &st));
		CHECK(m.h->magic == UNIQD_MAP_MAGIC, "magic %llx",
		      (unsigned long long)m.h->magic);
		CHECK(m.h->version == UNIQD_MAP_VERSION, "version %u", m.h->version);
		CHECK(m.h->header_size == sizeof(struct uniqd_map_header), "size");
		CHECK(m.h->page_size == (__u32)page, "page %u", m.h->page_size);
		CHECK(m.h->probe == UNIQD_MAP_PROBE, "probe %u", m.h->probe);
		CHECK(m.h->map_size == st.map_size && m.size == st.map_size,
		      "map_size %llu stats %llu", (unsigned long long)m.h->map_size,
		      (unsigned long long)st.map_size);
		CHECK((h0 & ~0xffffffffULL) == m.h->handle_base, "handle base");
		CHECK(m.h->entries_cap == st.max_entries + 1, "entries_cap");
		CHECK(m.h->entries_off < m.h->index_off &&
		      m.h->index_off < m.h->records_off &&
		      m.h->records_off + m.h->records_size == m.h->map_size,
		      "regions out of order");
		CHECK(ut_map_find(&m, cls, "first", 5) == h0, "not found");
		CHECK(!ut_map_find(&m, cls2, "first", 5), "found in another class");
		CHECK(!ut_map_find(&m, cls, "firsT", 5), "false hit");
	}

	th_case("a retired index array is given back and reads as empty") {
		__u64 w0 = UT_ACQ(&m.h->index), w1, sum = 0, nslots;
		const volatile __u64 *old;

		nslots = 1ULL << UNIQD_MAP_INDEX_LOG2(w0);
		old = (const volatile __u64 *)(m.base + UNIQD_MAP_INDEX_OFF(w0));
		/* Its pages are mapped here before the growth retires it. */
		for (__u64 s = 0; s < nslots; s++)
			sum += old[s];
		CHECK(sum && ut_map_find_in(&m, w0, cls, "first", 5) == h0,
		      "first array: no entry");
		for (i = 0; i < NKEYS; i++) {
			char *k = key(i, buf);

			CHECK_OK(ut_intern(fd, i & 1 ? cls2 : cls, k, strlen(k),
					   &handles[i], NULL));
		}
		w1 = UT_ACQ(&m.h->index);
		CHECK(w1 != w0, "the index did not grow");
		/* A reader still holding the old word: only misses. */
		sum = 0;
		for (__u64 s = 0; s < nslots; s++)
			sum |= old[s];
		CHECK(!sum, "the retired array still reads %#llx",
		      (unsigned long long)sum);
		CHECK(!ut_map_find_in(&m, w0, cls, "first", 5) &&
		      ut_map_find(&m, cls, "first", 5) == h0,
		      "old word finds, or new word misses");
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.index_bytes == 8ULL << UNIQD_MAP_INDEX_LOG2(w1) &&
		      st.index_slots == 1ULL << UNIQD_MAP_INDEX_LOG2(w1),
		      "index_bytes %llu, slots %llu: retired arrays kept",
		      (unsigned long long)st.index_bytes,
		      (unsigned long long)st.index_slots);
	}

	th_case("every entry is found through the mapping, equal to RESOLVE") {
		int missing = 0, wrong = 0;

		for (i = 0; i < NKEYS; i++) {
			char *k = key(i, buf);

			CHECK_OK(ut_intern(fd, i & 1 ? cls2 : cls, k, strlen(k),
					   &handles[i], NULL));
		}
		for (i = 0; i < NKEYS; i++) {
			char *k = key(i, buf), out[128];
			const struct uniqd_map_rec *r;
			__u32 c = i & 1 ? cls2 : cls, rc = 0, len = 0;
			__u64 h = ut_map_find(&m, c, k, strlen(k));

			missing += h == 0;
			wrong += h && h != handles[i];
			r = ut_map_rec(&m, (__u32)handles[i]);
			CHECK(r, "entry %d not published", i);
			if (!r)
				continue;
			CHECK_OK(ut_resolve(fd, handles[i], out, sizeof(out), &len, &rc));
			CHECK(r->class_id == rc && r->len == len &&
			      !memcmp(r->data, out, len), "record %d differs", i);
		}
		CHECK(!wrong, "%d wrong handles", wrong);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(missing == (int)st.map_overflow, "%d missing, overflow %llu",
		      missing, (unsigned long long)st.map_overflow);
		CHECK(st.map_indexed + st.map_overflow == st.entries,
		      "indexed %llu overflow %llu entries %llu",
		      (unsigned long long)st.map_indexed,
		      (unsigned long long)st.map_overflow,
		      (unsigned long long)st.entries);
	}

	th_case("every mapped word is header, entry, slot, record or zero") {
		const struct uniqd_map_header *h = m.h;
		const __u64 *e = (const __u64 *)(m.base + h->entries_off);
		__u64 ne = UT_ACQ(&h->entries_end), rend = UT_ACQ(&h->records_end);
		__u8 *covered;
		int bad = 0, badslot = 0;

		CHECK_OK(ut_stats(fd, &st));
		bad += scan_header(&m, page);
		/* Records: mark what entries cover, check each against RESOLVE. */
		covered = calloc(1, rend - h->records_off);
		for (__u64 x = 1; x < ne; x++) {
			const struct uniqd_map_rec *r;
			char out[128];
			__u32 len = 0, rc = 0;

			if (!e[x])
				continue;
			if (e[x] < h->records_off || e[x] + 8 > rend) {
				bad++;
				continue;
			}
			r = (const void *)(m.base + e[x]);
			if (ut_resolve(fd, h->handle_base | x, out, sizeof(out),
				       &len, &rc) || len != r->len ||
			    rc != r->class_id || memcmp(out, r->data, len))
				bad++;
			memset(covered + e[x] - h->records_off, 1,
			       (8 + r->len + 7) & ~7U);
		}
		for (__u64 o = 0; o < rend - h->records_off; o++)
			if (!covered[o] && m.base[h->records_off + o])
				bad++;
		free(covered);
		/* Entries beyond those used are zero. */
		for (__u64 x = st.entries + 1; x < ne; x++)
			bad += e[x] != 0;
		bad += e[0] != 0;
		/*
		 * Index arrays up to the current one's end (the retired ones
		 * read as zero): slots that are empty or right.
		 */
		__u64 iw = UT_ACQ(&h->index);
		__u64 iend = UNIQD_MAP_INDEX_OFF(iw) + (8ULL << UNIQD_MAP_INDEX_LOG2(iw)) -
			     h->index_off;

		for (__u64 o = 0; o < iend; o += 8) {
			__u64 v = *(const __u64 *)(m.base + h->index_off + o);
			const struct uniqd_map_rec *r;

			if (!v)
				continue;
			r = ut_map_rec(&m, (__u32)v);
			if (!r || (uniqd_maphash(h->hash_seed[0], h->hash_seed[1],
						 r->class_id, r->data, r->len) >> 32) !=
				  v >> 32)
				badslot++;
		}
		CHECK(!bad, "%d unexplained words or bytes", bad);
		CHECK(!badslot, "%d index slots that name no matching entry", badslot);
	}

	th_case("write, exec and private-write mappings are refused") {
		CHECK_ERR((long)mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED,
				     fd, 0), EPERM);
		CHECK_ERR((long)mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE,
				     fd, 0), EPERM);
		CHECK_ERR((long)mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_SHARED,
				     fd, 0), EPERM);
		CHECK_ERR((long)mmap(NULL, page, PROT_READ, MAP_SHARED, fd,
				     m.size), EINVAL);
		CHECK_ERR((long)mmap(NULL, m.size + page, PROT_READ, MAP_SHARED,
				     fd, 0), EINVAL);
	}

	th_case("mprotect cannot add write or exec") {
		CHECK_ERR(mprotect((void *)m.base, page, PROT_READ | PROT_WRITE),
			  EACCES);
		CHECK_ERR(mprotect((void *)m.base, page, PROT_READ | PROT_EXEC),
			  EACCES);
	}

	th_case("forced writes fail: /proc/self/mem, process_vm_writev, ptrace") {
		__u64 before = m.h->magic, x = 0;
		struct iovec l = { &x, 8 }, r = { (void *)m.base, 8 };
		int mem = open("/proc/self/mem", O_RDWR);
		pid_t pid;
		int wst;

		CHECK(mem >= 0, "open /proc/self/mem: %s", strerror(errno));
		errno = 0;
		CHECK(pwrite(mem, &x, 8, (off_t)(uintptr_t)m.base) < 0 &&
		      (errno == EIO || errno == EFAULT), "pwrite: %s",
		      strerror(errno));
		close(mem);
		/* ENOSYS: a kernel without CROSS_MEMORY_ATTACH (the debug one). */
		errno = 0;
		CHECK(process_vm_writev(getpid(), &l, 1, &r, 1, 0) < 0 &&
		      (errno == EFAULT || errno == ENOSYS),
		      "process_vm_writev: %s", strerror(errno));
		/* A read through the mapping into a file is fine; into it, not. */
		CHECK_ERR(read(open("/proc/self/stat", O_RDONLY), (void *)m.base, 8),
			  EFAULT);
		fflush(stdout);
		pid = fork();
		if (!pid) {
			ptrace(PTRACE_TRACEME, 0, 0, 0);
			raise(SIGSTOP);
			_exit(m.h->magic == UNIQD_MAP_MAGIC ? 0 : 1);
		}
		waitpid(pid, &wst, 0);
		errno = 0;
		CHECK(ptrace(PTRACE_POKEDATA, pid, (void *)m.base, 0) < 0 &&
		      (errno == EIO || errno == EFAULT), "POKEDATA: %s",
		      strerror(errno));
		ptrace(PTRACE_CONT, pid, 0, 0);
		waitpid(pid, &wst, 0);
		CHECK(WIFEXITED(wst) && !WEXITSTATUS(wst), "child saw a change");
		CHECK(m.h->magic == before, "the header changed");
	}

	th_case("mremap cannot grow the mapping; a move keeps it readable") {
		void *p = mremap((void *)m.base, m.size, m.size + page, 0);

		CHECK(p == MAP_FAILED && errno == EFAULT, "grow: %p %s", p,
		      strerror(errno));
		void *to = mmap(NULL, m.size, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		p = mremap((void *)m.base, m.size, m.size, MREMAP_MAYMOVE |
			   MREMAP_FIXED, to);
		if (p != MAP_FAILED) {
			m.base = p;
			m.h = p;
		}
		CHECK(p != MAP_FAILED, "move: %s", strerror(errno));
		CHECK(ut_map_find(&m, cls, "first", 5) != 0, "lost after move");
	}

	th_case("an unattached file cannot be mapped") {
		int f2 = ut_open();

		CHECK_ERR((long)mmap(NULL, page, PROT_READ, MAP_SHARED, f2, 0),
			  EBADFD);
		close(f2);
	}

	th_case("MADV_DONTNEED drops pages that fault back unchanged") {
		char *k = key(17, buf);

		CHECK_OK(madvise((void *)m.base, m.size, MADV_DONTNEED));
		CHECK(ut_map_find(&m, cls2, k, strlen(k)) == handles[17],
		      "not found after MADV_DONTNEED");
	}

	th_case("fork inherits the mapping; exec drops it") {
		pid_t pid;
		int wst;

		fflush(stdout);
		pid = fork();
		if (!pid) {
			char *k = key(100, buf);

			_exit(ut_map_find(&m, cls, k, strlen(k)) == handles[100] ?
			      0 : 1);
		}
		waitpid(pid, &wst, 0);
		CHECK(WIFEXITED(wst) && !WEXITSTATUS(wst), "child: %x", wst);
		pid = fork();
		if (!pid) {
			execl("/proc/self/exe", argv[0], "--maps-after-exec",
			      (char *)NULL);
			_exit(2);
		}
		waitpid(pid, &wst, 0);
		CHECK(WIFEXITED(wst) && !WEXITSTATUS(wst), "exec: %x", wst);
	}

	th_case("readers killed mid-loop change nothing") {
		pid_t kids[3];
		int wst, n;

		for (n = 0; n < 3; n++) {
			fflush(stdout);
			kids[n] = fork();
			if (!kids[n]) {
				for (;;)
					for (i = 0; i < NKEYS; i++) {
						char *k = key(i, buf);

						if (ut_map_find(&m, i & 1 ? cls2 : cls, k,
								strlen(k)) == 1)
							_exit(3);
					}
			}
		}
		usleep(200000);
		for (n = 0; n < 3; n++) {
			kill(kids[n], SIGKILL);
			waitpid(kids[n], &wst, 0);
			CHECK(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL,
			      "reader %d: %x", n, wst);
		}
		CHECK(ut_map_find(&m, cls, "first", 5), "lost");
	}

	th_case("close, then read: the mapping keeps the pool; munmap frees it") {
		int f2;

		close(fd);
		CHECK(ut_map_find(&m, cls, "first", 5) != 0, "lost after close");
		CHECK(ut_rmmod() != 0, "rmmod succeeded while mapped");
		f2 = ut_open();
		CHECK_OK(ut_attach(f2, "map-basic", UNIQD_ATTACH_EXISTING));
		close(f2);
		ut_unmap(&m);
		f2 = ut_open();
		CHECK_ERR(ut_attach(f2, "map-basic", UNIQD_ATTACH_EXISTING), ENOENT);
		close(f2);
	}
	return th_finish();
}
