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
# builds: man pages, the udev rule, the modules-load.d file and the
# persistent pools' service (packaging/uniqd-persist*: systemd units and the
# script they run, at fixed paths like the udev rule's).

LDCONFIG ?= /sbin/ldconfig
SYSTEMDUNITDIR ?= /usr/lib/systemd/system
UNIQDLIBEXECDIR := /usr/lib/uniqd
PERSIST_UNITS := packaging/uniqd-persist.service packaging/uniqd-persist-save.service \
	packaging/uniqd-persist-save.timer

MAN_PAGES := $(wildcard Documentation/man/*.[134578])
MAN_SECTIONS := $(sort $(subst .,,$(suffix $(MAN_PAGES))))

.PHONY: install install-user install-man install-udev install-modules-load install-persist uninstall

install: install-user

install-user: install-man install-udev install-modules-load install-persist

install-man: $(MAN_PAGES)
	$(foreach s,$(MAN_SECTIONS),$(INSTALL) -d $(DESTDIR)$(MANDIR)/man$(s) && \
		$(INSTALL) -m 0644 $(filter %.$(s),$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man$(s)/ &&) true

install-udev:
	$(INSTALL) -d $(DESTDIR)$(UDEVRULESDIR)
	$(INSTALL) -m 0644 packaging/60-uniqd.rules $(DESTDIR)$(UDEVRULESDIR)/

install-modules-load:
	$(INSTALL) -d $(DESTDIR)$(MODULESLOADDIR)
	$(INSTALL) -m 0644 packaging/uniqd.conf $(DESTDIR)$(MODULESLOADDIR)/

install-persist:
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(UNIQDLIBEXECDIR)
	$(INSTALL) -m 0644 $(PERSIST_UNITS) $(DESTDIR)$(SYSTEMDUNITDIR)/
	$(INSTALL) -m 0755 packaging/uniqd-persist $(DESTDIR)$(UNIQDLIBEXECDIR)/

UNINSTALL_FILES += $(foreach u,$(PERSIST_UNITS),$(SYSTEMDUNITDIR)/$(notdir $(u))) \
	$(UNIQDLIBEXECDIR)/uniqd-persist
UNINSTALL_FILES += $(foreach p,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p))) \
	$(UDEVRULESDIR)/60-uniqd.rules $(MODULESLOADDIR)/uniqd.conf

uninstall:
	rm -f $(addprefix $(DESTDIR),$(UNINSTALL_FILES))
