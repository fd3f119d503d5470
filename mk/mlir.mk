# SPDX-License-Identifier: GPL-2.0
#
# The MLIR plugin (tools/mlir/, Documentation/mlir.rst): $(B)/mlir/uniqd-mlir.so,
# a pass plugin for Debian's mlir-opt-19 built the way out-of-tree MLIR
# projects are (CMake, find_package(MLIR) from libmlir-19-dev), against
# MLIR's headers only, with libuniqd.a linked in and hidden; and its twin
# on the native tests' fake device, $(B)/mlir/uniqd-mlir-fake.so (never
# installed). Built when $(MLIR_DIR) holds MLIRConfig.cmake (tools/deps.sh
# installs libmlir-19-dev, mlir-19-tools and cmake); installed where its
# users name it, beside nothing of MLIR's: $(LIBDIR)/uniqd/mlir-19/.
#
#   make mlir-plugin
#   make install-mlir-plugin        (part of make install-user)
#   tools/testing/mlir-check.sh     (make check, host:mlir.*)

MLIR_VERSION ?= 19
MLIR_DIR ?= /usr/lib/llvm-$(MLIR_VERSION)/lib/cmake/mlir
MLIR_BUILD := $(B)/mlir
MLIR_PLUGIN_SO := $(MLIR_BUILD)/uniqd-mlir.so
MLIR_PLUGIN_FAKE_SO := $(MLIR_BUILD)/uniqd-mlir-fake.so
MLIR_PLUGIN_DIR ?= $(LIBDIR)/uniqd/mlir-$(MLIR_VERSION)
HAVE_MLIR := $(wildcard $(MLIR_DIR)/MLIRConfig.cmake)
# The fake device and the pool it creates at load (mk/gcc-plugin.mk's).
MLIR_FAKE_OBJS := $(B)/gcc-plugin/fake/fake_pool.o $(FAKE_O)

.PHONY: mlir-plugin install-mlir-plugin
ifneq ($(HAVE_MLIR),)
TOOL_BINS += $(MLIR_PLUGIN_SO) $(MLIR_PLUGIN_FAKE_SO)
mlir-plugin: $(MLIR_PLUGIN_SO) $(MLIR_PLUGIN_FAKE_SO)
install-user: install-mlir-plugin
UNINSTALL_FILES += $(MLIR_PLUGIN_DIR)/uniqd-mlir.so
else
mlir-plugin:
	@echo "mlir-plugin: no $(MLIR_DIR)/MLIRConfig.cmake (install libmlir-$(MLIR_VERSION)-dev)"; exit 1
endif

# Configured once; CMake reconfigures itself when its lists change.
$(MLIR_BUILD)/CMakeCache.txt: tools/mlir/CMakeLists.txt mk/mlir.mk VERSION
	@mkdir -p $(dir $@)
	cmake -S tools/mlir -B $(MLIR_BUILD) -DMLIR_DIR=$(MLIR_DIR) \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=$(CXX) -DCMAKE_C_COMPILER=$(CC) \
		-DCMAKE_CXX_FLAGS="$(CPPFLAGS) $(CXXFLAGS)" -DCMAKE_MODULE_LINKER_FLAGS="$(LDFLAGS)" \
		-DUNIQD_LIBUNIQD_A=$(abspath $(LIBUNIQD_A)) \
		-DUNIQD_INCLUDE_DIRS="$(abspath $(LIBUNIQD_DIR));$(abspath include/uapi);$(abspath $(B)/include)" \
		-DUNIQD_VERSION=$(UNIQD_VERSION) -DUNIQD_FAKE_OBJS="$(abspath $(MLIR_FAKE_OBJS))" >$(MLIR_BUILD)/configure.log \
		|| { cat $(MLIR_BUILD)/configure.log; exit 1; }

$(MLIR_PLUGIN_SO) $(MLIR_PLUGIN_FAKE_SO) &: $(MLIR_BUILD)/CMakeCache.txt $(wildcard tools/mlir/*) \
		$(LIBUNIQD_A) $(LIBUNIQD_HDRS) $(LIBUNIQD_DIR)/uniqd.hpp $(MLIR_FAKE_OBJS)
	+cmake --build $(MLIR_BUILD)
	@touch $(MLIR_PLUGIN_SO) $(MLIR_PLUGIN_FAKE_SO)

install-mlir-plugin: $(MLIR_PLUGIN_SO)
	$(INSTALL) -d $(DESTDIR)$(MLIR_PLUGIN_DIR)
	$(INSTALL) -m 0644 $< $(DESTDIR)$(MLIR_PLUGIN_DIR)/uniqd-mlir.so

# tests/native/symbols_replay.c includes the checker (symbols.c) and its
# JSON writer (json.c).
$(B)/native/symbols_replay: tools/uniqdctl/symbols.c tools/uniqdctl/symbols.h \
	tools/uniqdctl/json.c tools/uniqdctl/json.h tools/mlir/mlir_keys.h $(LIBUNIQD_HDRS)
