# SPDX-License-Identifier: GPL-2.0
#
# What every other fragment may rely on: the version, the install paths and
# the names of the things one fragment builds and another uses. The Makefile
# reads this fragment first and the others in any order: they only add to
# the lists below (+=) and name each other's targets through these variables.
#
# VERSION (the top of the tree) is the only place the release is written.
# It reaches the module (Kbuild: MODULE_VERSION), dkms.conf (mk/dkms.mk),
# libuniqd's file name, .pc and <libuniqd_version.h>, uniqdctl and b3sum
# (-DUNIQD_VERSION); tools/version-check.sh checks debian/changelog against it.

UNIQD_VERSION := $(strip $(file < VERSION))
UNIQD_VERSION_WORDS := $(subst ., ,$(UNIQD_VERSION))
LIBUNIQD_SOVERSION := 1

# Install paths; DESTDIR and PREFIX are honoured, each may be set alone. The
# module, the udev rule and the modules-load.d file go to system paths
# (under DESTDIR, never under PREFIX): that is where the kernel, udev and
# systemd look.
DESTDIR ?=
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
UDEVRULESDIR ?= /usr/lib/udev/rules.d
MODULESLOADDIR ?= /usr/lib/modules-load.d
INSTALL ?= install

# libuniqd (mk/libuniqd.mk builds these; uniqdctl, the benchmarks and the
# guest's programs link libuniqd.a).
LIBUNIQD_DIR := tools/libuniqd
LIBUNIQD_VERSION_H := $(B)/include/libuniqd_version.h
LIBUNIQD_HDRS := $(wildcard $(LIBUNIQD_DIR)/*.h) include/uapi/linux/uniqd.h \
	$(LIBUNIQD_VERSION_H)
LIBUNIQD_A := $(B)/lib/libuniqd.a
LIBUNIQD_SO := $(B)/lib/libuniqd.so.$(UNIQD_VERSION)
LIBUNIQD_SONAME := libuniqd.so.$(LIBUNIQD_SOVERSION)
# The fake /dev/uniqd (tests/native/fake/: the device and its mapped pool,
# one object; mk/libuniqd.mk builds it): linked before libuniqd.a (or in
# place of its sys.o) by the native tests, the plugins' and Python's fake
# builds and the native replay (mk/bench.mk).
FAKE_O := $(B)/native-obj/uniqd_fake.o
FAKE_SRCS := tests/native/fake/uniqd_fake.c tests/native/fake/fake_map.c
FAKE_HDRS := tests/native/fake/uniqd_fake.h tests/native/fake/fake_map.h \
	include/uapi/linux/uniqd.h
USER_CFLAGS += $(CPPFLAGS) -I$(B)/include -DUNIQD_VERSION='"$(UNIQD_VERSION)"'

# BLAKE3 for userspace is the module's own source: uniqd/blake3/ but the
# crypto API glue (shash, ahash); mk/b3sum.mk builds them with per-file
# flags, and the tests, tools and benchmarks link them.
B3_DIR := uniqd/blake3
B3_HDRS := $(wildcard $(B3_DIR)/*.h)
B3_OBJS := $(patsubst $(B3_DIR)/%.c,$(B)/obj/%.o,$(filter-out $(B3_DIR)/blake3_shash.c \
	$(B3_DIR)/blake3_ahash.c,$(wildcard $(B3_DIR)/*.c)))

# Lists the fragments append to. TOOL_BINS: built by `make userspace`;
# TEST_LIBS: linked into the guest's static programs; UNINSTALL_FILES:
# removed by `make uninstall` (paths under DESTDIR, used in a recipe only).
TOOL_BINS :=
TEST_LIBS := $(LIBUNIQD_A)
UNINSTALL_FILES :=
