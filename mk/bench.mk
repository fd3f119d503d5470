# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks (never part of pass/fail); `make bench` runs
# tools/testing/bench.sh, which builds all of this, boots the bench VM and
# writes build/bench-results/. See Documentation/benchmarks.rst.
#
#   make bench-progs    the static programs the bench VM runs (/bench-bin)
#   make bench-corpus   the token corpus of the real-workload benchmark

BENCH_LIBUNIQD := $(LIBUNIQD_A)
BENCH_PROGS := $(patsubst tools/bench/%.c,$(B)/bench-bin/%,$(wildcard tools/bench/ub_*.c))
BENCH_COMMON := tools/bench/ubench.c tools/bench/ubench.h tools/libuniqd/hash.h
# The newest Debian linux-headers tree: its include/ is the corpus.
BENCH_HEADERS ?= $(lastword $(sort $(wildcard /usr/src/linux-headers-*-common/include)))

.PHONY: bench-progs bench-corpus
bench-progs: $(BENCH_PROGS)
bench-corpus: $(B)/bench-data/corpus.bin
userspace: bench-progs

$(B)/bench-bin/%: tools/bench/%.c $(BENCH_COMMON) include/uapi/linux/uniqd.h $(USER_OBJS) $(BENCH_LIBUNIQD)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(STATIC) $< tools/bench/ubench.c $(BENCH_EXTRA) $(BENCH_LIBUNIQD) $(USER_OBJS) -o $@

# LMDB, the peer in ub_corpus and ub_micro: Debian's liblmdb-dev
# (tools/deps.sh), its liblmdb.a linked in like everything the guest runs.
BENCH_LMDB_PROGS := $(B)/bench-bin/ub_corpus $(B)/bench-bin/ub_micro
$(BENCH_LMDB_PROGS): BENCH_EXTRA := tools/bench/ubench_lmdb.c -llmdb
$(BENCH_LMDB_PROGS): tools/bench/ubench_lmdb.c tools/bench/ubench_lmdb.h

$(B)/bench-host/tokenize: tools/bench/tokenize.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< -o $@

$(B)/bench-data/corpus.bin: $(B)/bench-host/tokenize
	@test -n "$(BENCH_HEADERS)" || { echo "bench: no /usr/src/linux-headers-*-common/include (install linux-headers-amd64)"; exit 1; }
	@mkdir -p $(dir $@)
	$< $@ $(BENCH_HEADERS)
