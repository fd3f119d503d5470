// SPDX-License-Identifier: GPL-2.0
/*
 * `uniqdctl snapshot info` and `uniqdctl snapshot verify` on the host, with
 * no /dev/uniqd: a snapshot that libuniqd's uniqd_save() writes from a pool
 * of the fake device (fake/uniqd_fake.c), then corrupted copies of it
 * (a flipped byte, truncated, no magic, another version and a bad header
 * behind good checksums). uniqdctl is $UNIQDCTL, else build/bin/uniqdctl.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blake3.h"
#include "fake/uniqd_fake.h"
#include "harness.h"
#include "libuniqd.h"

#ifndef UNIQDCTL
#define UNIQDCTL "build/bin/uniqdctl"
#endif

static char dir[] = "/tmp/uniqd-snapcli.XXXXXX";

struct run {
	int status;
	char out[16384];
	char err[4096];
};

static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* uniqdctl ARGS... with no device: its exit status, stdout and stderr. */
static int ctl(struct run *r, const char *a1, const char *a2, const char *a3, const char *a4)
{
	const char *bin = getenv("UNIQDCTL") ? getenv("UNIQDCTL") : UNIQDCTL;
	char out[4200], err[4200];
	pid_t pid;
	int st;

	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	pid = fork();
	if (pid == 0) {
		const char *argv[] = { bin, "--device", "/nonexistent/uniqd", a1, a2, a3, a4, NULL };

		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(126);
		execv(bin, (char **)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return r->status = -1;
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
	return r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static unsigned char *file;
static size_t file_len;

/* A copy of the snapshot as PATH, changed by FN. */
static const char *variant(const char *name, size_t len, void (*fn)(unsigned char *, size_t *))
{
	static char path[4200];
	unsigned char *b = malloc(file_len + 16);
	size_t n = len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memcpy(b, file, file_len);
	if (fn)
		fn(b, &n);
	f = fopen(path, "w");
	if (f) {
		fwrite(b, 1, n, f);
		fclose(f);
	}
	free(b);
	return path;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* The checksum made good again after a change. */
static void resum(unsigned char *b, size_t *n)
{
	uniqd_blake3_hash(NULL, b, *n - 32, b + *n - 32, 32);
}

static void flip(unsigned char *b, size_t *n)
{
	b[*n / 2] ^= 0x40;
}

static void nomagic(unsigned char *b, size_t *n)
{
	(void)n;
	memcpy(b, "notasnap", 8);
}

static void version2(unsigned char *b, size_t *n)
{
	put32(b + 8, 2);
	resum(b, n);
}

static void badflags(unsigned char *b, size_t *n)
{
	put32(b + 16, 1);
	resum(b, n);
}

int main(void)
{
	static struct run r;
	char path[4200];
	uniqd_pool *p;
	uint32_t ident, odd;
	int fd;

	th_init("snapshot-cli");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/pool.snap", dir);

	th_case("libuniqd writes a snapshot of a fake pool") {
		fk_map = 1;	/* uniqd_save() reads the mapped pool */
		p = uniqd_open("snap \"cli\"", 0);
		CHECK(p, "%s", uniqd_last_error());
		ident = uniqd_class(p, "gcc.ident");
		odd = uniqd_class(p, "bytes\xff");
		CHECK(ident && odd, "%s", uniqd_last_error());
		for (int i = 0; i < 100; i++) {
			char k[32];

			snprintf(k, sizeof(k), "name%03d", i);
			CHECK(uniqd_intern_str(p, ident, k), "%s", uniqd_last_error());
		}
		CHECK(uniqd_intern(p, odd, "\x00\xfe\n", 3), "%s", uniqd_last_error());
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && !uniqd_save(p, fd, 0, NULL), "%s", uniqd_last_error());
		if (fd >= 0)
			close(fd);
		uniqd_close(p);
		fd = open(path, O_RDONLY);
		file = malloc(1 << 20);
		file_len = fd >= 0 ? (size_t)read(fd, file, 1 << 20) : 0;
		if (fd >= 0)
			close(fd);
		/* 80 + 10 + 4 * 2 + 9 + 6 + 8 * 101 + 100 * 7 + 3 + 32 */
		CHECK(file_len == 1656, "%zu bytes", file_len);
	}

	th_case("verify: a sound snapshot, exit 0, no device") {
		CHECK(ctl(&r, "snapshot", "verify", path, NULL) == 0, "status %d: %s", r.status, r.err);
		CHECK(strstr(r.out, "a sound uniqd snapshot of pool 'snap \"cli\"' (id ") &&
		      strstr(r.out, "2 classes, 101 entries, 703 content bytes; BLAKE3 checksum verified"),
		      "%s", r.out);
		CHECK(!r.err[0], "%s", r.err);
	}

	th_case("info: header, pool, counts, classes, checksum") {
		CHECK(ctl(&r, "snapshot", "info", path, NULL) == 0, "status %d: %s", r.status, r.err);
		CHECK(strstr(r.out, "  format:   uniqd snapshot version 1, 1656 bytes\n") &&
		      strstr(r.out, "  counts:   2 classes (15 name bytes), 101 entries (703 content bytes)\n") &&
		      strstr(r.out, "  class 1 'gcc.ident': 100 entries, 700 content bytes\n") &&
		      strstr(r.out, "  class 2 'bytes\\xff': 1 entries, 3 content bytes\n") &&
		      strstr(r.out, ", verified\n"), "%s", r.out);
	}

	th_case("info --json: one object, the checksum, the classes") {
		char sum[80] = "\"checksum\":\"blake3:";

		for (int i = 0; i < 32; i++)
			snprintf(sum + 19 + 2 * i, 3, "%02x", file[file_len - 32 + i]);
		CHECK(ctl(&r, "--json", "snapshot", "info", path) == 0, "status %d: %s", r.status,
		      r.err);
		CHECK(!strncmp(r.out, "{\"file\":\"", 9) && strstr(r.out, "\"sound\":true,\"version\":1,"
		      "\"pool\":\"snap \\\"cli\\\"\",") && strstr(r.out, "\"entries\":101,") &&
		      strstr(r.out, sum) &&
		      strstr(r.out, "{\"id\":2,\"name\":\"bytes\\u00ff\",\"entries\":1,\"content_bytes\":3}") &&
		      !strcmp(r.out + strlen(r.out) - 3, "]}\n"), "%s", r.out);
	}

	th_case("standard input") {
		char cmd[8400];

		snprintf(cmd, sizeof(cmd), "%s snapshot verify - < '%s' > /dev/null 2>&1",
			 getenv("UNIQDCTL") ? getenv("UNIQDCTL") : UNIQDCTL, path);
		CHECK(system(cmd) == 0, "%s", cmd);
	}

	static const struct {
		const char *name;
		int cut;	/* bytes cut from the end */
		void (*fn)(unsigned char *, size_t *);
		const char *why;
		const char *errname;
	} bad[] = {
		{ "flipped", 0, flip, "checksum mismatch (corrupt or truncated), at byte 1624", "EBADMSG" },
		{ "truncated", 100, NULL, "checksum mismatch (corrupt or truncated), at byte 1524", "EBADMSG" },
		{ "tiny", 1646, NULL, "truncated, at byte 10", "EBADMSG" },
		{ "no-magic", 0, nomagic, "not a uniqd snapshot (no magic), at byte 0", "EBADMSG" },
		{ "version-2", 0, version2, "another format version, at byte 8", "EPROTONOSUPPORT" },
		{ "bad-flags", 0, badflags, "unknown flags, at byte 16", "EBADMSG" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char name[64];
		const char *v = variant(bad[i].name, file_len - (size_t)bad[i].cut, bad[i].fn);

		snprintf(name, sizeof(name), "refused.%s", bad[i].name);
		th_case(name) {
			CHECK(ctl(&r, "snapshot", "verify", v, NULL) == 1, "status %d: %s", r.status,
			      r.err);
			CHECK(!r.out[0] && strstr(r.err, bad[i].why) && strstr(r.err, bad[i].errname) &&
			      strstr(r.err, "verify a snapshot"), "%s", r.err);
			CHECK(ctl(&r, "--json", "snapshot", "info", v) == 1, "status %d", r.status);
			CHECK(strstr(r.out, "\"sound\":false,\"error\":{") &&
			      strstr(r.out, bad[i].errname), "%s", r.out);
		}
	}

	th_case("usage and unreadable files") {
		CHECK(ctl(&r, "snapshot", "check", path, NULL) == 2, "status %d", r.status);
		CHECK(ctl(&r, "snapshot", "verify", NULL, NULL) == 2, "status %d", r.status);
		CHECK(ctl(&r, "snapshot", "verify", "/nonexistent/x.snap", NULL) == 3 &&
		      strstr(r.err, "No such file"), "status %d: %s", r.status, r.err);
	}

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		fprintf(stderr, "could not remove %s\n", dir);
	return th_finish();
}
