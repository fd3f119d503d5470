// SPDX-License-Identifier: GPL-2.0
/*
 * The fork-and-wait harness of the multi-process benchmarks: see ubench.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ubench.h"

/* ---- processes started together ---------------------------------------- */

uint64_t ub_procs_run(const struct ub_procs *pr, void *res)
{
	/* The result, then a status byte: 'k' or 'f'. */
	size_t msg = pr->res_size + 1;
	char *buf = ub_alloc(msg);
	pid_t *pid = ub_alloc(pr->n * sizeof(*pid));
	int go[2], done[2];
	uint64_t t0, t1;
	unsigned int p;
	bool ok = true;

	if (pipe(go) || pipe(done))
		ub_die("pipe: %s", strerror(errno));
	for (p = 0; p < pr->n; p++) {
		pid[p] = fork();
		if (pid[p] < 0)
			ub_die("fork: %s", strerror(errno));
		if (!pid[p]) {
			char c;
			int ret;

			close(go[1]);
			close(done[0]);
			if (pr->setup && pr->setup(p, pr->arg))
				_exit(2);
			if (read(go[0], &c, 1) != 1)
				_exit(2);
			ret = pr->run(p, pr->arg, buf);
			buf[pr->res_size] = ret ? 'f' : 'k';
			if (write(done[1], buf, msg) != (ssize_t)msg)
				_exit(2);
			_exit(ret ? 1 : 0);
		}
	}
	close(go[0]);
	close(done[1]);
	/* Let the children settle into read() before the start. */
	usleep(50000);
	t0 = ub_now();
	for (p = 0; p < pr->n; p++)
		if (write(go[1], "g", 1) != 1)
			ok = false;
	for (p = 0; p < pr->n; p++) {
		if (read(done[0], buf, msg) != (ssize_t)msg || buf[pr->res_size] != 'k')
			ok = false;
		else if (pr->res_size)
			memcpy((char *)res + p * pr->res_size, buf, pr->res_size);
	}
	t1 = ub_now();
	close(go[1]);
	close(done[0]);
	for (p = 0; p < pr->n; p++) {
		int st;

		waitpid(pid[p], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			ok = false;
	}
	free(pid);
	free(buf);
	return ok ? t1 - t0 : 0;
}
