// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Which BLAKE3 implementation runs: the list, the CPU checks, the forced
 * choice and, in the kernel, the FPU sections around SIMD code.
 *
 * The CPU is asked at run time: in the kernel through boot_cpu_has() and
 * cpu_has_xfeatures() (the instructions and the OS saving their
 * registers), in userspace through __builtin_cpu_supports(), which checks
 * both too. The default is the best usable implementation unless one was
 * forced: by the blake3_impl module parameter in the kernel, by the
 * UNIQD_BLAKE3_IMPL environment variable or uniqd_blake3_impl_force() in
 * userspace.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/simd.h>
#include <crypto/internal/simd.h>
#endif
#else
#include <stdlib.h>
#endif

#include "blake3_impl.h"

#ifdef UNIQD_BLAKE3_X86
#define B3_SIMD_IMPL(isa, n)						\
	static const struct uniqd_blake3_impl b3_impl_##isa = {		\
		.name		= #isa,					\
		.lanes		= n,					\
		.simd		= true,					\
		.compress	= uniqd_blake3_compress_##isa,		\
		.hash_many	= uniqd_blake3_hash_many_##isa,		\
	}
B3_SIMD_IMPL(sse41, 4);
B3_SIMD_IMPL(avx2, 8);
B3_SIMD_IMPL(avx512, 16);
#endif

/* Slowest first: the best usable one is the last usable one. */
static const struct uniqd_blake3_impl *const b3_impls[] = {
	&uniqd_blake3_portable,
#ifdef UNIQD_BLAKE3_X86
	&b3_impl_sse41,
	&b3_impl_avx2,
	&b3_impl_avx512,
#endif
};

#define B3_NR_IMPLS	ARRAY_SIZE(b3_impls)

static const struct uniqd_blake3_impl *b3_default;

/**
 * uniqd_blake3_impl_nth() - the implementations this build has
 * @i: index, from 0 (portable)
 *
 * Return: the @i-th implementation, slowest first, usable by this CPU or
 * not; NULL past the last.
 */
const struct uniqd_blake3_impl *uniqd_blake3_impl_nth(unsigned int i)
{
	return i < B3_NR_IMPLS ? b3_impls[i] : NULL;
}

/**
 * uniqd_blake3_impl_find() - an implementation by name
 * @name: "portable", "sse41", "avx2" or "avx512"
 *
 * Return: the implementation, or NULL if this build has none of that name.
 */
const struct uniqd_blake3_impl *uniqd_blake3_impl_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < B3_NR_IMPLS; i++)
		if (!strcmp(b3_impls[i]->name, name))
			return b3_impls[i];
	return NULL;
}

/**
 * uniqd_blake3_impl_usable() - whether this CPU (and OS) can run @impl
 * @impl: implementation
 *
 * Return: true if it can.
 */
bool uniqd_blake3_impl_usable(const struct uniqd_blake3_impl *impl)
{
	if (!impl->simd)
		return true;
#ifdef UNIQD_BLAKE3_X86
#ifdef __KERNEL__
	if (impl == &b3_impl_sse41)
		return boot_cpu_has(X86_FEATURE_XMM4_1) &&
		       boot_cpu_has(X86_FEATURE_SSSE3);
	if (impl == &b3_impl_avx2)
		return boot_cpu_has(X86_FEATURE_AVX2) &&
		       cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM,
					 NULL);
	if (impl == &b3_impl_avx512)
		return boot_cpu_has(X86_FEATURE_AVX512F) &&
		       boot_cpu_has(X86_FEATURE_AVX512VL) &&
		       cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM |
					 XFEATURE_MASK_AVX512, NULL);
#else
	__builtin_cpu_init();
	if (impl == &b3_impl_sse41)
		return __builtin_cpu_supports("sse4.1") &&
		       __builtin_cpu_supports("ssse3");
	if (impl == &b3_impl_avx2)
		return __builtin_cpu_supports("avx2");
	if (impl == &b3_impl_avx512)
		return __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512vl");
