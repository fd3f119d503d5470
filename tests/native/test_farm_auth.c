// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd-farm and Redis AUTH, against one Debian redis-server on loopback
 * started here with requirepass and an ACL user: the cluster client
 * (tools/farm/cluster.c) sends AUTH pass (the default user) or AUTH user
 * pass on each connection and says NOAUTH/WRONGPASS clearly; the
 * uniqd-farm program takes --user, --pass and REDISCLI_AUTH as redis-cli
 * does, and answers --help (standard output, exit 0) and --version.
 * uniqd-farm is $UNIQD_FARM, else the build's.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lib/ut_host.h"
#include "cluster.h"

#ifndef UNIQD_FARM
#define UNIQD_FARM "build/bin/uniqd-farm"
#endif

static char dir[] = "/tmp/uniqd-farm-auth.XXXXXX";
static int port;
static pid_t pid;

static const char *farm(void)
{
	return getenv("UNIQD_FARM") ? getenv("UNIQD_FARM") : UNIQD_FARM;
}

/* uniqd-farm ARGS (a shell word list) with ENV before it: its exit status;
 * its stdout and stderr in dir/out and dir/err. */
static int run_farm(const char *env, const char *args)
{
	return ut_sh("env -u REDISCLI_AUTH %s '%s' %s >%s/out 2>%s/err", env, farm(), args, dir, dir);
}

static int file_has(const char *name, const char *s)
{
	char path[256], buf[8192];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return ut_read_file(path, buf, sizeof(buf)) >= 0 && strstr(buf, s) != NULL;
}

static int file_empty(const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !stat(path, &st) && st.st_size == 0;
}

int main(void)
{
	struct fc_cluster cl;
	char seed[64], args[512];
	int ok = 0;

	th_init("farm_auth");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	port = 21000 + (int)(getpid() % 4000) * 3 + 2;
	snprintf(seed, sizeof(seed), "127.0.0.1:%d", port);
	pid = fork();
	if (!pid) {
		char p[16];

		snprintf(p, sizeof(p), "%d", port);
		if (chdir(dir))
			_exit(127);
		/* Loopback only; the default user's password, and an ACL user. */
		execlp("redis-server", "redis-server", "--port", p, "--bind", "127.0.0.1",
		       "--save", "", "--appendonly", "no", "--logfile", "redis.log",
		       "--requirepass", "s3cret pass", "--user", "builder", "on", ">b-pw",
		       "~uniqd:*", "~k*", "+@all", (char *)NULL);
		_exit(127);
	}
	for (int t = 0; t < 50 && !ok; t++) {
		ok = !ut_sh("REDISCLI_AUTH='s3cret pass' redis-cli -p %d ping 2>/dev/null | grep -q PONG",
			 port);
		if (!ok)
			usleep(100000);
	}

	th_case("redis-server with requirepass and an ACL user") {
		CHECK(ok, "redis-server did not start (see %s/redis.log)", dir);
	}
	if (!ok)
		goto out;

	th_case("no password: NOAUTH, said") {
		CHECK(fc_connect(&cl, seed, NULL, NULL) == -1, "connected without a password");
		CHECK(strstr(cl.err, "NOAUTH"), "%s", cl.err);
		fc_close(&cl);
	}

	th_case("the default user's password: AUTH pass, then commands") {
		struct fc_cmd c[2] = {
			{ .argc = 3, .argv = { "SET", "k1", "v1" }, .argvlen = { 3, 2, 2 } },
			{ .argc = 2, .argv = { "GET", "k1" }, .argvlen = { 3, 2 } },
		};

		CHECK(fc_connect(&cl, seed, NULL, "s3cret pass") == 0, "%s", cl.err);
		CHECK(fc_run(&cl, c, 1) == 0 && fc_run(&cl, c + 1, 1) == 0, "%s", cl.err);
		CHECK(c[1].reply && c[1].reply->type == REDIS_REPLY_STRING &&
		      !strcmp(c[1].reply->str, "v1"), "GET k1");
		fc_cmds_free(c, 2);
		fc_close(&cl);
	}

	th_case("an ACL user: AUTH user pass; a wrong one: WRONGPASS") {
		struct fc_cmd c = { .argc = 2, .argv = { "GET", "k1" }, .argvlen = { 3, 2 } };

		CHECK(fc_connect(&cl, seed, "builder", "b-pw") == 0, "%s", cl.err);
		CHECK(fc_run(&cl, &c, 1) == 0 && c.reply && c.reply->type == REDIS_REPLY_STRING,
		      "%s", cl.err);
		fc_cmds_free(&c, 1);
		fc_close(&cl);
		CHECK(fc_connect(&cl, seed, "builder", "wrong") == -1, "connected with a wrong password");
		CHECK(strstr(cl.err, "AUTH as builder") && strstr(cl.err, "WRONGPASS"), "%s", cl.err);
		fc_close(&cl);
	}

	th_case("uniqd-farm --help, --version, usage") {
		CHECK(run_farm("", "--help") == 0 && file_has("out", "usage: uniqd-farm") &&
		      file_has("out", "--user") && file_has("out", "REDISCLI_AUTH") && file_empty("err"),
		      "--help");
		CHECK(run_farm("", "--version") == 0 && file_has("out", "uniqd-farm "), "--version");
		CHECK(run_farm("", "bogus") == 2 && file_has("err", "usage:") && file_empty("out"),
		      "a usage error");
		CHECK(run_farm("", "--user builder push m1") == 2 &&
		      file_has("err", "needs a password"), "--user without a password");
	}

	/* Past AUTH, push stops at the pool: no /dev/uniqd here (or no such
	 * pool), a uniqd error and not a Redis one. */
	th_case("uniqd-farm: no password, --pass, REDISCLI_AUTH, --user") {
		snprintf(args, sizeof(args), "-s %s -p farm-auth-absent push m1", seed);
		CHECK(run_farm("", args) == 3 && file_has("err", "NOAUTH") &&
		      file_has("err", "--pass, or REDISCLI_AUTH"), "without a password");
		snprintf(args, sizeof(args), "-s %s -p farm-auth-absent --pass 's3cret pass' push m1",
			 seed);
		CHECK(run_farm("", args) == 3 && !file_has("err", "AUTH"), "--pass");
		snprintf(args, sizeof(args), "-s %s -p farm-auth-absent push m1", seed);
		CHECK(run_farm("REDISCLI_AUTH='s3cret pass'", args) == 3 && !file_has("err", "AUTH"),
		      "REDISCLI_AUTH");
		snprintf(args, sizeof(args), "-s %s -p farm-auth-absent --user builder -a b-pw push m1",
			 seed);
		CHECK(run_farm("", args) == 3 && !file_has("err", "AUTH"), "--user builder -a");
		snprintf(args, sizeof(args), "-s %s -p farm-auth-absent --user builder push m1", seed);
		CHECK(run_farm("REDISCLI_AUTH=nope", args) == 3 && file_has("err", "WRONGPASS"),
		      "a wrong REDISCLI_AUTH");
	}

out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ut_sh("rm -rf %s", dir);
	return th_finish();
}
