# SPDX-License-Identifier: GPL-2.0
#
# make install: the module, libuniqd, uniqdctl, man pages, udev rule and
# modules-load.d file. DESTDIR and PREFIX are honoured; the directories below
# may be overridden one by one.
#
#   make install                 everything (builds the module for KDIR)
#   make install-user            everything but the module (no kernel tree)
#   make uninstall               removes what install-user and the module put
#
# The module, the udev rule and the modules-load.d file go to system paths
# (under DESTDIR, never under PREFIX): that is where the kernel, udev and
# systemd look. After installing a module for the running system (no
# DESTDIR), depmod -a runs for its kernel release; with DESTDIR, depmod -b
# DESTDIR, as the kernel's own modules_install does (DEPMOD=true skips it).

BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
UDEVRULESDIR ?= /usr/lib/udev/rules.d
MODULESLOADDIR ?= /usr/lib/modules-load.d
DEPMOD ?= /sbin/depmod
LDCONFIG ?= /sbin/ldconfig
INSTALL ?= install

# The release the module is built for: KDIR's own (utsrelease.h), which is
# also its vermagic; /lib/modules/<release>/build trees agree with it.
INSTALL_KVER ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
		  $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
MODDIR ?= /lib/modules/$(INSTALL_KVER)/extra

# Programs for $(BINDIR). Another fragment may append its own (e.g. b3sum)
# and, if it sorts after this one, add it as a prerequisite of install-bin.
INSTALL_BINS += $(B)/bin/uniqdctl

MAN_PAGES := $(wildcard Documentation/man/*.3 Documentation/man/*.4 \
			Documentation/man/*.8)

# Fragments are read in name order and this one comes before libuniqd.mk:
# prerequisites name targets (lib, uniqdctl), and the variables of the later
# fragments are only used in recipes, which make expands when they run.

# The .pc file: libdir and includedir relative to ${prefix} when they are
# under PREFIX, so that pkg-config --define-prefix and sysroots work.
pc_rel = $(patsubst $(PREFIX)/%,$${prefix}/%,$(patsubst $(PREFIX),$${prefix},$(1)))

.PHONY: install install-user install-lib install-headers install-bin \
	install-man install-module install-udev install-modules-load uninstall

install: install-user install-module

install-user: install-lib install-headers install-bin install-man \
	install-udev install-modules-load

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
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && [ -x $(LDCONFIG) ]; then \
		echo "$(LDCONFIG)"; $(LDCONFIG); fi

# libuniqd.h needs nothing else; <linux/uniqd.h> is for programs that use
# the ioctls directly (uniqd(4)) or want the UNIQD_FEAT_* bits.
install-headers:
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/linux
	$(INSTALL) -m 0644 $(LIBUNIQD_DIR)/libuniqd.h $(DESTDIR)$(INCLUDEDIR)/
	$(INSTALL) -m 0644 include/uapi/linux/uniqd.h $(DESTDIR)$(INCLUDEDIR)/linux/

install-bin: uniqdctl $(INSTALL_BINS)
	$(INSTALL) -d $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 0755 $(INSTALL_BINS) $(DESTDIR)$(BINDIR)/

install-man: $(MAN_PAGES)
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man4 \
		$(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 0644 $(filter %.3,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man3/
	$(INSTALL) -m 0644 $(filter %.4,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man4/
	$(INSTALL) -m 0644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man8/

# Built like `make module`, but with an absolute output directory: kbuild's
# M= must be absolute.
install-module:
	@test -n "$(KDIR)" || { echo "install: no kernel build tree: set KDIR"; exit 1; }
	@test -n "$(INSTALL_KVER)" || { echo "install: no kernel release in" \
		"$(KDIR)/include/generated/utsrelease.h: set KDIR or INSTALL_KVER"; exit 1; }
	tools/build-module.sh $(KDIR) $(abspath $(B))/module
	$(INSTALL) -d $(DESTDIR)$(MODDIR)
	$(INSTALL) -m 0644 $(abspath $(B))/module/src/uniqd.ko $(DESTDIR)$(MODDIR)/
	@if [ -n "$(DESTDIR)" ]; then \
		echo "$(DEPMOD) -b $(DESTDIR) -a $(INSTALL_KVER)"; \
		out=$$($(DEPMOD) -b $(DESTDIR) -a $(INSTALL_KVER) 2>&1); rc=$$?; \
		[ -z "$$out" ] || printf '%s\n' "$$out" | \
			grep -v 'could not open modules\.\(order\|builtin\)' >&2; \
		exit $$rc; \
	else \
		echo "$(DEPMOD) -a $(INSTALL_KVER)"; \
		$(DEPMOD) -a $(INSTALL_KVER); \
	fi

install-udev:
	$(INSTALL) -d $(DESTDIR)$(UDEVRULESDIR)
	$(INSTALL) -m 0644 packaging/60-uniqd.rules $(DESTDIR)$(UDEVRULESDIR)/

install-modules-load:
	$(INSTALL) -d $(DESTDIR)$(MODULESLOADDIR)
	$(INSTALL) -m 0644 packaging/uniqd.conf $(DESTDIR)$(MODULESLOADDIR)/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libuniqd.a $(DESTDIR)$(LIBDIR)/libuniqd.so \
		$(DESTDIR)$(LIBDIR)/$(LIBUNIQD_SONAME) \
		$(DESTDIR)$(LIBDIR)/$(notdir $(LIBUNIQD_SO)) \
		$(DESTDIR)$(PKGCONFIGDIR)/libuniqd.pc \
		$(DESTDIR)$(INCLUDEDIR)/libuniqd.h \
		$(DESTDIR)$(INCLUDEDIR)/linux/uniqd.h \
		$(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INSTALL_BINS))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(filter %.3,$(MAN_PAGES)))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man4/,$(notdir $(filter %.4,$(MAN_PAGES)))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(filter %.8,$(MAN_PAGES)))) \
		$(DESTDIR)$(UDEVRULESDIR)/60-uniqd.rules \
		$(DESTDIR)$(MODULESLOADDIR)/uniqd.conf
	@if [ -n "$(INSTALL_KVER)" ] && [ -f $(DESTDIR)$(MODDIR)/uniqd.ko ]; then \
		echo "rm -f $(DESTDIR)$(MODDIR)/uniqd.ko"; \
		rm -f $(DESTDIR)$(MODDIR)/uniqd.ko; \
		if [ -z "$(DESTDIR)" ]; then $(DEPMOD) -a $(INSTALL_KVER); fi; \
	fi

# The README's example, built the way its users build it: against an
# installed libuniqd (a staged install-user under $(B)/stage) with
# pkg-config, statically for the VM guest (tests/lib_example.c runs it).
STAGE := $(abspath $(B))/stage
STAGE_PKG = PKG_CONFIG_LIBDIR=$(STAGE)/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(STAGE) pkg-config
TOOL_BINS += $(B)/static-bin/libuniqd-example

$(B)/stage/.done: $(B)/lib/libuniqd.a $(B)/lib/libuniqd.so $(B)/bin/uniqdctl $(B)/static-bin/uniqdctl $(MAN_PAGES) tools/libuniqd/libuniqd.pc.in \
		tools/libuniqd/libuniqd.h include/uapi/linux/uniqd.h
	rm -rf $(STAGE)
	$(MAKE) -s install-user DESTDIR=$(STAGE) PREFIX=/usr
	touch $@

$(B)/static-bin/libuniqd-example: tools/libuniqd/example/example.c $(B)/stage/.done
	@mkdir -p $(dir $@)
	$(CC) -static -o $@ $< $$($(STAGE_PKG) --static --cflags --libs libuniqd)
