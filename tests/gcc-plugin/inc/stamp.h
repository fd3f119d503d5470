/* SPDX-License-Identifier: GPL-2.0 */
/* A names-only difference, as glibc's struct tm has (tm_gmtoff or
 * __tm_gmtoff by feature macros): the same ABI under two spellings. */
#ifndef STAMP_H
#define STAMP_H

struct stamp {
	long sec;
#ifdef STAMP_PUBLIC
	long zone_off;
#else
	long __zone_off;
#endif
};

long stamp_sec(const struct stamp *s);

#endif
