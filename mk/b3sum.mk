# SPDX-License-Identifier: GPL-2.0
#
# b3sum: a b3sum-compatible command built from the module's own BLAKE3
# source. It is installed as uniqd-b3sum: Debian's b3sum package owns
# /usr/bin/b3sum.
B3SUM_DEPS := tools/b3sum/b3sum.c $(B3_HDRS) $(B3_OBJS) VERSION
TOOL_BINS += $(B)/bin/b3sum $(B)/static-bin/b3sum
.PHONY: b3sum bench-native install-b3sum
b3sum: $(B)/bin/b3sum $(B)/static-bin/b3sum
$(B)/bin/b3sum: $(B3SUM_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(LDFLAGS) tools/b3sum/b3sum.c $(B3_OBJS) -o $@
$(B)/static-bin/b3sum: $(B3SUM_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(STATIC) tools/b3sum/b3sum.c $(B3_OBJS) -o $@
# OpenSSL's libcrypto (libssl-dev, tools/deps.sh) for SHA-256 and BLAKE2b.
$(B)/native-bench/bench_blake3_native: tools/bench/bench_blake3_native.c $(B3_HDRS) $(B3_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< $(B3_OBJS) -lcrypto -o $@
bench-native: $(B)/native-bench/bench_blake3_native
	$<
$(B)/tests/blake3_afalg: tests/blake3_vectors.h
$(B)/native/test_blake3: tests/blake3_vectors.h

install-user: install-b3sum
install-b3sum: $(B)/bin/b3sum
	$(INSTALL) -d $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 0755 $< $(DESTDIR)$(BINDIR)/uniqd-b3sum
UNINSTALL_FILES += $(BINDIR)/uniqd-b3sum

# The SIMD implementations: each file with its instruction set's flags; the
# code checks the CPU before calling them (uniqd/blake3/blake3_impl.c).
$(B3_OBJS): $(B3_HDRS)
ifeq ($(shell $(CC) -dumpmachine | cut -d- -f1),x86_64)
B3_SIMD_FLAGS_blake3_sse41 := -msse4.1
B3_SIMD_FLAGS_blake3_avx2 := -mavx2
B3_SIMD_FLAGS_blake3_avx512 := -mavx512f -mavx512vl
$(B)/obj/blake3_sse41.o: USER_CFLAGS += $(B3_SIMD_FLAGS_blake3_sse41)
$(B)/obj/blake3_avx2.o: USER_CFLAGS += $(B3_SIMD_FLAGS_blake3_avx2)
$(B)/obj/blake3_avx512.o: USER_CFLAGS += $(B3_SIMD_FLAGS_blake3_avx512)
endif
