// SPDX-License-Identifier: GPL-2.0
/*
 * Memory: what 1M entries of 4..32 bytes cost the kernel beyond their
 * content bytes. The process moves itself into its own memory cgroup
 * (cgroup2, mounted if needed) and reads memory.stat around interning:
 * uniqd charges everything a pool allocates (GFP_KERNEL_ACCOUNT) to the
 * caller, so the cgroup's "kernel" memory grows by exactly the pool (and
 * a few pages of the process's own page tables, faulted in beforehand).
 * STATS says what the module itself counts (the mapping's pages, its index
 * arrays, kernel-only objects, tables; see report.py; formerly the xarray of
 * handles and small objects are not counted there).
 *
 *   UBENCH memory n=N content=C entries=E arena=A table=T slots=S
 *                 map=M index=I kbytes=K (STATS since 1.6; M, I, K may be
 *                 absent from older runs)
 *                 kernel=K slab=S vmalloc=V percpu=P released=R
 *   UBENCH memory-redis n=N content=C used=U     (with --redis)
 *
 * All deltas in bytes; released: kernel memory still charged one second
 * after the pool was freed (should be about 0).
 *
 *   ub_memory [--n N] [--redis SOCKET]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/ut_host.h"
#include "ubench.h"

#define MYCG UT_CG "/ubench-memory"

/* Errors but the last show up as a missing memory.stat below. */
static void cgroup_enter(void)
{
	ut_memcg_make("ubench-memory", NULL);
	if (ut_cgroup_join("ubench-memory"))
		ub_die("cannot enter %s: %s", MYCG, strerror(errno));
}

struct memstat {
	long long kernel, slab, vmalloc, percpu, current;
};

static long long field(const char *buf, const char *name)
{
	size_t l = strlen(name);
	const char *p = buf;

	while ((p = strstr(p, name))) {
		if ((p == buf || p[-1] == '\n') && p[l] == ' ')
			return atoll(p + l + 1);
		p += l;
	}
	return -1;
}

static void memstat(struct memstat *m)
{
	char buf[8192];
	FILE *f;

	sync();
	if (ut_read_file(MYCG "/memory.stat", buf, sizeof(buf)) < 0)
		ub_die("%s/memory.stat: %s", MYCG, strerror(errno));
	m->kernel = field(buf, "kernel");
	m->slab = field(buf, "slab");
	m->vmalloc = field(buf, "vmalloc");
	m->percpu = field(buf, "percpu");
	f = fopen(MYCG "/memory.current", "r");
	if (!f || fscanf(f, "%lld", &m->current) != 1)
		m->current = -1;
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	uint32_t n = 1000000, i;
	const char *sock = NULL;
	struct memstat m0, m1, m2;
	struct uniqd_stats st;
	struct ub_keys keys;
	uint64_t content = 0;
	uint32_t cls;
	int fd;

	for (i = 1; i < (uint32_t)argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < (uint32_t)argc)
			n = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--redis") && i + 1 < (uint32_t)argc)
			sock = argv[++i];
		else
			ub_die("usage: ub_memory [--n N] [--redis SOCKET]");
	}
	n = (n + 255) / 256 * 256;
	cgroup_enter();
	ub_keys_make(&keys, n, 0, 21);
	for (i = 0; i < n; i++)
		content += keys.len[i];

	memstat(&m0);
	fd = ub_uniqd_open("ubench-memory");
	cls = ub_uniqd_class(fd, "ident");
	ub_uniqd_intern_all(fd, cls, &keys, n);
	if (ut_stats(fd, &st))
		ub_die("STATS: %s", strerror(errno));
	/* Old table generations are freed after a grace period. */
	sleep(1);
	memstat(&m1);
	close(fd);
	sleep(1);
	memstat(&m2);
	ub_out("memory n=%u content=%llu entries=%llu arena=%llu table=%llu slots=%llu map=%llu index=%llu kbytes=%llu kernel=%lld slab=%lld vmalloc=%lld percpu=%lld current=%lld released=%lld",
	       n, (unsigned long long)content, (unsigned long long)st.entries,
	       (unsigned long long)st.arena_bytes,
	       (unsigned long long)st.table_bytes,
	       (unsigned long long)st.table_slots,
	       (unsigned long long)st.map_bytes,
	       (unsigned long long)st.index_bytes,
	       (unsigned long long)st.kernel_bytes, m1.kernel - m0.kernel,
	       m1.slab - m0.slab, m1.vmalloc - m0.vmalloc,
	       m1.percpu - m0.percpu, m1.current - m0.current,
	       m2.kernel - m0.kernel);

	if (sock) {
		struct ub_redis *r = ub_redis_connect(sock);
		int64_t u0, u1;

		if (!r || ub_redis_load(r) || ub_redis_simple(r, "FLUSHALL"))
			ub_die("redis at %s unusable", sock);
		u0 = ub_redis_used_memory(r);
		if (ub_redis_intern_all(r, &keys, n))
			ub_die("redis: interning failed");
		u1 = ub_redis_used_memory(r);
		ub_out("memory-redis n=%u content=%llu used=%lld", n,
		       (unsigned long long)content, (long long)(u1 - u0));
		ub_redis_simple(r, "FLUSHALL");
		ub_redis_close(r);
	}
	return 0;
}
