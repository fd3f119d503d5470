// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd_kunit.ko: KUnit suites for uniqd. They run when the module is
 * loaded (after uniqd.ko, which registers the "blake3" shash) and print
 * KTAP to the kernel log. See Documentation/debug-kernel.rst.
 *
 * The tables, the arena, pools, classes and keys are compiled into this
 * module from uniqd's own sources (src_*.c), so this module has its own
 * registry of pools, separate from uniqd.ko's and from /dev/uniqd.
 */
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>

#include "uniqd.h"
#include "uniqd_kunit.h"

/*
 * The module parameters the code under test reads (uniqd.h), with uniqd.ko's
 * defaults (main.c). A parameter added there must be added here too, or
 * modpost fails: "uniqd_... [uniqd_kunit.ko] undefined".
 */
unsigned int uniqd_max_pools = 1024;
unsigned int uniqd_max_user_pools = 128;
unsigned long long uniqd_max_pool_bytes = 1ULL << 30;
unsigned long long uniqd_max_pool_entries = 1ULL << 24;
unsigned int uniqd_max_pool_classes = 4096;
unsigned int uniqd_max_key_len = 65536;

struct uk_thread {
	struct completion *go;
	int (*fn)(unsigned int i, void *data);
	void *data;
	unsigned int i;
};

static int uk_thread_main(void *arg)
{
	struct uk_thread *th = arg;

	wait_for_completion(th->go);
	return th->fn(th->i, th->data);
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
		th[i] = (struct uk_thread){ &go, fn, data, i };
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
		r = kthread_stop(task[i]);
		put_task_struct(task[i]);
		if (r && !ret)
			ret = r;
	}
	return ret;
}

/* Old table arrays are freed by RCU callbacks in this module's text. */
static void __exit uniqd_kunit_exit(void)
{
	rcu_barrier();
}
module_exit(uniqd_kunit_exit);

MODULE_DESCRIPTION("KUnit suites for uniqd");
MODULE_AUTHOR("The uniqd developers");
MODULE_LICENSE("GPL");
