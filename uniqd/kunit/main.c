// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd_kunit.ko: KUnit suites for uniqd. They run when the module is
 * loaded (after uniqd.ko, which registers the "blake3" shash) and print
 * KTAP to the kernel log. See Documentation/debug-kernel.rst.
 *
 * The tables, the map, pools, classes, entries, keys and the module parameters
 * are compiled into this module from uniqd's own sources (src_*.c), so this
 * module has its own registry of pools and its own parameters (with
 * uniqd.ko's defaults), separate from uniqd.ko's and from /dev/uniqd.
 */
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched/task.h>

#include "map.h"
#include "pool.h"
#include "uniqd_kunit.h"

struct uk_thread {
	struct completion *go;
	int (*fn)(unsigned int i, void *data);
	void *data;
	unsigned int i;
	int ret;
	struct completion done;
};

/*
 * kthread_stop() on a kthread that has not yet run never runs its function
 * (-EINTR), so each thread reports through th->done and then waits to be
 * stopped.
 */
static int uk_thread_main(void *arg)
{
	struct uk_thread *th = arg;

	wait_for_completion(th->go);
	th->ret = th->fn(th->i, th->data);
	complete(&th->done);
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

int uk_run_threads(unsigned int n, int (*fn)(unsigned int i, void *data),
		   void *data)
{
	struct task_struct *task[UK_MAX_THREADS];
	struct uk_thread th[UK_MAX_THREADS];
	DECLARE_COMPLETION_ONSTACK(go);
	unsigned int i, started = 0;
	int ret = 0, r;

	if (WARN_ON(n > UK_MAX_THREADS))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		th[i] = (struct uk_thread){ .go = &go, .fn = fn, .data = data,
					    .i = i };
		init_completion(&th[i].done);
		task[i] = kthread_create(uk_thread_main, &th[i], "uniqd-kunit/%u",
					 i);
		if (IS_ERR(task[i])) {
			ret = PTR_ERR(task[i]);
			break;
		}
		/* kthread_stop() below needs the task even after it returned. */
		get_task_struct(task[i]);
		wake_up_process(task[i]);
		started++;
	}
	/* Released together (if one could not be created, the rest still run). */
	complete_all(&go);
	for (i = 0; i < started; i++) {
		wait_for_completion(&th[i].done);
		kthread_stop(task[i]);
		put_task_struct(task[i]);
		r = th[i].ret;
		if (r && !ret)
			ret = r;
	}
	return ret;
}

/* This module's copy of map.c frees given-back index arrays from its queue. */
static int __init uniqd_kunit_init(void)
{
	return uniqd_map_wq_init();
}
module_init(uniqd_kunit_init);

static void __exit uniqd_kunit_exit(void)
{
	uniqd_map_wq_exit();
	uniqd_pools_exit();
}
module_exit(uniqd_kunit_exit);

MODULE_DESCRIPTION("KUnit suites for uniqd");
MODULE_AUTHOR("The uniqd developers");
MODULE_LICENSE("GPL");
