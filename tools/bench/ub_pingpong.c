// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of a round trip between two processes over a Unix socket: what
 * any server (Redis) pays per request on top of its own work, and uniqd
 * does not (an ioctl runs in the caller). One byte there and back:
 *
 *   pingpong_samecpu   both processes pinned to CPU 0
 *   pingpong_twocpu    pinned to CPUs 0 and 1
 *   pingpong_free      not pinned
 *
 * Results as "UBENCH op" lines (ops = round trips); the three take turns.
 *
 *   ub_pingpong [rounds]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ubench.h"

struct peer {
	int fd;
	pid_t pid;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (cpu < 0) {
		int i;

		for (i = 0; i < CPU_SETSIZE && i < 64; i++)
			CPU_SET(i, &set);
	} else {
		CPU_SET(cpu, &set);
	}
	sched_setaffinity(0, sizeof(set), &set);
}

/* A child that echoes every byte; we keep one end. */
static void peer_start(struct peer *p, int my_cpu, int its_cpu)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		ub_die("socketpair: %s", strerror(errno));
	p->pid = fork();
	if (p->pid < 0)
		ub_die("fork: %s", strerror(errno));
	if (!p->pid) {
		char c;

		close(sv[0]);
		pin(its_cpu);
		while (read(sv[1], &c, 1) == 1)
			if (write(sv[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	close(sv[1]);
	p->fd = sv[0];
	(void)my_cpu;
}

static int cur_cpu = -2;

static int run(struct peer *p, uint64_t ops)
{
	char c = 'x';

	while (ops--) {
		if (write(p->fd, &c, 1) != 1 || read(p->fd, &c, 1) != 1)
			return -1;
	}
	return 0;
}

/* Our own CPU must match the case: wrap run() to re-pin when needed. */
struct pcase {
	struct peer peer;
	int my_cpu;
};

static int run_case(void *ctx, uint64_t ops)
{
	struct pcase *c = ctx;

	if (cur_cpu != c->my_cpu) {
		pin(c->my_cpu);
		cur_cpu = c->my_cpu;
	}
	return run(&c->peer, ops);
}

int main(int argc, char **argv)
{
	unsigned int rounds = argc > 1 ? atoi(argv[1]) : 5;
	struct pcase same = { .my_cpu = 0 }, two = { .my_cpu = 0 },
		     free_ = { .my_cpu = -1 };
	struct ub_case cases[3] = {
		{ .name = "pingpong_samecpu", .run = run_case, .ctx = &same, .unit = 1 },
		{ .name = "pingpong_twocpu", .run = run_case, .ctx = &two, .unit = 1 },
		{ .name = "pingpong_free", .run = run_case, .ctx = &free_, .unit = 1 },
	};
	int i;

	peer_start(&same.peer, 0, 0);
	peer_start(&two.peer, 0, 1);
	peer_start(&free_.peer, -1, -1);
	ub_compare("op", cases, 3, rounds, 100, 4);
	for (i = 0; i < 3; i++) {
		struct pcase *c = cases[i].ctx;

		/* Siblings hold copies of each other's ends: no EOF, so kill. */
		kill(c->peer.pid, SIGKILL);
		waitpid(c->peer.pid, NULL, 0);
		close(c->peer.fd);
	}
	return 0;
}
