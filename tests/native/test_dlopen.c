// SPDX-License-Identifier: GPL-2.0
/*
 * libuniqd loaded the way plugins are: dlopen() of libuniqd.so.1, and of a
 * plugin-shaped object that links libuniqd.a (plugin/uq_plugin.c), by this
 * program, which is not linked with libuniqd. Before 1.2 both failed with
 * "cannot allocate memory in static TLS block": the library's initial-exec
 * thread-locals marked it STATIC_TLS with a 2,256-byte block, and glibc
 * keeps 512 bytes for every library loaded after start together.
 *
 * Each target: its ELF says no STATIC_TLS and a TLS block within budget;
 * it loads; two threads fail on two device paths and each keeps its own
 * uniqd_last_error() and uniqd_errname() text; threads that exit free their
 * error records; dlclose() works. No device is needed: the paths do not
 * exist.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "plugin/uq_plugin.h"

/*
 * The thread-local bytes a library may take. glibc's surplus for libraries
 * loaded after start is 512 bytes for all of them together
 * (glibc.rtld.optional_static_tls); libuniqd needs 56.
 */
#define TLS_BUDGET 128

/* Read the ELF file PATH: whether it is STATIC_TLS and its TLS size. */
static int elf_tls(const char *path, int *static_tls, uint64_t *tls_size,
		   char *why, size_t why_len)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	unsigned char *buf;
	struct stat st;
	int fd, ret = -1;

	*static_tls = 0;
	*tls_size = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		goto close_fd;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size) {
		snprintf(why, why_len, "%s: cannot read it", path);
		goto free_buf;
	}
	eh = (const Elf64_Ehdr *)buf;
	if ((size_t)st.st_size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(*ph) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(*ph) > (uint64_t)st.st_size) {
		snprintf(why, why_len, "%s: not a 64-bit ELF file", path);
		goto free_buf;
	}
	ph = (const Elf64_Phdr *)(buf + eh->e_phoff);
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Dyn *d;

		if (ph[i].p_type == PT_TLS)
			*tls_size += ph[i].p_memsz;
		if (ph[i].p_type != PT_DYNAMIC)
			continue;
		if (ph[i].p_offset + ph[i].p_filesz > (uint64_t)st.st_size) {
			snprintf(why, why_len, "%s: PT_DYNAMIC out of the file", path);
			goto free_buf;
		}
		d = (const Elf64_Dyn *)(buf + ph[i].p_offset);
		for (size_t j = 0; j < ph[i].p_filesz / sizeof(*d) && d[j].d_tag != DT_NULL; j++)
			if (d[j].d_tag == DT_FLAGS && (d[j].d_un.d_val & DF_STATIC_TLS))
				*static_tls = 1;
	}
	ret = 0;
free_buf:
	free(buf);
close_fd:
	if (fd >= 0)
		close(fd);
	return ret;
}

static void check_elf(const char *path)
{
	char why[512] = "";
	uint64_t tls;
	int st;

	CHECK(elf_tls(path, &st, &tls, why, sizeof(why)) == 0, "%s", why);
	CHECK(!st, "%s is marked STATIC_TLS (initial-exec thread-locals)", path);
	CHECK(tls <= TLS_BUDGET, "%s: %llu bytes of TLS, budget %d", path,
	      (unsigned long long)tls, TLS_BUDGET);
}

/* One thread of "errors per thread". */
struct failer {
	pthread_t t;
	const struct uqp_api *api;
	pthread_barrier_t *bar;
	char dev[64];
	int errnum;		/* for uniqd_errname(): unknown, formatted */
	int err;
	char first[512], later[512], ename[16];
	int ename_kept;
};

static void *failer_run(void *arg)
{
	struct failer *f = arg;
	struct uniqd_pool *p;
	const char *en;

	errno = 0;
	p = f->api->open_ex(f->dev, "x", 1, 0, NULL);
	f->err = p ? 0 : errno;
	if (p)
		f->api->close(p);
	snprintf(f->first, sizeof(f->first), "%s", f->api->last_error());
	en = f->api->errname(f->errnum);
	snprintf(f->ename, sizeof(f->ename), "%s", en);
	if (f->bar) {
		/* The other thread fails in between. */
		pthread_barrier_wait(f->bar);
		pthread_barrier_wait(f->bar);
	}
	snprintf(f->later, sizeof(f->later), "%s", f->api->last_error());
	f->ename_kept = !strcmp(en, f->ename);
	return NULL;
}