#endif
#endif
	return false;
}

/**
 * uniqd_blake3_impl_best() - the fastest implementation this CPU can run
 *
 * Return: it (at worst the portable one).
 */
const struct uniqd_blake3_impl *uniqd_blake3_impl_best(void)
{
	unsigned int i = B3_NR_IMPLS;

	while (--i)
		if (uniqd_blake3_impl_usable(b3_impls[i]))
			return b3_impls[i];
	return b3_impls[0];
}

/**
 * uniqd_blake3_impl_force() - make @name the default implementation
 * @name: an implementation's name, or "auto" for the best usable one
 *
 * Return: 0; -ENOENT if this build has no such implementation; -ENODEV if
 * this CPU cannot run it (the default is then unchanged).
 */
int uniqd_blake3_impl_force(const char *name)
{
	const struct uniqd_blake3_impl *impl;

	if (!strcmp(name, "auto")) {
		impl = uniqd_blake3_impl_best();
	} else {
		impl = uniqd_blake3_impl_find(name);
		if (!impl)
			return -ENOENT;
		if (!uniqd_blake3_impl_usable(impl))
			return -ENODEV;
	}
#ifdef __KERNEL__
	WRITE_ONCE(b3_default, impl);
#else
	__atomic_store_n(&b3_default, impl, __ATOMIC_RELAXED);
#endif
	return 0;
}

/**
 * uniqd_blake3_impl_default() - the implementation used when none is given
 *
 * The best usable one, unless forced. In userspace the first call reads
 * UNIQD_BLAKE3_IMPL: a name it cannot use selects the portable code, so a
 * test that forces an implementation never silently runs another one.
 *
 * Return: the implementation.
 */
const struct uniqd_blake3_impl *uniqd_blake3_impl_default(void)
{
	const struct uniqd_blake3_impl *impl;

#ifdef __KERNEL__
	impl = READ_ONCE(b3_default);
	if (!impl) {
		impl = uniqd_blake3_impl_best();
		WRITE_ONCE(b3_default, impl);
	}
#else
	const char *env;

	impl = __atomic_load_n(&b3_default, __ATOMIC_RELAXED);
	if (impl)
		return impl;
	env = getenv("UNIQD_BLAKE3_IMPL");
	if (env && uniqd_blake3_impl_force(env))
		uniqd_blake3_impl_force("portable");
	else if (!env)
		uniqd_blake3_impl_force("auto");
	impl = __atomic_load_n(&b3_default, __ATOMIC_RELAXED);
#endif
	return impl;
}

/**
 * uniqd_blake3_simd_begin() - enter a section where @impl's code may run
 * @impl: implementation about to be called
 *
 * In the kernel a SIMD implementation needs the FPU: this returns false
 * where it cannot be used (crypto_simd_usable(): e.g. an interrupt that
 * interrupted a task using it), and the caller runs the portable code
 * instead; otherwise kernel_fpu_begin(), which disables preemption, so the
 * caller bounds the work before uniqd_blake3_simd_end() (one call of
 * compress() or of hash_many(): at most 16 KiB).
 *
 * Return: true if @impl's functions may be called now.
 */
bool uniqd_blake3_simd_begin(const struct uniqd_blake3_impl *impl)
{
	if (!impl->simd)
		return false;
#if defined(__KERNEL__) && defined(UNIQD_BLAKE3_X86)
	if (!crypto_simd_usable())
		return false;
	kernel_fpu_begin();
#endif
	return true;
}

/**
 * uniqd_blake3_simd_end() - leave the section uniqd_blake3_simd_begin() began
 */
void uniqd_blake3_simd_end(void)
{
#if defined(__KERNEL__) && defined(UNIQD_BLAKE3_X86)
	kernel_fpu_end();
#endif
}
