// SPDX-License-Identifier: GPL-2.0
/*
 * Module lifecycle: ten times over, several processes use the module
 * heavily (a shared pool and pools of their own, batches and single keys up
 * to max_key_len, handles cross-checked between the processes), every file
 * is closed, the module's reference count is 0, rmmod unloads it, insmod
 * loads it again (with the parameters the VM loaded it with) and the new
 * instance starts empty. Then open/ATTACH/INTERN in a loop race rmmod and
 * insmod: opening may fail (ENOENT, ENODEV, ENXIO) while the module is
 * away, nothing else may.
 *
 * Runs last (tools/testing/vm/last-tests.txt): it leaves the module
 * loaded, and the VM's init unloads it and checks the kernel log and
 * kmemleak (on the debug kernel; a scan is also triggered half-way and its
 * count printed).
 *
 * UNIQD_SCALE=full: more processes and keys, more racing rounds.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"
#include "uniqd_test.h"

#define ROUNDS	10
#define MAXP	8

static int nproc, nkeys;
static __u32 max_key_len;
static char params[512];

struct shared {
	__u64 handle[MAXP][20000];
	int bad[MAXP];
	char why[MAXP][160];
	/* the racer */
	int stop;
	__u64 opens, open_fail, attached, undocumented;
	int bad_errno;
};

static struct shared *sh;

/* ---- running busybox --------------------------------------------------------- */

