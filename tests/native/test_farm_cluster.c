// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd-farm's Redis Cluster client (tools/farm/cluster.c) against a real
 * cluster of three Debian redis-server nodes on loopback, started here:
 * its slot hash agrees with CLUSTER KEYSLOT (hash tags too), commands for
 * every node are routed and answered from any seed node, a stale slot
 * table is corrected by MOVED, a killed node gives a clear error in bounded
 * time, and the same command succeeds once the node is back (its data kept
 * by its append-only file).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "lib/ut_host.h"
#include "cluster.h"

#define NODES	3
#define KEYS	3000

static char dir[] = "/tmp/uniqd-farm-test.XXXXXX";
static int port0;
static pid_t pids[NODES];

static pid_t start_node(int i)
{
	char port[16], sub[256];
	pid_t pid;

	snprintf(sub, sizeof(sub), "%s/%d", dir, i);
	mkdir(sub, 0700);
	snprintf(port, sizeof(port), "%d", port0 + i);
	pid = fork();
	if (!pid) {
		if (chdir(sub))
			_exit(127);
		execlp("redis-server", "redis-server", "--port", port,
		       "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		       "--cluster-config-file", "nodes.conf",
		       "--cluster-node-timeout", "2000", "--appendonly", "yes",
		       "--appendfsync", "always", "--save", "",
		       "--logfile", "redis.log", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Waits (10 s at most) until node @i says the cluster is ok. */
static int cluster_ok(int i)
{
	for (int t = 0; t < 100; t++) {
		if (!ut_sh("redis-cli -p %d cluster info 2>/dev/null | grep -q '^cluster_state:ok'",
			port0 + i))
			return 1;
		usleep(100000);
	}
	return 0;
}

static int pings(int i)
{
	for (int t = 0; t < 50; t++) {
		if (!ut_sh("redis-cli -p %d ping >/dev/null 2>&1", port0 + i))
			return 1;
		usleep(100000);
	}
	return 0;
}

static void stop_all(void)
{
	for (int i = 0; i < NODES; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	ut_sh("rm -rf %s", dir);
}

static char keys[KEYS][32];

static void set_cmds(struct fc_cmd *cmds, const char *verb)
{
	for (int i = 0; i < KEYS; i++) {
		snprintf(keys[i], sizeof(keys[i]), i % 7 ? "k:%d" : "k:{tag}:%d", i);
		if (!strcmp(verb, "SET"))
			cmds[i] = (struct fc_cmd){ .argc = 3, .argv = { "SET", keys[i], keys[i] },
				.argvlen = { 3, strlen(keys[i]), strlen(keys[i]) } };
		else
			cmds[i] = (struct fc_cmd){ .argc = 2, .argv = { "GET", keys[i] },
				.argvlen = { 3, strlen(keys[i]) } };
	}
}

static int all_got(struct fc_cmd *cmds)
{
	for (int i = 0; i < KEYS; i++)
		if (!cmds[i].reply || cmds[i].reply->type != REDIS_REPLY_STRING ||
		    strcmp(cmds[i].reply->str, keys[i]))
			return 0;
	return 1;
}

int main(void)
{
	static struct fc_cmd cmds[KEYS];
	struct fc_cluster cl;
	char seed[64];
	int ok = 1, nodes_used[NODES] = { 0 };

	th_init("farm_cluster");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	/* A port range of our own, so parallel runs do not meet. */
	port0 = 21000 + (int)(getpid() % 4000) * 3;
	for (int i = 0; i < NODES; i++) {
		pids[i] = start_node(i);
		ok &= pids[i] > 0 && pings(i);
	}
	th_case("three redis-server nodes form a cluster") {
		CHECK(ok, "a node did not start (is redis-server installed? tools/deps.sh)");
		if (ok)
			ok = !ut_sh("redis-cli --cluster create 127.0.0.1:%d 127.0.0.1:%d 127.0.0.1:%d "
				 "--cluster-replicas 0 --cluster-yes >%s/create.log 2>&1",
				 port0, port0 + 1, port0 + 2, dir) && cluster_ok(0) &&
			     cluster_ok(1) && cluster_ok(2);
		CHECK(ok, "redis-cli --cluster create: see %s/create.log", dir);
	}
	if (!ok) {
		stop_all();
		return th_finish();
	}

	th_case("the slot hash agrees with CLUSTER KEYSLOT") {
		static const char *const k[] = { "a", "uniqd:e:00ff", "{user1000}.following",
			"foo{}{bar}", "foo{{bar}}zap", "{}x", "uniqd:m:{m1/default}",
			"123456789" };
		char cmd[256];

		for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
			FILE *f;
			unsigned int want = 99999;

			snprintf(cmd, sizeof(cmd), "redis-cli -p %d cluster keyslot '%s'", port0, k[i]);
			f = popen(cmd, "r");
			if (!f || fscanf(f, "%u", &want) != 1)
				want = 99999;
			if (f)
				pclose(f);
			CHECK(fc_slot(k[i], strlen(k[i])) == want, "%s: %u, redis %u", k[i],
			      fc_slot(k[i], strlen(k[i])), want);
		}
		/* The specification's example: "123456789" is 0x31c3 before the modulo. */
		CHECK(fc_slot("123456789", 9) == (0x31c3 % 16384), "123456789");
	}

	th_case("commands for every node, from any seed") {
		snprintf(seed, sizeof(seed), "127.0.0.1:%d", port0 + 2);
		CHECK_OK(fc_connect(&cl, seed, NULL, NULL));
		set_cmds(cmds, "SET");
		CHECK_OK(fc_run(&cl, cmds, KEYS));
		for (int i = 0; i < KEYS; i++) {
			CHECK(cmds[i].reply && cmds[i].reply->type == REDIS_REPLY_STATUS,
			      "SET %s", keys[i]);
			nodes_used[cl.owner[cmds[i].slot] % NODES] = 1;
		}
		fc_cmds_free(cmds, KEYS);
		CHECK(nodes_used[0] && nodes_used[1] && nodes_used[2], "not every node was used");
		fc_close(&cl);
		snprintf(seed, sizeof(seed), "127.0.0.1:%d", port0);
		CHECK_OK(fc_connect(&cl, seed, NULL, NULL));
		set_cmds(cmds, "GET");
		CHECK_OK(fc_run(&cl, cmds, KEYS));
		CHECK(all_got(cmds), "a GET did not return its SET");
		fc_cmds_free(cmds, KEYS);
	}

	th_case("a stale slot table is corrected by MOVED") {
		for (int s = 0; s < 16384; s++)
			cl.owner[s] = 0;
		set_cmds(cmds, "GET");
		CHECK_OK(fc_run(&cl, cmds, KEYS));
		CHECK(all_got(cmds), "a GET through MOVED did not return its SET");
		fc_cmds_free(cmds, KEYS);
	}

	th_case("a killed node: a clear error in bounded time, then retried") {
		time_t t0 = time(NULL);
		int rc;

		kill(pids[1], SIGKILL);
		waitpid(pids[1], NULL, 0);
		pids[1] = 0;
		set_cmds(cmds, "GET");
		rc = fc_run(&cl, cmds, KEYS);
		CHECK(rc == -1, "fc_run with a node down returned %d", rc);
		CHECK(strstr(cl.err, "127.0.0.1") || strstr(cl.err, "CLUSTERDOWN"),
		      "the error says nothing: '%s'", cl.err);
		CHECK(time(NULL) - t0 < 30, "gave up after %ld s", (long)(time(NULL) - t0));
		printf("# with a node down: %s\n", cl.err);
		fc_cmds_free(cmds, KEYS);
		pids[1] = start_node(1);
		CHECK(pings(1) && cluster_ok(0) && cluster_ok(1), "node 1 did not come back");
		set_cmds(cmds, "GET");
		CHECK_OK(fc_run(&cl, cmds, KEYS));
		CHECK(all_got(cmds), "the node came back without its keys");
		fc_cmds_free(cmds, KEYS);
	}
	fc_close(&cl);
	stop_all();
	return th_finish();
}
