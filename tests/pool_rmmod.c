// SPDX-License-Identifier: GPL-2.0
/*
 * The module cannot be unloaded while a file of /dev/uniqd is open (with or
 * without a pool attached). The test does not unload it itself: the VM's
 * init does at the end and reports vm.rmmod.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>

#include "harness.h"
#include "uniqd_test.h"

static int module_loaded(void)
{
	return access("/sys/module/uniqd", F_OK) == 0;
}

int main(void)
{
	int fd, rc;

	th_init("pool_rmmod");

	th_case("rmmod is refused while a file is open") {
		fd = ut_open();
		CHECK(fd >= 0, "open: %s", strerror(errno));
		rc = ut_rmmod();
		CHECK(rc != 0 && rc != 127, "rmmod exit status %d", rc);
		CHECK(module_loaded(), "module gone");
		/* The same through the system call: in use. */
		CHECK_ERR(syscall(SYS_delete_module, "uniqd", O_NONBLOCK),
			  EWOULDBLOCK);
		close(fd);
	}

	th_case("rmmod is refused while a pool is attached") {
		fd = ut_pool("rmmod-pool", 0);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		CHECK(ut_class(fd, "c") == 1, "class");
		CHECK(ut_s(fd, 1, "x"), "intern");
		rc = ut_rmmod();
		CHECK(rc != 0 && rc != 127, "rmmod exit status %d", rc);
		CHECK(module_loaded(), "module gone");
		/* Still working. */
		CHECK(ut_s(fd, 1, "y"), "intern after rmmod attempt");
		close(fd);
	}

	th_case("with every file closed the module is not held") {
		FILE *f = fopen("/sys/module/uniqd/refcnt", "r");
		int refs = -1;

		CHECK(f != NULL, "refcnt: %s", strerror(errno));
		if (f) {
			CHECK(fscanf(f, "%d", &refs) == 1, "read refcnt");
			fclose(f);
		}
		CHECK(refs == 0, "refcnt %d", refs);
	}

	return th_finish();
}
