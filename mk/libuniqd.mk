# SPDX-License-Identifier: GPL-2.0
#
# libuniqd: libuniqd.a (linked into the guest's static programs through
# TEST_LIBS, and into uniqdctl), libuniqd.so.<version> and its symlinks, the
# generated <libuniqd_version.h>, and the README's example built against an
# installed copy. The pkg-config file is written at install time so that it
# carries the PREFIX of the install.
#
#   make lib
#   make install-lib install-headers     (part of make install-user)

LIBUNIQD_SRCS := $(wildcard $(LIBUNIQD_DIR)/*.c)
# Snapshots' checksum is BLAKE3 (snapshot.c): the module's source again,
# compiled position-independent for the shared library. Programs that
# link B3_OBJS too name them before libuniqd.a, so only one copy is linked.
LIBUNIQD_B3_OBJS := $(patsubst $(B)/obj/%.o,$(B)/libuniqd/b3/%.o,$(B3_OBJS))
LIBUNIQD_OBJS := $(patsubst $(LIBUNIQD_DIR)/%.c,$(B)/libuniqd/%.o,$(LIBUNIQD_SRCS)) \
	$(LIBUNIQD_B3_OBJS)
LIBUNIQD_LINKS := $(B)/lib/$(LIBUNIQD_SONAME) $(B)/lib/libuniqd.so

# One set of position-independent objects serves both libraries.
LIBUNIQD_CFLAGS := $(USER_CFLAGS) -fPIC -D_GNU_SOURCE -I$(LIBUNIQD_DIR)

.PHONY: lib install-lib install-headers
lib: $(LIBUNIQD_A) $(LIBUNIQD_SO) $(LIBUNIQD_LINKS)
userspace: lib

# The version macros of the installed header, from VERSION.
$(LIBUNIQD_VERSION_H): VERSION mk/libuniqd.mk
	@mkdir -p $(dir $@)
	printf '%s\n' '/* SPDX-License-Identifier: LGPL-2.1-or-later */' \
		'/* Generated from uniqd'"'"'s VERSION by mk/libuniqd.mk. */' \
		'#ifndef LIBUNIQD_VERSION_H' '#define LIBUNIQD_VERSION_H' \
		'#define LIBUNIQD_VERSION_MAJOR	$(word 1,$(UNIQD_VERSION_WORDS))' \
		'#define LIBUNIQD_VERSION_MINOR	$(word 2,$(UNIQD_VERSION_WORDS))' \
		'#define LIBUNIQD_VERSION_PATCH	$(word 3,$(UNIQD_VERSION_WORDS))' \
		'#define LIBUNIQD_VERSION_STRING	"$(UNIQD_VERSION)"' \
		'#endif' > $@

$(B)/libuniqd/%.o: $(LIBUNIQD_DIR)/%.c $(LIBUNIQD_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIBUNIQD_CFLAGS) -c $< -o $@

$(B)/libuniqd/b3/%.o: $(B3_DIR)/%.c $(B3_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIBUNIQD_CFLAGS) $(B3_SIMD_FLAGS_$(notdir $*)) -c $< -o $@

$(B)/libuniqd/snapshot.o: $(B3_HDRS)

$(LIBUNIQD_A): $(LIBUNIQD_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# -z nodelete: threads' cache destructors live in the library, so it must
# never be unloaded while a thread may still exit.
$(LIBUNIQD_SO): $(LIBUNIQD_OBJS) $(LIBUNIQD_DIR)/libuniqd.map
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -pthread -Wl,-soname,$(LIBUNIQD_SONAME) \
		-Wl,--version-script=$(LIBUNIQD_DIR)/libuniqd.map \
		-Wl,-z,nodelete -Wl,-z,defs -Wl,-z,relro -Wl,-z,now \
		$(LIBUNIQD_OBJS) -o $@

$(B)/lib/$(LIBUNIQD_SONAME): $(LIBUNIQD_SO)
	ln -sf $(notdir $<) $@

$(B)/lib/libuniqd.so: $(B)/lib/$(LIBUNIQD_SONAME)
	ln -sf $(notdir $<) $@

# The native tests of the library run it against the fake device
# (mk/common.mk's FAKE_O): its uq_sys_* functions come before libuniqd.a,
# so the archive's sys.o is never linked. Its sources are linked into one
# relocatable object, so that every user names one file.
$(FAKE_O): $(FAKE_SRCS) $(FAKE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -fPIC -r -nostdlib $(FAKE_SRCS) -o $@

$(B)/native/test_libuniqd: tests/native/test_libuniqd.c tests/harness.h $(FAKE_O) $(LIBUNIQD_A) $(LIBUNIQD_HDRS) $(FAKE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -pthread $< $(FAKE_O) $(LIBUNIQD_A) -Wl,--wrap=malloc -o $@

$(B)/native/test_foreach: tests/native/test_foreach.c tests/harness.h $(FAKE_O) $(LIBUNIQD_A) $(LIBUNIQD_HDRS) $(FAKE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -pthread $< $(FAKE_O) $(LIBUNIQD_A) -o $@

# <uniqd.hpp>: a C++17 test against the fake, and a file of static_asserts
# (what must not compile: handles of different tags compared) compiled
# alone first. Each twice: as is, and the way LLVM-style code builds
# (-fno-exceptions -fno-rtti: the header then has only its error_code
# overloads); the noexc test once more with the flags of
# `$(LLVM_CONFIG) --cxxflags` when LLVM 19's development files are there
# (tools/deps.sh installs them).
CXXFLAGS ?= -O2 -g
UQ_CXXFLAGS = $(CXXFLAGS) $(CPPFLAGS) -std=c++17 -Wall -Wextra -Werror -Iinclude/uapi \
	-Itests -I$(LIBUNIQD_DIR) -I$(B)/include
UQ_NOEXC := -fno-exceptions -fno-rtti
LLVM_CONFIG ?= llvm-config-19
LLVM_CXXFLAGS := $(shell $(LLVM_CONFIG) --cxxflags 2>/dev/null)
UQ_HPP_TEST_DEPS := tests/native/cxx/test_uniqd_hpp.cc $(LIBUNIQD_DIR)/uniqd.hpp tests/harness.h \
	$(FAKE_O) $(LIBUNIQD_A) $(LIBUNIQD_HDRS) $(FAKE_HDRS)
NATIVE_BINS += $(B)/native/test_uniqd_hpp $(B)/native/test_uniqd_hpp_noexc
ifneq ($(LLVM_CXXFLAGS),)
NATIVE_BINS += $(B)/native/test_uniqd_hpp_llvm
endif

$(B)/native-obj/uniqd_hpp_static.stamp: tests/native/cxx/uniqd_hpp_static.cc $(LIBUNIQD_DIR)/uniqd.hpp $(LIBUNIQD_HDRS)
	@mkdir -p $(dir $@)
	$(CXX) $(UQ_CXXFLAGS) -fsyntax-only $<
	$(CXX) $(UQ_CXXFLAGS) $(UQ_NOEXC) -fsyntax-only $<
	touch $@

$(B)/native/test_uniqd_hpp: $(UQ_HPP_TEST_DEPS) $(B)/native-obj/uniqd_hpp_static.stamp
	@mkdir -p $(dir $@)
	$(CXX) $(UQ_CXXFLAGS) -pthread $< $(FAKE_O) $(LIBUNIQD_A) -o $@

$(B)/native/test_uniqd_hpp_noexc: $(UQ_HPP_TEST_DEPS) $(B)/native-obj/uniqd_hpp_static.stamp
	@mkdir -p $(dir $@)
	$(CXX) $(UQ_CXXFLAGS) $(UQ_NOEXC) -pthread $< $(FAKE_O) $(LIBUNIQD_A) -o $@

# LLVM's flags come last, as an LLVM project's own would.
$(B)/native/test_uniqd_hpp_llvm: $(UQ_HPP_TEST_DEPS) $(B)/native-obj/uniqd_hpp_static.stamp
	@mkdir -p $(dir $@)
	$(CXX) $(UQ_CXXFLAGS) $(LLVM_CXXFLAGS) -DUQ_HPP_SUITE='"uniqd-hpp-llvm"' -pthread $< \
		$(FAKE_O) $(LIBUNIQD_A) -o $@

# The guest's C++ test, static like every program the guest runs; and the
# same source -fno-exceptions -fno-rtti.
TEST_BINS += $(B)/tests/lib_hpp $(B)/tests/lib_hpp_noexc
UQ_LIB_HPP_DEPS := tests/lib_hpp.cc $(LIBUNIQD_DIR)/uniqd.hpp tests/harness.h tests/uniqd_test.h $(TESTLIB_HDRS) \
	$(TEST_LIBS) $(LIBUNIQD_HDRS)
$(B)/tests/lib_hpp: $(UQ_LIB_HPP_DEPS)
	@mkdir -p $(dir $@)
	$(CXX) $(UQ_CXXFLAGS) -Iuniqd -I$(B3_DIR) $(STATIC) $< $(TEST_LIBS) -o $@

$(B)/tests/lib_hpp_noexc: $(UQ_LIB_HPP_DEPS)
	@mkdir -p $(dir $@)
	$(CXX) $(UQ_CXXFLAGS) $(UQ_NOEXC) -Iuniqd -I$(B3_DIR) $(STATIC) $< $(TEST_LIBS) -o $@

# Loading with dlopen(): a plugin-shaped object linking libuniqd.a the way
# a GCC plugin does, and a program without libuniqd that dlopen()s it and
# libuniqd.so.1 (absolute paths, so that it runs from anywhere).
UQ_PLUGIN_SO := $(B)/native-obj/uq_plugin.so

$(UQ_PLUGIN_SO): tests/native/plugin/uq_plugin.c tests/native/plugin/uq_plugin.h $(LIBUNIQD_A) $(LIBUNIQD_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -fPIC -shared -pthread $< $(LIBUNIQD_A) \
		-Wl,--exclude-libs,ALL -Wl,-z,nodelete -Wl,-z,defs -o $@

$(B)/native/test_dlopen: tests/native/test_dlopen.c tests/native/plugin/uq_plugin.h tests/harness.h \
		$(UQ_PLUGIN_SO) $(B)/lib/$(LIBUNIQD_SONAME)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -pthread -DUQ_LIBUNIQD_SO='"$(abspath $(B)/lib/$(LIBUNIQD_SONAME))"' \
		-DUQ_PLUGIN_SO='"$(abspath $(UQ_PLUGIN_SO))"' $< -ldl -o $@

# The symbol map against the exports (a script: nm does the reading).
NATIVE_BINS += $(B)/native/test_symbols
$(B)/native/test_symbols: tests/native/test_symbols.sh $(LIBUNIQD_SO) $(LIBUNIQD_DIR)/libuniqd.map
	@mkdir -p $(dir $@)
	sed -e 's|@MAP@|$(abspath $(LIBUNIQD_DIR)/libuniqd.map)|' \
	    -e 's|@SO@|$(abspath $(LIBUNIQD_SO))|' \
	    -e 's|@DEBSYMS@|$(abspath debian/libuniqd1.symbols)|' $< > $@
	chmod 0755 $@

# ---- install ---------------------------------------------------------------
install-user: install-lib install-headers

# The .pc file: libdir and includedir relative to ${prefix} when they are
# under PREFIX, so that pkg-config --define-prefix and sysroots work.
pc_rel = $(patsubst $(PREFIX)/%,$${prefix}/%,$(patsubst $(PREFIX),$${prefix},$(1)))

# find_package(uniqd): uniqdConfig.cmake and uniqdConfigVersion.cmake in
# $(LIBDIR)/cmake/uniqd, with the headers' and the library's directories
# relative to it (tools/libuniqd/cmake/*.in).
CMAKECONFIGDIR ?= $(LIBDIR)/cmake/uniqd
LIBUNIQD_POINTER_SIZE := $(shell echo __SIZEOF_POINTER__ | $(CC) -E -P - | tail -n 1)
cmake_rel = $(shell realpath -m -s --relative-to=$(CMAKECONFIGDIR) $(1))
define cmake_config
	sed -e 's|@VERSION@|$(UNIQD_VERSION)|g' \
	    -e 's|@VERSION_MAJOR@|$(word 1,$(UNIQD_VERSION_WORDS))|g' \
	    -e 's|@SOVERSION@|$(LIBUNIQD_SOVERSION)|g' \
	    -e 's|@SIZEOF_VOID_P@|$(LIBUNIQD_POINTER_SIZE)|g' \
	    -e 's|@REL_INCLUDEDIR@|$(call cmake_rel,$(INCLUDEDIR))|g' \
	    -e 's|@REL_LIBDIR@|$(call cmake_rel,$(LIBDIR))|g' \
	    $(LIBUNIQD_DIR)/cmake/$(1).cmake.in > $(DESTDIR)$(CMAKECONFIGDIR)/$(1).cmake
	chmod 0644 $(DESTDIR)$(CMAKECONFIGDIR)/$(1).cmake
endef

install-lib: lib
	$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 0644 $(LIBUNIQD_A) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 0755 $(LIBUNIQD_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIBUNIQD_SO)) $(DESTDIR)$(LIBDIR)/$(LIBUNIQD_SONAME)
	ln -sf $(LIBUNIQD_SONAME) $(DESTDIR)$(LIBDIR)/libuniqd.so
	sed -e 's|@PREFIX@|$(PREFIX)|' \
	    -e 's|@LIBDIR@|$(call pc_rel,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_rel,$(INCLUDEDIR))|' \
	    -e 's|@VERSION@|$(UNIQD_VERSION)|' \
	    $(LIBUNIQD_DIR)/libuniqd.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libuniqd.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/libuniqd.pc
	$(INSTALL) -d $(DESTDIR)$(CMAKECONFIGDIR)
	$(call cmake_config,uniqdConfig)
	$(call cmake_config,uniqdConfigVersion)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && [ -x $(LDCONFIG) ]; then \
		echo "$(LDCONFIG)"; $(LDCONFIG); fi

# libuniqd.h needs nothing but its version header; uniqd.hpp (C++17) only
# libuniqd.h; <linux/uniqd.h> is for programs that use the ioctls directly
# (uniqd(4)) or want the UNIQD_FEAT_* bits.
install-headers: $(LIBUNIQD_VERSION_H)
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/linux
	$(INSTALL) -m 0644 $(LIBUNIQD_DIR)/libuniqd.h $(LIBUNIQD_DIR)/uniqd.hpp \
		$(LIBUNIQD_VERSION_H) $(DESTDIR)$(INCLUDEDIR)/
	$(INSTALL) -m 0644 include/uapi/linux/uniqd.h $(DESTDIR)$(INCLUDEDIR)/linux/

UNINSTALL_FILES += $(LIBDIR)/libuniqd.a $(LIBDIR)/libuniqd.so $(LIBDIR)/$(LIBUNIQD_SONAME) \
	$(LIBDIR)/$(notdir $(LIBUNIQD_SO)) $(PKGCONFIGDIR)/libuniqd.pc \
	$(CMAKECONFIGDIR)/uniqdConfig.cmake $(CMAKECONFIGDIR)/uniqdConfigVersion.cmake \
	$(INCLUDEDIR)/libuniqd.h $(INCLUDEDIR)/uniqd.hpp $(INCLUDEDIR)/libuniqd_version.h \
	$(INCLUDEDIR)/linux/uniqd.h

# ---- the README's example --------------------------------------------------
# Built the way its users build it: against an installed libuniqd (a staged
# install-user under $(B)/stage) with pkg-config, statically for the VM guest
# (tests/lib_example.c runs it).
STAGE := $(B)/stage
STAGE_PKG = PKG_CONFIG_LIBDIR=$(STAGE)/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(STAGE) pkg-config
TOOL_BINS += $(B)/static-bin/libuniqd-example

$(B)/stage/.done: $(LIBUNIQD_A) $(LIBUNIQD_SO) $(LIBUNIQD_HDRS) $(LIBUNIQD_DIR)/uniqd.hpp \
		$(LIBUNIQD_DIR)/libuniqd.pc.in \
		$(B)/bin/uniqdctl $(B)/static-bin/uniqdctl $(wildcard Documentation/man/*)
	rm -rf $(STAGE)
	$(MAKE) -s install-user DESTDIR=$(STAGE) PREFIX=/usr
	touch $@

$(B)/static-bin/libuniqd-example: $(LIBUNIQD_DIR)/example/example.c $(B)/stage/.done
	@mkdir -p $(dir $@)
	$(CC) -static -o $@ $< $$($(STAGE_PKG) --static --cflags --libs libuniqd)

# ---- the hot path on the host ------------------------------------------------
# tools/bench/lib_hotpath_native.c: a cache hit against the fake device, with
# libuniqd linked in, as a DT_NEEDED and dlopen()ed (libuniqd-fake.so is
# libuniqd.so with the fake in place of sys.o). Not a test: run by hand,
# figures in Documentation/libuniqd.rst.
HOTPATH_DIR := $(B)/native-bench
HOTPATH_FAKE_SO := $(HOTPATH_DIR)/libuniqd-fake.so
HOTPATH_BINS := $(addprefix $(HOTPATH_DIR)/lib_hotpath_,static shared dlopen)
HOTPATH_SRC := tools/bench/lib_hotpath_native.c

.PHONY: bench-hotpath
bench-hotpath: $(HOTPATH_BINS)
	for b in $(HOTPATH_BINS); do echo "$$(basename $$b): $$($$b $(HOTPATH_FAKE_SO))"; done

$(HOTPATH_FAKE_SO): $(filter-out $(B)/libuniqd/sys.o,$(LIBUNIQD_OBJS)) $(FAKE_O) $(LIBUNIQD_DIR)/libuniqd.map
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -pthread -Wl,-soname,$(notdir $@) \
		-Wl,--version-script=$(LIBUNIQD_DIR)/libuniqd.map -Wl,-z,nodelete \
		$(filter %.o,$^) -o $@

$(HOTPATH_DIR)/lib_hotpath_static: $(HOTPATH_SRC) $(FAKE_O) $(LIBUNIQD_A) $(LIBUNIQD_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -pthread $< $(FAKE_O) $(LIBUNIQD_A) -o $@

$(HOTPATH_DIR)/lib_hotpath_shared: $(HOTPATH_SRC) $(HOTPATH_FAKE_SO) $(LIBUNIQD_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -pthread $< $(HOTPATH_FAKE_SO) -Wl,-rpath,'$$ORIGIN' -o $@

$(HOTPATH_DIR)/lib_hotpath_dlopen: $(HOTPATH_SRC) $(LIBUNIQD_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -DHOTPATH_DLOPEN -pthread $< -ldl -o $@
