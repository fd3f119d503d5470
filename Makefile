# SPDX-License-Identifier: GPL-2.0
#
# uniqd: the module, libuniqd, the tools and every test. The targets, one
# line each; `make help` prints these lines (this list is its only source,
# and check.sh fails when a .PHONY target of Makefile or mk/*.mk is missing):
#
#   make all                  the default: the module for KDIR, libuniqd, the tools
#   make help                 this list
#   make deps                 install what is missing from Debian's packages (tools/deps.sh, root)
#   make run                  the main job: build, boot Debian's 6.12 in a VM, run the demos
#   make check                every test: host checks; VMs: 6.1, 6.12, 6.12-rt, debug, 6.1-rt (smoke); system
#   make check-quick          the inner loop: the host checks, the 6.12 VM and the newcomer's demo guest
#   make check-debug          the host checks and the debug kernel's VM (KUnit, KASAN, lockdep, ...)
#   make check-system         the host checks and the Debian packages in the full-system guest
#   make native               the native tests on the host, no VM; fails if one fails
#   make bench                the benchmarks, never part of pass/fail (Documentation/benchmarks.rst)
#   make bench-progs          the static programs the bench VM runs
#   make bench-corpus         the token corpus of the real-workload benchmark
#   make bench-build-corpus   the "parallel build" corpus: busybox's units, preprocessed
#   make bench-variants       ub_corpus_c4k: ub_corpus with a 4096-slot thread cache
#   make bench-replay         ub_corpus's uniqd path replayed natively, for profiling
#   make bench-native         BLAKE3 on the host (bench_blake3_native)
#   make bench-hotpath        libuniqd's cache hit on the host: static, shared, dlopen()ed
#   make userspace            libuniqd, the tools, the test, demo and native programs (no module)
#   make module               uniqd.ko for KDIR, in build/module/src/
#   make lib                  libuniqd.a and libuniqd.so
#   make uniqdctl             uniqdctl (and a static one for the VMs)
#   make b3sum                uniqd-b3sum: b3sum from the module's BLAKE3
#   make farm                 uniqd-farm: a pool's entries through Redis Cluster
#   make gcc-plugin           the GCC plugin, build/gcc-plugin/uniqd.so
#   make mlir-plugin          the MLIR pass plugin for mlir-opt-19, build/mlir/uniqd-mlir.so
#   make python               the Python package uniqd (C extension on libuniqd), in build/python/
#   make dkms-source          build/dkms/uniqd-<version>: what DKMS needs
#   make dkms-add             copy that to /usr/src and `dkms add` it (root)
#   make dkms-check           dkms build for 6.1 and 6.12 in a private DKMS tree
#   make install              everything, the module for KDIR too (DESTDIR= PREFIX= honoured)
#   make install-user         everything but the module (no kernel tree needed)
#   make install-module       uniqd.ko to /lib/modules/<release>/extra, then depmod
#   make install-lib          libuniqd.a, libuniqd.so and libuniqd.pc
#   make install-headers      libuniqd.h, uniqd.hpp, libuniqd_version.h, <linux/uniqd.h>
#   make install-uniqdctl     uniqdctl
#   make install-b3sum        uniqd-b3sum
#   make install-farm         uniqd-farm
#   make install-gcc-plugin   uniqd.so where gcc looks for -fplugin=uniqd
#   make install-mlir-plugin  uniqd-mlir.so into <libdir>/uniqd/mlir-19/
#   make install-python       the Python package uniqd into dist-packages (PYTHONDIR=)
#   make install-man          the man pages
#   make install-udev         the udev rule for /dev/uniqd
#   make install-modules-load the modules-load.d file that loads uniqd at boot
#   make install-persist      uniqd-persist's systemd units and script
#   make uninstall            remove what install put
#   make uninstall-module     remove the installed uniqd.ko, then depmod
#   make clean                remove build/
#
# KDIR: the kernel build tree; default the running kernel's, else the newest
# /lib/modules/*/build that is not PREEMPT_RT (else the newest one); `make
# module` says which it took.