static void check_threads(const struct uqp_api *api)
{
	struct failer f[2];
	pthread_barrier_t bar;

	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].api = api;
		f[i].bar = &bar;
		f[i].errnum = 4001 + i;
		snprintf(f[i].dev, sizeof(f[i].dev), "/nonexistent/uniqd-%c", 'A' + i);
		pthread_create(&f[i].t, NULL, failer_run, &f[i]);
	}
	for (int i = 0; i < 2; i++) {
		char want[128], ename[16];

		pthread_join(f[i].t, NULL);
		snprintf(want, sizeof(want), "open %s: No such file or directory (ENOENT)",
			 f[i].dev);
		snprintf(ename, sizeof(ename), "E%d", f[i].errnum);
		CHECK(f[i].err == ENOENT, "thread %d: errno %d", i, f[i].err);
		CHECK(!strncmp(f[i].first, want, strlen(want)), "thread %d: '%s'", i,
		      f[i].first);
		CHECK(strstr(f[i].first, "modprobe uniqd") != NULL, "thread %d: '%s'", i,
		      f[i].first);
		CHECK(!strcmp(f[i].later, f[i].first),
		      "thread %d: its text changed to '%s'", i, f[i].later);
		CHECK(!strcmp(f[i].ename, ename) && f[i].ename_kept,
		      "thread %d: errname '%s'", i, f[i].ename);
	}
	pthread_barrier_destroy(&bar);
	/* This thread has not failed: its own state is untouched. */
	CHECK(!strcmp(api->last_error(), "no libuniqd call has failed in this thread"),
	      "main thread: '%s'", api->last_error());
}

/* Threads that fail once and exit: their error records must be freed. */
static void check_thread_exit(const struct uqp_api *api)
{
	enum { ROUNDS = 10, T = 20 };
	size_t before, after;
	struct failer f[T];

	before = mallinfo2().uordblks;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < T; i++) {
			memset(&f[i], 0, sizeof(f[i]));
			f[i].api = api;
			f[i].errnum = 5000 + i;
			snprintf(f[i].dev, sizeof(f[i].dev), "/nonexistent/%d", i);
			pthread_create(&f[i].t, NULL, failer_run, &f[i]);
		}
		for (int i = 0; i < T; i++) {
			pthread_join(f[i].t, NULL);
			CHECK(f[i].err == ENOENT && strstr(f[i].first, f[i].dev),
			      "round %d thread %d: '%s'", r, i, f[i].first);
		}
	}
	after = mallinfo2().uordblks;
	/* A record is about 2 KiB: 200 of them kept would be 400 KiB. */
	CHECK(after < before + 64 * 1024, "heap grew by %zu bytes over %d threads",
	      after - before, ROUNDS * T);
}

static void *must_dlopen(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	CHECK(h != NULL, "%s", dlerror());
	return h;
}

int main(void)
{
	struct uqp_api lib = { 0 };
	const struct uqp_api *plugin = NULL;
	const struct uqp_api *(*get_api)(void);
	void *hl, *hp;

	th_init("dlopen");

	th_case("libuniqd.so.1 has no static TLS")
		check_elf(UQ_LIBUNIQD_SO);
	th_case("a plugin linking libuniqd.a has no static TLS")
		check_elf(UQ_PLUGIN_SO);

	th_case("dlopen libuniqd.so.1") {
		hl = must_dlopen(UQ_LIBUNIQD_SO);
		if (hl) {
			*(void **)&lib.open_ex = dlsym(hl, "uniqd_open_ex");
			*(void **)&lib.close = dlsym(hl, "uniqd_close");
			*(void **)&lib.last_error = dlsym(hl, "uniqd_last_error");
			*(void **)&lib.errname = dlsym(hl, "uniqd_errname");
			*(void **)&lib.strerror = dlsym(hl, "uniqd_strerror");
			CHECK(lib.open_ex && lib.close && lib.last_error && lib.errname &&
			      lib.strerror, "dlsym: %s", dlerror());
		}
	}
	if (lib.open_ex && lib.close && lib.last_error && lib.errname) {
		th_case("libuniqd.so.1: errors per thread")
			check_threads(&lib);
		th_case("libuniqd.so.1: exiting threads free their records")
			check_thread_exit(&lib);
		th_case("libuniqd.so.1: dlclose")
			CHECK(dlclose(hl) == 0, "%s", dlerror());
	} else {
		th_skip("libuniqd.so.1: errors per thread", "it did not load");
	}

	th_case("dlopen a plugin linking libuniqd.a") {
		hp = must_dlopen(UQ_PLUGIN_SO);
		if (hp) {
			*(void **)&get_api = dlsym(hp, "uqp_api");
			CHECK(get_api != NULL, "dlsym: %s", dlerror());
			plugin = get_api ? get_api() : NULL;
			/* --exclude-libs: the plugin's copy stays inside. */
			CHECK(dlsym(hp, "uniqd_open") == NULL, "the plugin exports uniqd_open");
			CHECK(!plugin || plugin->open_ex != lib.open_ex,
			      "the plugin uses the shared library's copy");
		}
	}
	if (plugin) {
		th_case("plugin: errors per thread")
			check_threads(plugin);
		th_case("plugin: exiting threads free their records")
			check_thread_exit(plugin);
		th_case("plugin: dlclose")
			CHECK(dlclose(hp) == 0, "%s", dlerror());
	} else {
		th_skip("plugin: errors per thread", "it did not load");
	}
	return th_finish();
}
