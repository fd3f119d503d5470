# SPDX-License-Identifier: GPL-2.0
#
# The Python package `uniqd` (tools/python/, Documentation/python.rst): a
# CPython extension, uniqd/_uniqd<EXT_SUFFIX>, linked against the shared
# libuniqd this tree builds (DT_NEEDED libuniqd.so.1), and the package's
# Python files, staged as $(B)/python/uniqd/ so that PYTHONPATH=$(B)/python
# imports it. Built for Debian's python3 (the one python3-uniqd is for).
#
# The native test (tools/python/tests/, pytest) runs the package against the
# fake device: $(B)/python-fake/libuniqd.so.1 is libuniqd with
# tests/native/fake/uniqd_fake.c in place of sys.o (and the fake's fk_*
# knobs exported), found first through LD_LIBRARY_PATH by the script
# $(B)/native/test_python that tools/testing/native.sh runs.
#
#   make python
#   make install-python             (part of make install-user)

PYTHON3 ?= $(firstword $(wildcard /usr/bin/python3) python3)
PY_INCLUDES := $(shell $(PYTHON3) -c 'import sysconfig; print("-I" + sysconfig.get_paths()["include"])' 2>/dev/null)
PY_EXT_SUFFIX := $(shell $(PYTHON3) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PY_VER := $(shell $(PYTHON3) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
# Debian's python3 reads /usr/lib/python3/dist-packages (packages) and
# /usr/local/lib/python3.X/dist-packages (make install's default PREFIX).
PYTHONDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PY_VER)/dist-packages)

PY_SRC := tools/python
PY_STAGE := $(B)/python/uniqd
PY_EXT := $(PY_STAGE)/_uniqd$(PY_EXT_SUFFIX)
PY_FILES := $(addprefix $(PY_STAGE)/,__init__.py __main__.py _uniqd.pyi py.typed)
PY_FAKE_SO := $(B)/python-fake/$(LIBUNIQD_SONAME)
# mk/libuniqd.mk's objects but sys.o, spelled out (the fragments are read
# in any order), and the fake device (mk/common.mk's FAKE_O).
PY_FAKE_OBJS := $(patsubst $(LIBUNIQD_DIR)/%.c,$(B)/libuniqd/%.o,$(filter-out \
	$(LIBUNIQD_DIR)/sys.c,$(wildcard $(LIBUNIQD_DIR)/*.c))) \
	$(patsubst $(B)/obj/%.o,$(B)/libuniqd/b3/%.o,$(B3_OBJS)) $(FAKE_O)

TOOL_BINS += $(PY_EXT) $(PY_FILES)
NATIVE_BINS += $(B)/native/test_python
UNINSTALL_FILES += $(addprefix $(PYTHONDIR)/uniqd/,$(notdir $(PY_EXT) $(PY_FILES)))

.PHONY: python install-python
python: $(PY_EXT) $(PY_FILES)

$(PY_EXT): $(PY_SRC)/_uniqd.c $(LIBUNIQD_HDRS) $(B)/lib/libuniqd.so mk/python.mk
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -fPIC -shared $(PY_INCLUDES) $(LDFLAGS) \
		-fvisibility=hidden -Wl,-z,relro -Wl,-z,now \
		$< -L$(B)/lib -luniqd -o $@

$(PY_STAGE)/%: $(PY_SRC)/uniqd/%
	@mkdir -p $(dir $@)
	cp $< $@

# libuniqd.so.1 with the fake device: its version script plus the fake's knobs.
$(B)/python-fake/fake.map: $(LIBUNIQD_DIR)/libuniqd.map
	@mkdir -p $(dir $@)
	sed '0,/global:/s//global:\n\t\tfk_*;/' $< > $@

$(PY_FAKE_SO): $(PY_FAKE_OBJS) $(B)/python-fake/fake.map
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -pthread -Wl,-soname,$(LIBUNIQD_SONAME) \
		-Wl,--version-script=$(B)/python-fake/fake.map -Wl,-z,nodelete \
		$(filter %.o,$^) -o $@

$(B)/native/test_python: $(PY_SRC)/tests/run-pytest.sh $(PY_EXT) $(PY_FILES) $(PY_FAKE_SO) \
		$(wildcard $(PY_SRC)/tests/*.py)
	@mkdir -p $(dir $@)
	sed -e 's|@PYTHON3@|$(PYTHON3)|' -e 's|@PYPATH@|$(abspath $(B)/python)|' \
	    -e 's|@FAKELIB@|$(abspath $(dir $(PY_FAKE_SO)))|' \
	    -e 's|@TESTS@|$(abspath $(PY_SRC)/tests)|' $< > $@
	chmod 0755 $@

install-user: install-python
install-python: $(PY_EXT) $(PY_FILES)
	$(INSTALL) -d $(DESTDIR)$(PYTHONDIR)/uniqd
	$(INSTALL) -m 0644 $(PY_EXT) $(PY_FILES) $(DESTDIR)$(PYTHONDIR)/uniqd/