# KDIR_FROM says where KDIR came from; `make module` prints it. A tree is
# PREEMPT_RT when its autoconf.h defines CONFIG_PREEMPT_RT (Debian's -rt-
# flavours): a module built for one does not load in the generic kernel.
KRELEASE ?= $(shell uname -r)
ifeq ($(origin KDIR),undefined)
KDIR := $(shell [ -d /lib/modules/$(KRELEASE)/build ] && echo /lib/modules/$(KRELEASE)/build)
KDIR_FROM := the running kernel's ($(KRELEASE))
ifeq ($(KDIR),)
KDIR_TREES := $(shell ls -d /lib/modules/*/build 2>/dev/null | sort -V)
KDIR_RT := $(foreach d,$(KDIR_TREES),$(if $(shell grep -qs '^\#define CONFIG_PREEMPT_RT 1' \
	$(d)/include/generated/autoconf.h && echo rt),$(d)))
KDIR := $(lastword $(filter-out $(KDIR_RT),$(KDIR_TREES)))
KDIR_FROM := the newest installed kernel tree that is not PREEMPT_RT (none for $(KRELEASE), the running kernel)
ifeq ($(KDIR),)
KDIR := $(lastword $(KDIR_TREES))
KDIR_FROM := the newest installed kernel tree, PREEMPT_RT (no other; none for $(KRELEASE), the running kernel)
endif
endif
else
KDIR_FROM := KDIR given ($(origin KDIR))
endif
B := build

CC ?= gcc
CFLAGS ?= -O2 -g
USER_CFLAGS := $(CFLAGS) -Wall -Wextra -Werror -std=gnu11 -Iinclude/uapi -Iuniqd -Iuniqd/blake3 -Itests -Itools/libuniqd
STATIC := -static -pthread

.PHONY: all help userspace deps run check check-quick check-debug check-system bench clean install native

all: module userspace

help:
	@sed -n 's/^#   \(make .*\)/\1/p' Makefile

deps:
	@tools/deps.sh

# ---- userspace -------------------------------------------------------------
# Programs that run in the guest are static: the initramfs has no libc.
TEST_SRCS := $(wildcard tests/*.c)
TEST_BINS := $(patsubst tests/%.c,$(B)/tests/%,$(TEST_SRCS))
NATIVE_SRCS := $(wildcard tests/native/*.c)
NATIVE_BINS := $(patsubst tests/native/%.c,$(B)/native/%,$(NATIVE_SRCS))
DEMO_SRCS := $(wildcard tools/demo/*.c)
DEMO_BINS := $(patsubst tools/demo/%.c,$(B)/demo/%,$(DEMO_SRCS))

# Userspace objects shared by tests and tools: B3_OBJS (mk/common.mk).
USER_OBJS = $(B3_OBJS)
# The test-support library (tests/lib/, header-only): the raw ioctl wrappers
# and host helpers of the VM tests and the benchmarks (mk/bench.mk).
TESTLIB_HDRS := $(wildcard tests/lib/*.h)

# mk/common.mk first (the version, paths, names the others share), then one
# fragment per thing built (module, libuniqd, uniqdctl, b3sum, dkms, bench)
# and install.mk; see mk/common.mk.
include mk/common.mk
include $(filter-out mk/common.mk,$(wildcard mk/*.mk))

$(B)/obj/%.o: uniqd/blake3/%.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c $< -o $@

$(B)/tests/%: tests/%.c tests/harness.h tests/uniqd_test.h tests/uniqd_map_test.h \
		$(TESTLIB_HDRS) include/uapi/linux/uniqd.h \
		$(USER_OBJS) $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(STATIC) $< $(USER_OBJS) $(TEST_LIBS) -o $@

# Native programs run libuniqd on the fake device (FAKE_O, mk/common.mk).
$(B)/native/%: tests/native/%.c tests/harness.h tests/native/fake/replay_pool.h $(FAKE_O) $(FAKE_HDRS) \
		$(USER_OBJS) $(LIBUNIQD_A) $(LIBUNIQD_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -pthread $< $(FAKE_O) $(USER_OBJS) $(LIBUNIQD_A) -o $@

$(B)/demo/%: tools/demo/%.c include/uapi/linux/uniqd.h $(USER_OBJS) $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(STATIC) $< $(USER_OBJS) $(TEST_LIBS) -o $@

userspace: $(TOOL_BINS) $(TEST_BINS) $(NATIVE_BINS) $(DEMO_BINS)

native: $(NATIVE_BINS)
	tools/testing/native.sh $(B)/native

# ---- the VM ----------------------------------------------------------------
run: deps
	tools/testing/run-demo.sh

check: deps
	tools/testing/check.sh

check-quick: deps
	tools/testing/check.sh --kernels "6.12"

check-debug: deps
	tools/testing/check.sh --kernels debug

check-system: deps
	tools/testing/check.sh --kernels system

bench: deps
	tools/testing/bench.sh

clean:
	rm -rf $(B)