/* Run busybox APPLET with args; its exit status; its output in @out. */
static int run(char *out, size_t outlen, const char *applet, char *const args[])
{
	char path[] = "/tmp/lifecycle-out-XXXXXX";
	char *argv[40];
	int fd, st, i, n = 0;
	pid_t pid;

	fd = mkstemp(path);
	argv[n++] = (char *)applet;
	for (i = 0; args[i] && n < 38; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv("/bin/busybox", argv);
		execv(applet[0] == 'r' ? "/bin/rmmod" : "/bin/insmod", argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	if (out && outlen) {
		ssize_t r = fd >= 0 ? pread(fd, out, outlen - 1, 0) : 0;

		out[r > 0 ? r : 0] = 0;
	}
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	return st < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int do_rmmod(char *out, size_t n)
{
	char *args[] = { "uniqd", NULL };

	return run(out, n, "rmmod", args);
}

static int do_insmod(char *out, size_t n)
{
	char *args[32], *p, *save = NULL, buf[512];
	int i = 0;

	snprintf(buf, sizeof(buf), "%s", params);
	args[i++] = "/uniqd.ko";
	for (p = strtok_r(buf, " \t\n", &save); p && i < 30;
	     p = strtok_r(NULL, " \t\n", &save))
		args[i++] = p;
	args[i] = NULL;
	return run(out, n, "insmod", args);
}

static int loaded(void)
{
	return access("/sys/module/uniqd", F_OK) == 0;
}

static int refcnt(void)
{
	FILE *f = fopen("/sys/module/uniqd/refcnt", "r");
	int r = -1;

	if (f) {
		if (fscanf(f, "%d", &r) != 1)
			r = -1;
		fclose(f);
	}
	return r;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The device node comes with the module (devtmpfs); wait a little for it. */
static int wait_device(int present)
{
	int i;

	for (i = 0; i < 200; i++) {
		if ((access(UNIQD_DEVICE_PATH, F_OK) == 0) == present)
			return 0;
		sleep_ms(10);
	}
	return -1;
}

/* ---- heavy use --------------------------------------------------------------- */

static __u64 splitmix(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Key i (of the shared set, or of process p's own when own): distinct. */
static __u32 key_of(int round, int own, int i, __u8 *buf)
{
	__u64 s = ((__u64)round << 48) ^ ((__u64)own << 40) ^ (__u64)i;
	__u32 len, j;

	len = i % 97 == 0 ? max_key_len - (i % 3) : 8 + splitmix(&s) % 1500;
	for (j = 0; j < len; j += 8) {
		__u64 w = splitmix(&s);

		memcpy(buf + j, &w, len - j < 8 ? len - j : 8);
	}
	memcpy(buf, &i, 4);
	buf[4] = (__u8)own;
	return len;
}

static void user_fail(int p, const char *what, int e)
{
	if (!sh->bad[p]++)
		snprintf(sh->why[p], sizeof(sh->why[p]), "%s: %s", what, strerror(e));
}

static void user(int round, int p)
{
	static struct uniqd_key keys[64];
	__u8 *bufs = malloc(64 * (size_t)(max_key_len + 8));
	__u8 *got = malloc(max_key_len + 8);
	char own_name[32];
	int fs, fo, i, j, n;
	__u32 cs, co, len, gl, gc;
	__u64 h;

	snprintf(own_name, sizeof(own_name), "life-own-%d", p);
	fs = ut_pool("life-shared", UNIQD_ATTACH_EXISTING);
	fo = ut_pool(own_name, UNIQD_ATTACH_NEW);
	cs = fs >= 0 ? ut_class(fs, "k") : 0;
	co = fo >= 0 ? ut_class(fo, "k") : 0;
	if (!bufs || !got || !cs || !co) {
		user_fail(p, "setup", errno);
		_exit(1);
	}
	/* The shared pool in batches, from a different place in each process. */
	for (i = 0; i < nkeys; i += n) {
		struct uniqd_batch b;

		n = nkeys - i < 64 ? nkeys - i : 64;
		for (j = 0; j < n; j++) {
			int k = (i + j + p * nkeys / nproc) % nkeys;
			__u8 *buf = bufs + (size_t)j * (max_key_len + 8);

			memset(&keys[j], 0, sizeof(keys[j]));
			keys[j].class_id = cs;
			keys[j].len = key_of(round, 0, k, buf);
			keys[j].data = U64P(buf);
		}
		memset(&b, 0, sizeof(b));
		b.keys = U64P(keys);
		b.count = n;
		b.key_size = sizeof(keys[0]);
		if (ioctl(fs, UNIQD_IOC_INTERN_BATCH, &b) || b.done != (__u32)n) {
			user_fail(p, "batch", errno);
			break;
		}
		for (j = 0; j < n; j++)
			sh->handle[p][(i + j + p * nkeys / nproc) % nkeys] = keys[j].handle;
	}
	/* Its own pool, one key at a time, each checked. */
	for (i = 0; i < nkeys / 2; i++) {
		len = key_of(round, 1 + p, i, bufs);
		if (ut_intern(fo, co, bufs, len, &h, NULL) ||
		    ut_resolve(fo, h, got, max_key_len + 8, &gl, &gc) ||
		    gl != len || gc != co || memcmp(got, bufs, len)) {
			user_fail(p, "own pool", errno);
			break;
		}
	}
	/* The shared handles resolve to their keys. */
	for (i = 0; i < nkeys; i += 7) {
		len = key_of(round, 0, i, bufs);
		if (ut_resolve(fs, sh->handle[p][i], got, max_key_len + 8, &gl, &gc) ||
		    gl != len || memcmp(got, bufs, len)) {
			user_fail(p, "shared resolve", errno);
			break;
		}
	}
	close(fs);
	close(fo);
	_exit(sh->bad[p] ? 1 : 0);
}

/* ---- racing rmmod -------------------------------------------------------------- */

static void racer(void)
{
	__u64 s = 0x7ace;
	__u8 key[16];

	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		int fd = ut_open();
		__u64 h;

		sh->opens++;
		if (fd < 0) {
			if (errno != ENOENT && errno != ENODEV && errno != ENXIO) {
				if (!sh->undocumented++)
					sh->bad_errno = errno;
			}
			sh->open_fail++;
		} else {
			/* Open: the module cannot go away under this file. */
			__u64 k = splitmix(&s);

			memcpy(key, &k, 8);
			memcpy(key + 8, &k, 8);
			if (ut_attach(fd, "life-race", 0) || !ut_class(fd, "r") ||
			    ut_intern(fd, 1, key, sizeof(key), &h, NULL)) {
				if (!sh->undocumented++)
					sh->bad_errno = errno;
			} else {
				sh->attached++;
			}
			close(fd);
		}
		if (splitmix(&s) % 4 == 0)
			sleep_ms(1);
	}
	_exit(0);
}

/* kmemleak: scan now and count the suspects (-1 without kmemleak). */
static int kmemleak_count(void)
{
	char line[512];
	int n = 0;
	FILE *f;

	if (access("/sys/kernel/debug/kmemleak", F_OK))
		return -1;
	f = fopen("/sys/kernel/debug/kmemleak", "w");
	if (!f)
		return -1;
	fputs("scan", f);
	fclose(f);
	f = fopen("/sys/kernel/debug/kmemleak", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "unreferenced object"))
			n++;
	fclose(f);
	return n;
}

int main(void)
{
	const char *scale = getenv("UNIQD_SCALE");
	int full = scale && !strcmp(scale, "full");
	int round, p, st, rc, fd, races = full ? 10 : 3, leaks0 = -1;
	char out[1024];
	struct uniqd_version v;
	struct uniqd_attach a;
	pid_t pids[MAXP];
	double t0 = ut_now();
	FILE *f;

	th_init("module_lifecycle");
	nproc = full ? 6 : 3;
	nkeys = full ? 6000 : 1000;
	printf("# scale %s: %d rounds of %d processes x %d shared + %d own keys; %d racing rounds\n",
	       full ? "full" : "quick", ROUNDS, nproc, nkeys, nkeys / 2, races);
	f = fopen("/etc/uniqd-module-params", "r");
	if (f) {
		if (!fgets(params, sizeof(params), f))
			params[0] = 0;
		fclose(f);
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = ut_open();
	memset(&v, 0, sizeof(v));
	th_case("setup") {
		CHECK(sh != MAP_FAILED, "mmap");
		CHECK(loaded(), "uniqd is not loaded");
		CHECK_OK(ioctl(fd, UNIQD_IOC_VERSION, &v));
	}
	close(fd);
	if (sh == MAP_FAILED || !v.max_key_len)
		return th_finish();
	max_key_len = v.max_key_len;
	leaks0 = kmemleak_count();

	th_case("ten rounds: heavy use, close all, rmmod, insmod") {
		for (round = 0; round < ROUNDS; round++) {
			memset(sh, 0, sizeof(*sh));
			/* The shared pool lives for the round: we hold it. */
			fd = ut_pool("life-shared", UNIQD_ATTACH_NEW);
			CHECK(fd >= 0, "round %d: shared pool: %s", round, strerror(errno));
			fflush(stdout);
			for (p = 0; p < nproc; p++) {
				pids[p] = fork();
				if (!pids[p])
					user(round, p);
			}
			for (p = 0; p < nproc; p++) {
				CHECK(waitpid(pids[p], &st, 0) == pids[p] && WIFEXITED(st) &&
				      !WEXITSTATUS(st), "round %d process %d: %#x: %s", round,
				      p, st, sh->why[p]);
			}
			for (p = 1; p < nproc; p++)
				CHECK(!memcmp(sh->handle[p], sh->handle[0],
					      nkeys * sizeof(__u64)),
				      "round %d: process %d got other shared handles", round, p);
			close(fd);
			/* Every file is closed: nothing holds the module. */
			CHECK(refcnt() == 0, "round %d: refcnt %d", round, refcnt());
			rc = do_rmmod(out, sizeof(out));
			CHECK(rc == 0, "round %d: rmmod: %d: %s", round, rc, out);
			CHECK(!loaded(), "round %d: still loaded after rmmod", round);
			CHECK(!wait_device(0), "round %d: /dev/uniqd stayed", round);
			fd = ut_open();
			CHECK(fd < 0, "round %d: opened /dev/uniqd without the module", round);
			if (fd >= 0)
				close(fd);
			if (round == ROUNDS / 2 && leaks0 >= 0) {
				int n = kmemleak_count();

				printf("# kmemleak half-way: %d suspects (%d at the start); "
				       "the VM's init judges at the end\n", n, leaks0);
			}
			rc = do_insmod(out, sizeof(out));
			CHECK(rc == 0, "round %d: insmod: %d: %s", round, rc, out);
			CHECK(loaded() && !wait_device(1), "round %d: no module or device", round);
			/* The new instance is empty and works. */
			fd = ut_open();
			CHECK(fd >= 0, "round %d: open: %s", round, strerror(errno));
			CHECK_ERR(ut_attach(fd, "life-shared", UNIQD_ATTACH_EXISTING), ENOENT);
			CHECK_OK(ut_attach_full(fd, "life-check", UNIQD_ATTACH_NEW, &a));
			CHECK(ut_class(fd, "k") == 1 && ut_s(fd, 1, "alive"), "round %d: use: %s",
			      round, strerror(errno));
			close(fd);
			if (rc || !loaded())
				break;
		}
		printf("# %d rounds in %.1fs\n", round, ut_now() - t0);
	}

	th_case("open and ATTACH racing rmmod and insmod") {
		int r, tries, unloaded = 0;
		pid_t racer_pid;
		__u64 total_tries = 0;

		t0 = ut_now();
		memset(sh, 0, sizeof(*sh));
		fflush(stdout);
		racer_pid = fork();
		if (!racer_pid)
			racer();
		for (r = 0; r < races; r++) {
			/* rmmod until it finds a moment with no file open. */
			for (tries = 0; tries < 500; tries++) {
				if (do_rmmod(NULL, 0) == 0)
					break;
				sleep_ms(tries % 3);
			}
			total_tries += tries + 1;
			if (tries == 500) {
				/* Never found a gap: still a valid run, just no race. */
				continue;
			}
			unloaded++;
			sleep_ms(20);
			rc = do_insmod(out, sizeof(out));
			CHECK(rc == 0, "insmod: %d: %s", rc, out);
			sleep_ms(20);
		}
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
		CHECK(waitpid(racer_pid, &st, 0) == racer_pid && WIFEXITED(st) &&
		      !WEXITSTATUS(st), "racer: %#x", st);
		CHECK(!sh->undocumented, "racer: %llu unexpected errors, first %s",
		      (unsigned long long)sh->undocumented, strerror(sh->bad_errno));
		if (!loaded()) {
			rc = do_insmod(out, sizeof(out));
			CHECK(rc == 0, "final insmod: %d: %s", rc, out);
		}
		CHECK(loaded() && !wait_device(1), "the module is not back");
		fd = ut_open();
		CHECK(fd >= 0 && !ut_attach(fd, "life-final", UNIQD_ATTACH_NEW) &&
		      ut_class(fd, "k") == 1 && ut_s(fd, 1, "alive"), "final use: %s",
		      strerror(errno));
		close(fd);
		printf("# racing: %d of %d rmmods went through between the racer's files "
		       "(%llu attempts); the racer opened %llu times, %llu refused, %llu attached; %.1fs\n",
		       unloaded, races, (unsigned long long)total_tries,
		       (unsigned long long)sh->opens, (unsigned long long)sh->open_fail,
		       (unsigned long long)sh->attached, ut_now() - t0);
	}

	/* Whatever happened: leave the module loaded for the VM's init. */
	if (!loaded())
		do_insmod(out, sizeof(out));
	return th_finish();
}
