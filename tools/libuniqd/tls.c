// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: the per-thread state (struct uq_tls in internal.h), the
 * thread's cache made on first use, and the pthread key whose destructor
 * frees the heap parts (the cache, the error record) when a thread exits.
 *
 * The TLS model is the compiler's default for -fPIC (one __tls_get_addr()
 * call in the shared library, relaxed to local-exec once linked into a
 * program), never initial-exec, so that the library can be dlopen()ed. The
 * fast paths make one such access per call: they take &uq_tls once and pass
 * it on. TLS descriptors (-mtls-dialect=gnu2) saved at most 2 instructions
 * of about 190 per cache hit, and glibc before 2.40 does not preserve the
 * vector registers in their dynamic path on x86-64 (sourceware bug 31372):
 * not worth it (Documentation/libuniqd.rst, "Loading with dlopen()").
 */
#include <stdlib.h>

#include "cache.h"

__thread struct uq_tls uq_tls;

static pthread_key_t uq_tls_key;
static pthread_once_t uq_tls_once = PTHREAD_ONCE_INIT;
static bool uq_tls_key_ok;

/*
 * Runs at thread exit with the thread's own uq_tls. A later key destructor
 * (another library's) may call us again and re-arm it; glibc then runs
 * this once more (up to PTHREAD_DESTRUCTOR_ITERATIONS).
 */
static void uq_tls_destroy(void *arg)
{
	struct uq_tls *t = arg;

	uq_cache_free(t->cache);
	t->cache = NULL;
	free(t->last);
	t->last = NULL;
	t->registered = false;
}

static void uq_tls_key_init(void)
{
	uq_tls_key_ok = !pthread_key_create(&uq_tls_key, uq_tls_destroy);
}

bool uq_tls_register(struct uq_tls *t)
{
	if (t->registered)
		return true;
	pthread_once(&uq_tls_once, uq_tls_key_init);
	if (!uq_tls_key_ok || pthread_setspecific(uq_tls_key, t))
		return false;
	t->registered = true;
	return true;
}

struct uq_cache *uq_tls_cache(struct uq_tls *t)
{
	if (!uq_tls_register(t))
		return NULL;	/* without a destructor, the cache would leak */
	t->cache = uq_cache_new();
	return t->cache;
}
