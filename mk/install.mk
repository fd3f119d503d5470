# SPDX-License-Identifier: GPL-2.0
#
# make install: the module, libuniqd, the tools, man pages, udev rule and
# modules-load.d file. DESTDIR, PREFIX and the directories of mk/common.mk
# are honoured.
#
#   make install                 everything (builds the module for KDIR)
#   make install-user            everything but the module (no kernel tree)
#   make uninstall               removes what install-user and the module put
#
# Each fragment adds its own install-<thing> to install-user (or install)
# and its files to UNINSTALL_FILES; this one installs the files nothing
# builds: man pages, the udev rule and the modules-load.d file.

LDCONFIG ?= /sbin/ldconfig

MAN_PAGES := $(wildcard Documentation/man/*.[1348])
MAN_SECTIONS := $(sort $(subst .,,$(suffix $(MAN_PAGES))))

.PHONY: install install-user install-man install-udev install-modules-load uninstall

install: install-user

install-user: install-man install-udev install-modules-load

install-man: $(MAN_PAGES)
	$(foreach s,$(MAN_SECTIONS),$(INSTALL) -d $(DESTDIR)$(MANDIR)/man$(s) && \
		$(INSTALL) -m 0644 $(filter %.$(s),$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man$(s)/ &&) true

install-udev:
	$(INSTALL) -d $(DESTDIR)$(UDEVRULESDIR)
	$(INSTALL) -m 0644 packaging/60-uniqd.rules $(DESTDIR)$(UDEVRULESDIR)/

install-modules-load:
	$(INSTALL) -d $(DESTDIR)$(MODULESLOADDIR)
	$(INSTALL) -m 0644 packaging/uniqd.conf $(DESTDIR)$(MODULESLOADDIR)/

UNINSTALL_FILES += $(foreach p,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p))) \
	$(UDEVRULESDIR)/60-uniqd.rules $(MODULESLOADDIR)/uniqd.conf

uninstall:
	rm -f $(addprefix $(DESTDIR),$(UNINSTALL_FILES))
