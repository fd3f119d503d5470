# SPDX-License-Identifier: GPL-2.0
#
# DKMS: dkms.conf.in at the top of the tree describes the module.
#
#   make dkms-source     $(B)/dkms/uniqd-<version>: what DKMS needs, no more
#                        (dkms.conf, VERSION, Kbuild, uniqd/ without its
#                        KUnit suites and benchmark module, include/)
#   make dkms-add        copy it to /usr/src/uniqd-<version> and `dkms add` it
#   make dkms-check      tools/dkms-check.sh: dkms build for the 6.1 and 6.12
#                        kernels in a private DKMS tree

DKMS_SRC := $(B)/dkms/uniqd-$(UNIQD_VERSION)
DKMS_FILES := VERSION Kbuild uniqd include

.PHONY: dkms-source dkms-add dkms-check

dkms-source:
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)
	cp -a $(DKMS_FILES) $(DKMS_SRC)/
	rm -rf $(DKMS_SRC)/uniqd/kunit $(DKMS_SRC)/uniqd/bench
	sed 's|@VERSION@|$(UNIQD_VERSION)|' dkms.conf.in > $(DKMS_SRC)/dkms.conf
	find $(DKMS_SRC) \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' \
		-o -name '.*.cmd' -o -name modules.order -o -name Module.symvers \) -delete
	@echo "DKMS source tree in $(DKMS_SRC)"

dkms-add: dkms-source
	rm -rf /usr/src/uniqd-$(UNIQD_VERSION)
	cp -a $(DKMS_SRC) /usr/src/uniqd-$(UNIQD_VERSION)
	dkms add -m uniqd -v $(UNIQD_VERSION)

dkms-check:
	tools/dkms-check.sh
