# SPDX-License-Identifier: GPL-2.0
#
# uniqd.ko for the kernel build tree KDIR (Kbuild passes VERSION to
# MODULE_VERSION).
#
#   make module
#   make install-module     to $(DESTDIR)/lib/modules/<release>/extra, depmod
#
# After installing a module for the running system (no DESTDIR), depmod -a
# runs for its kernel release; with DESTDIR, depmod -b DESTDIR, as the
# kernel's own modules_install does (DEPMOD=true skips it).

DEPMOD ?= /sbin/depmod
# The release the module is built for: KDIR's own (utsrelease.h), which is
# also its vermagic; /lib/modules/<release>/build trees agree with it.
INSTALL_KVER ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
		  $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
MODDIR ?= /lib/modules/$(INSTALL_KVER)/extra

.PHONY: module install-module uninstall-module
install: install-module
uninstall: uninstall-module

# kbuild's M= must be absolute.
module:
	@test -n "$(KDIR)" || { echo "no kernel build tree: set KDIR"; exit 1; }
	@echo "module: KDIR=$(KDIR): $(KDIR_FROM)"
	tools/build-module.sh "$(KDIR)" "$(abspath $(B))/module"
	@echo "built $(B)/module/src/uniqd.ko for $(KDIR)"

install-module: module
	@test -n "$(INSTALL_KVER)" || { echo "install: no kernel release in" \
		"$(KDIR)/include/generated/utsrelease.h: set KDIR or INSTALL_KVER"; exit 1; }
	$(INSTALL) -d $(DESTDIR)$(MODDIR)
	$(INSTALL) -m 0644 "$(abspath $(B))/module/src/uniqd.ko" $(DESTDIR)$(MODDIR)/
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

uninstall-module:
	@if [ -n "$(INSTALL_KVER)" ] && [ -f $(DESTDIR)$(MODDIR)/uniqd.ko ]; then \
		echo "rm -f $(DESTDIR)$(MODDIR)/uniqd.ko"; \
		rm -f $(DESTDIR)$(MODDIR)/uniqd.ko; \
		if [ -z "$(DESTDIR)" ]; then $(DEPMOD) -a $(INSTALL_KVER); fi; \
	fi
