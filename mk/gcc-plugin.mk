# SPDX-License-Identifier: GPL-2.0
#
# The GCC plugin (tools/gcc-plugin/, Documentation/gcc-plugin.rst):
# $(B)/gcc-plugin/uniqd.so, built against the plugin headers of the gcc
# that builds everything else (gcc-12-plugin-dev, which tools/deps.sh
# installs) with libuniqd.a linked in and hidden, and installed where that
# gcc looks for `-fplugin=uniqd`: $(gcc -print-file-name=plugin), under
# DESTDIR but never under PREFIX (the compiler decides the place).
#
#   make gcc-plugin
#   make install-gcc-plugin          (part of make install-user)

CXX ?= g++
CXXFLAGS ?= -O2 -g
GCC_PLUGIN_DIR := $(shell $(CC) -print-file-name=plugin)
GCC_PLUGIN_SO := $(B)/gcc-plugin/uniqd.so
GCC_PLUGIN_SRCS := $(wildcard tools/gcc-plugin/*.cc)
GCC_PLUGIN_OBJS := $(patsubst tools/gcc-plugin/%.cc,$(B)/gcc-plugin/%.o,$(GCC_PLUGIN_SRCS))
# GCC's headers are C++ and expect no RTTI; only plugin_init and
# plugin_is_GPL_compatible are exported (the rest could interpose on cc1's).
GCC_PLUGIN_CXXFLAGS := $(CPPFLAGS) $(CXXFLAGS) -std=gnu++17 -fno-rtti -fPIC -fvisibility=hidden \
	-Wall -Wextra -Werror -I$(GCC_PLUGIN_DIR)/include -Itools/gcc-plugin \
	-I$(LIBUNIQD_DIR) -I$(B)/include -Iinclude/uapi \
	-DUNIQD_VERSION='"$(UNIQD_VERSION)"'

TOOL_BINS += $(GCC_PLUGIN_SO)
UNINSTALL_FILES += $(GCC_PLUGIN_DIR)/uniqd.so

.PHONY: gcc-plugin install-gcc-plugin
gcc-plugin: $(GCC_PLUGIN_SO)

$(B)/gcc-plugin/%.o: tools/gcc-plugin/%.cc $(wildcard tools/gcc-plugin/*.h) $(LIBUNIQD_HDRS) mk/gcc-plugin.mk
	@mkdir -p $(dir $@)
	$(CXX) $(GCC_PLUGIN_CXXFLAGS) -c $< -o $@

# --exclude-libs: libuniqd's symbols stay inside the plugin too, so that a
# cc1 that meets another libuniqd (a preloaded one) binds each to its own.
# The C++ runtime is linked in as well: cc1 does not load libstdc++.so, and
# loading it for the plugin cost every compilation 3.8M instructions (a
# quarter of compiling an empty file), against 0.5M for the plugin alone.
# -z nodelete: libuniqd's thread-exit destructor is in the plugin's code.
$(GCC_PLUGIN_SO): $(GCC_PLUGIN_OBJS) $(LIBUNIQD_A)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -shared -fPIC -Wl,-z,relro -Wl,-z,now -Wl,-z,nodelete \
		-static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL \
		$(GCC_PLUGIN_OBJS) $(LIBUNIQD_A) -pthread -o $@

install-user: install-gcc-plugin
install-gcc-plugin: $(GCC_PLUGIN_SO)
	$(INSTALL) -d $(DESTDIR)$(GCC_PLUGIN_DIR)
	$(INSTALL) -m 0644 $< $(DESTDIR)$(GCC_PLUGIN_DIR)/uniqd.so

# The plugin with the fake device of the native tests in place of
# /dev/uniqd (tests/native/fake/gcc_plugin_fake.c): plugin-check.sh runs
# table=uniqd with it. Never installed, and named so that no -fplugin=uniqd
# and no search of the build tree for uniqd.so can take it for the real
# one. Not uniqd-fake.so: GCC ends a plugin's name in -fplugin-arg-NAME-KEY
# at the first '-', so its arguments are -fplugin-arg-uniqd_fake-KEY.
GCC_PLUGIN_FAKE_SO := $(B)/gcc-plugin/uniqd_fake.so
TOOL_BINS += $(GCC_PLUGIN_FAKE_SO)

$(B)/gcc-plugin/fake/fake_pool.o: tests/native/fake/gcc_plugin_fake.c $(FAKE_HDRS) \
		$(LIBUNIQD_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -fPIC -Itests/native -c $< -o $@

$(GCC_PLUGIN_FAKE_SO): $(GCC_PLUGIN_OBJS) $(B)/gcc-plugin/fake/fake_pool.o $(FAKE_O) \
		$(LIBUNIQD_A)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -shared -fPIC -Wl,-z,nodelete -static-libstdc++ -static-libgcc \
		-Wl,--exclude-libs,ALL $(filter %.o %.a,$^) -pthread -o $@
