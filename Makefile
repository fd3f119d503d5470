# SPDX-License-Identifier: GPL-2.0
#
# uniqd: the module, libuniqd, the tools and every test.
#
#   make            module for KDIR, libuniqd, tools
#   make run        the main job: build, boot a VM, run the demo
#   make check      every test on Debian's 6.1, 6.12 and 6.12-rt kernels and the
#                   debug kernel, a smoke run on 6.1-rt, the Debian packages and
#                   the full-system guest (Documentation/testing.rst)
#   make check-quick  the inner loop: native tests + the 6.12 VM only
#   make check-debug  native tests + the debug kernel VM only (KUnit, KASAN, lockdep, ...)
#   make check-system the Debian packages in the full-system guest only
#   make bench      benchmarks (never part of pass/fail)
#   make install    DESTDIR= PREFIX= honoured
#
# KDIR: the kernel build tree; default the running kernel's, else the newest
# /lib/modules/*/build.

KRELEASE ?= $(shell uname -r)
KDIR ?= $(shell if [ -d /lib/modules/$(KRELEASE)/build ]; then \
		echo /lib/modules/$(KRELEASE)/build; \
	else ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1; fi)
B := build

CC ?= gcc
CFLAGS ?= -O2 -g
USER_CFLAGS := $(CFLAGS) -Wall -Wextra -Werror -std=gnu11 -Iinclude/uapi -Iuniqd -Iuniqd/blake3 -Itests -Itools/libuniqd
STATIC := -static -pthread

.PHONY: all userspace deps run check check-quick check-debug check-system bench clean install native

all: module userspace

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

# mk/common.mk first (the version, paths, names the others share), then one
# fragment per thing built (module, libuniqd, uniqdctl, b3sum, dkms, bench)
# and install.mk; see mk/common.mk.
include mk/common.mk
include $(filter-out mk/common.mk,$(wildcard mk/*.mk))

$(B)/obj/%.o: uniqd/blake3/%.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c $< -o $@

$(B)/tests/%: tests/%.c tests/harness.h tests/uniqd_test.h tests/uniqd_map_test.h \
		include/uapi/linux/uniqd.h \
		$(USER_OBJS) $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(STATIC) $< $(USER_OBJS) $(TEST_LIBS) -o $@

$(B)/native/%: tests/native/%.c tests/harness.h $(USER_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -pthread $< $(USER_OBJS) -o $@

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
