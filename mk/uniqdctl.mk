# SPDX-License-Identifier: GPL-2.0
#
# uniqdctl: the command-line tool. $(B)/bin/uniqdctl is what `make install`
# installs (libuniqd linked in statically, so it needs no ldconfig);
# $(B)/static-bin/uniqdctl is fully static for the VM guest's /usr/bin.

UNIQDCTL_SRCS := $(wildcard tools/uniqdctl/*.c)
UNIQDCTL_DEPS := $(UNIQDCTL_SRCS) $(wildcard tools/uniqdctl/*.h) $(LIBUNIQD_A) $(LIBUNIQD_HDRS)

TOOL_BINS += $(B)/bin/uniqdctl $(B)/static-bin/uniqdctl

.PHONY: uniqdctl install-uniqdctl
uniqdctl: $(B)/bin/uniqdctl $(B)/static-bin/uniqdctl

$(B)/bin/uniqdctl: $(UNIQDCTL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(LDFLAGS) -pthread $(UNIQDCTL_SRCS) $(LIBUNIQD_A) -o $@

$(B)/static-bin/uniqdctl: $(UNIQDCTL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(STATIC) $(UNIQDCTL_SRCS) $(LIBUNIQD_A) -o $@

# Its bash completion, where bash-completion looks for it by the command's
# name (/usr/share/bash-completion/completions for PREFIX=/usr).
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

install-user: install-uniqdctl
install-uniqdctl: $(B)/bin/uniqdctl
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 0755 $< $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 0644 tools/uniqdctl/uniqdctl.bash-completion $(DESTDIR)$(BASHCOMPDIR)/uniqdctl
UNINSTALL_FILES += $(BINDIR)/uniqdctl $(BASHCOMPDIR)/uniqdctl

# tests/native/layouts_replay.c includes layouts.c and json.c; layouts.c
# includes <libuniqd.h> and so the generated <libuniqd_version.h>.
$(B)/native/layouts_replay: tools/uniqdctl/layouts.c tools/uniqdctl/layouts.h \
	tools/uniqdctl/json.c tools/uniqdctl/json.h $(LIBUNIQD_HDRS)

# uniqdctl snapshot info/verify on a snapshot libuniqd writes from the fake
# device's pool, and on corrupted copies (the checksum recomputed with the
# module's BLAKE3, in libuniqd.a).
$(B)/native/test_snapshot_cli: tests/native/test_snapshot_cli.c tests/harness.h $(FAKE_O) \
		$(LIBUNIQD_A) $(LIBUNIQD_HDRS) $(FAKE_HDRS) $(B)/bin/uniqdctl
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -DUNIQDCTL='"$(abspath $(B))/bin/uniqdctl"' $< $(FAKE_O) $(LIBUNIQD_A) -o $@

# The bash completion, in a bash without the bash-completion package (a
# script, like test_symbols).
NATIVE_BINS += $(B)/native/test_completion
$(B)/native/test_completion: tests/native/test_completion.sh tools/uniqdctl/uniqdctl.bash-completion
	@mkdir -p $(dir $@)
	sed -e 's|@COMP@|$(abspath tools/uniqdctl/uniqdctl.bash-completion)|' $< > $@
	chmod 0755 $@
