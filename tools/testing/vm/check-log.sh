#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the first kernel splat found in a guest console log, or nothing.
# Patterns are the kernel's own report headers, so a test's output that
# merely mentions a word does not trip them.
log=$1
patterns=(
	'WARNING: CPU: [0-9]+ PID: '
	'WARNING: at '
	'BUG: '
	'Oops: '
	'general protection fault'
	'Kernel panic'
	'KASAN: '
	'UBSAN: '
	'possible circular locking'
	'possible recursive locking'
	'inconsistent lock state'
	'suspicious RCU usage'
	'scheduling while atomic'
	'sleeping function called from invalid context'
	'blocked for more than [0-9]+ seconds'
	'rcu: INFO: rcu_.* detected stalls'
	'rcu_.* self-detected stall'
	'soft lockup'
	'unreferenced object 0x'
	'kmemleak: [0-9]+ new suspected memory leaks'
	'list_(add|del) corruption'
	'ODEBUG: '
	'Unable to handle kernel'
	'ida_free called'
	'refcount_t: '
)
re=$(IFS='|'; echo "${patterns[*]}")
tr -d '\r' < "$log" | grep -m1 -E "$re" | cut -c1-200
