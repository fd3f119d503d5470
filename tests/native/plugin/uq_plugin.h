/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The libuniqd calls tests/native/test_dlopen.c makes, gathered in a table:
 * from dlsym() on libuniqd.so.1, or from the plugin-shaped object.
 */
#ifndef UQ_PLUGIN_H
#define UQ_PLUGIN_H

#include <stddef.h>

struct uniqd_pool;
struct uniqd_limits;

struct uqp_api {
	struct uniqd_pool *(*open_ex)(const char *device, const void *name,
				      size_t name_len, unsigned int flags,
				      const struct uniqd_limits *limits);
	int (*close)(struct uniqd_pool *pool);
	const char *(*last_error)(void);
	const char *(*errname)(int errnum);
	const char *(*strerror)(int errnum);
};

/* The plugin's one export. */
const struct uqp_api *uqp_api(void);

#endif /* UQ_PLUGIN_H */
