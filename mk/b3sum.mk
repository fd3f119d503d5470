# b3sum: a b3sum-compatible command built from the module's own BLAKE3 source.
B3SUM_DEPS := tools/b3sum/b3sum.c uniqd/blake3.h uniqd/blake3_compat.h $(B)/obj/blake3.o
TOOL_BINS += $(B)/bin/b3sum $(B)/static-bin/b3sum
.PHONY: b3sum bench-native
b3sum: $(B)/bin/b3sum $(B)/static-bin/b3sum
$(B)/bin/b3sum: $(B3SUM_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) tools/b3sum/b3sum.c $(B)/obj/blake3.o -o $@
$(B)/static-bin/b3sum: $(B3SUM_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(STATIC) tools/b3sum/b3sum.c $(B)/obj/blake3.o -o $@
$(B)/native-bench/bench_blake3_native: tools/bench/bench_blake3_native.c uniqd/blake3.h $(B)/obj/blake3.o
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< $(B)/obj/blake3.o -o $@
bench-native: $(B)/native-bench/bench_blake3_native
	$<
$(B)/tests/blake3_afalg: tests/blake3_vectors.h
$(B)/native/test_blake3: tests/blake3_vectors.h
