// SPDX-License-Identifier: GPL-2.0
/*
 * Linked into build/gcc-plugin/uniqd_fake.so only: the plugin with the fake
 * /dev/uniqd of tests/native/fake/ in place of the device, so that
 * tools/testing/plugin-check.sh runs table=uniqd natively. The plugin never
 * creates a pool, so this creates UNIQD_FAKE_POOL (held for the life of
 * the process) when the plugin is loaded; UNIQD_FAKE_MAX_ENTRIES limits
 * it, to make the pool fill up (EDQUOT).
 */
#include <stdlib.h>

#include "fake/uniqd_fake.h"
#include "libuniqd.h"

__attribute__((constructor))
static void fake_pool(void)
{
	const char *name = getenv("UNIQD_FAKE_POOL");
	const char *max = getenv("UNIQD_FAKE_MAX_ENTRIES");

	if (max)
		fk_max_entries = strtoull(max, NULL, 0);
	if (name)
		uniqd_open(name, 0);	/* never closed: the pool lives with cc1 */
}
