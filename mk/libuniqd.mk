# SPDX-License-Identifier: GPL-2.0
#
# libuniqd: libuniqd.a (linked into the guest's static programs through
# TEST_LIBS, and into uniqdctl), libuniqd.so.1 and its symlinks.
# The pkg-config file is written at install time (mk/install.mk) so that it
# carries the PREFIX of the install.
#
#   make lib

UNIQD_VERSION := 1.0.0
LIBUNIQD_SOVERSION := 1

LIBUNIQD_DIR := tools/libuniqd
LIBUNIQD_SRCS := $(wildcard $(LIBUNIQD_DIR)/*.c)
LIBUNIQD_HDRS := $(wildcard $(LIBUNIQD_DIR)/*.h) include/uapi/linux/uniqd.h
LIBUNIQD_OBJS := $(patsubst $(LIBUNIQD_DIR)/%.c,$(B)/libuniqd/%.o,$(LIBUNIQD_SRCS))
LIBUNIQD_A := $(B)/lib/libuniqd.a
LIBUNIQD_SO := $(B)/lib/libuniqd.so.$(UNIQD_VERSION)
LIBUNIQD_SONAME := libuniqd.so.$(LIBUNIQD_SOVERSION)
LIBUNIQD_LINKS := $(B)/lib/$(LIBUNIQD_SONAME) $(B)/lib/libuniqd.so

# One set of position-independent objects serves both libraries.
LIBUNIQD_CFLAGS := $(USER_CFLAGS) -fPIC -D_GNU_SOURCE -I$(LIBUNIQD_DIR)

TEST_LIBS += $(LIBUNIQD_A)

.PHONY: lib
lib: $(LIBUNIQD_A) $(LIBUNIQD_SO) $(LIBUNIQD_LINKS)
userspace: lib

$(B)/libuniqd/%.o: $(LIBUNIQD_DIR)/%.c $(LIBUNIQD_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIBUNIQD_CFLAGS) -c $< -o $@

$(LIBUNIQD_A): $(LIBUNIQD_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# -z nodelete: threads' cache destructors live in the library, so it must
# never be unloaded while a thread may still exit.
$(LIBUNIQD_SO): $(LIBUNIQD_OBJS) $(LIBUNIQD_DIR)/libuniqd.map
	@mkdir -p $(dir $@)
	$(CC) -shared -pthread -Wl,-soname,$(LIBUNIQD_SONAME) \
		-Wl,--version-script=$(LIBUNIQD_DIR)/libuniqd.map \
		-Wl,-z,nodelete -Wl,-z,defs -Wl,-z,relro -Wl,-z,now \
		$(LIBUNIQD_OBJS) -o $@

$(B)/lib/$(LIBUNIQD_SONAME): $(LIBUNIQD_SO)
	ln -sf $(notdir $<) $@

$(B)/lib/libuniqd.so: $(B)/lib/$(LIBUNIQD_SONAME)
	ln -sf $(notdir $<) $@

# The native test of the library runs it against a fake device: it links
# libuniqd.a after its own uq_sys_* functions.
$(B)/native/test_libuniqd: tests/native/test_libuniqd.c tests/harness.h $(LIBUNIQD_A) $(LIBUNIQD_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -pthread $< $(LIBUNIQD_A) -o $@
