// SPDX-License-Identifier: GPL-2.0
/*
 * <uniqd.hpp> against the module, as a static C++ program in the guest:
 * typed handles agree across processes, resolve() points into the mapping,
 * for_each() walks what was interned, the class cache makes no system call
 * after its first, digests agree across pools, a pool saved, restored and
 * merged keeps every handle's meaning, and the module's errors arrive as
 * std::error_code (and, with exceptions, as uniqd::error) with libuniqd's
 * sentence. Built twice (mk/libuniqd.mk): lib_hpp as is, lib_hpp_noexc
 * with -fno-exceptions -fno-rtti, as LLVM-style code builds, where only
 * the error_code overloads exist. Each runs again with UNIQD_NOMAP=1
 * (resolve() then keeps copies, and save() is refused).
 * tests/native/cxx/ covers the rest.
 */
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "uniqd.hpp"
#include "uniqd_test.h"

namespace {

struct ident {
	static constexpr const char *name = "hpp.ident";
};
struct layout {
	static constexpr const char *name = "hpp.layout";
};

constexpr int N = 500;

std::string key(int i)
{
	return "identifier_" + std::to_string(i);
}

/* Another process interns the same keys: its handles, through a pipe. */
bool child_handles(std::vector<std::uint64_t> &out)
{
	int fd[2];
	pid_t pid;
	int st;

	if (pipe(fd))
		return false;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		std::error_code ec;
		uniqd::pool p = uniqd::pool::open("lib.hpp", UNIQD_OPEN_EXISTING, ec);
		auto c = p.register_class<ident>(ec);

		close(fd[0]);
		if (ec) {
			printf("child: %s\n", uniqd::last_error());
			_exit(2);
		}
		for (int i = 0; i < N; i++) {
			std::uint64_t h = p.intern(c, key(i), ec).raw();

			if (ec) {
				printf("child: %s\n", uniqd::last_error());
				_exit(2);
			}
			if (write(fd[1], &h, sizeof(h)) != sizeof(h))
				_exit(3);
		}
		_exit(0);
	}
	close(fd[1]);
	out.resize(N);
	for (int i = 0; i < N; i++)
		if (read(fd[0], &out[i], sizeof(out[i])) != sizeof(out[i]))
			break;
	close(fd[0]);
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

} /* namespace */

int main(int, char **argv)
{
	std::vector<uniqd::handle<ident>> hs;
	std::error_code ec;
	bool mapped = false;
	int ret;

#if UNIQD_HPP_EXCEPTIONS
	th_init(ut_nomap() ? "lib-hpp-nomap" : "lib-hpp");
#else
	th_init(ut_nomap() ? "lib-hpp-noexc-nomap" : "lib-hpp-noexc");
#endif

	th_case("errors are error codes") {
		uniqd::pool p = uniqd::pool::open("lib.hpp.absent", UNIQD_OPEN_EXISTING, ec);

		CHECK(!p && ec == std::errc::no_such_file_or_directory, "%d", ec.value());
		CHECK(std::strstr(uniqd::last_error(), "attach to pool 'lib.hpp.absent'") &&
		      std::strstr(uniqd::last_error(), "no pool of that name"), "%s",
		      uniqd::last_error());
	}

#if UNIQD_HPP_EXCEPTIONS
	th_case("errors are uniqd::error") {
		try {
			uniqd::pool p("lib.hpp.absent", uniqd::options{ UNIQD_OPEN_EXISTING, nullptr, {} });
			CHECK(false, "opened");
		} catch (const uniqd::error &e) {
			CHECK(e.code() == std::errc::no_such_file_or_directory, "%d", e.code().value());
			CHECK(std::strstr(e.what(), "attach to pool 'lib.hpp.absent'") &&
			      std::strstr(e.what(), "no pool of that name"), "%s", e.what());
		}
	}
#endif

	uniqd::pool p = uniqd::pool::open("lib.hpp", UNIQD_OPEN_NEW, ec);
	auto ci = p.register_class<ident>(ec);
	auto cl = p.register_class<layout>(ec);

	th_case("intern, typed handles") {
		std::unordered_set<uniqd::handle<ident>> set;

		CHECK(p && ci && cl, "%s", uniqd::last_error());
		mapped = p.map_info(ec).addr != nullptr;
		CHECK(mapped == !ut_nomap(), "mapped %d", mapped);
		for (int i = 0; i < N; i++)
			hs.push_back(p.intern(ci, key(i), ec));
		for (int i = 0; i < N; i++)
			set.insert(p.intern(ci, key(i % 50), ec));
		CHECK(!ec && set.size() == 50, "%zu: %s", set.size(), ec.message().c_str());
		CHECK(p.lookup(ci, key(7), ec) == hs[7] && !p.lookup(ci, "absent", ec) && !ec, "lookup");
		CHECK(p.intern(cl, key(7), ec).raw() != hs[7].raw(), "classes differ");
#if UNIQD_HPP_EXCEPTIONS
		CHECK(p.intern(ci, key(7)) == hs[7] && p.lookup(ci, key(7)) == hs[7], "throwing");
#endif
	}

	th_case("another process gets the same handles") {
		std::vector<std::uint64_t> other;

		CHECK(child_handles(other), "the child failed");
		for (int i = 0; i < N && i < (int)other.size(); i++)
			CHECK(uniqd::handle<ident>::from_raw(other[i]) == hs[i], "key %d", i);
	}

	th_case("the class cache: no system call after the first") {
		struct uniqd_pool_stats before = p.stats(ec), after;
		uniqd::class_id<ident> c;

		for (int i = 0; i < 1000; i++)
			c = p.cached_class<ident>(ec);
		after = p.stats(ec);
		CHECK(c == ci && !ec, "%u %u", c.value(), ci.value());
		/* No INTERN or LOOKUP went to the kernel, and no class was
		 * added (the native test counts the CLASS calls: one). */
		CHECK(after.hits == before.hits && after.misses == before.misses &&
		      after.classes == 2, "hits %llu -> %llu, classes %u",
		      (unsigned long long)before.hits, (unsigned long long)after.hits, after.classes);
	}

	th_case("resolve") {
		auto m = p.map_info(ec);
		const char *base = static_cast<const char *>(m.addr);

		for (int i = 0; i < N; i++) {
			std::string_view s = p.resolve(hs[i], ec);

			CHECK(s == key(i), "%d: '%.*s'", i, (int)s.size(), s.data());
			if (mapped)
				CHECK(s.data() >= base && s.data() < base + m.size, "%d: a copy", i);
			else
				CHECK(p.resolve(hs[i], ec).data() == s.data(), "%d: copied twice", i);
		}
	}

	th_case("for_each") {
		int n = 0;

		p.for_each(ci, [&](uniqd::handle<ident> h, std::string_view s) {
			CHECK(n < N && h == hs[n] && s == key(n), "entry %d", n);
			n++;
		}, ec);
		CHECK(n == N && !ec, "%d entries", n);
		n = 0;
		CHECK(p.for_each([&](uniqd::handle<>, uniqd::class_id<> c, std::string_view) {
			return c.value() == ci.value() && ++n;
		}, ec) == false && n == N, "stopped at the first layout: %d", n);
	}

	th_case("save, restore, merge, digest") {
		int fd = memfd_create("lib.hpp.snap", MFD_CLOEXEC);
		uniqd_snapshot_info info = p.save(fd, ec);

		if (!mapped) {
			CHECK(ec.value() == EOPNOTSUPP, "save unmapped: %s", ec.message().c_str());
		} else {
			CHECK(!ec && info.entries == N + 1, "save: %s, %llu entries", uniqd::last_error(),
			      (unsigned long long)info.entries);
			uniqd::digest_bytes d7 = p.digest(hs[7], ec);
			CHECK(!ec, "digest: %s", uniqd::last_error());

			/* The name is taken while the pool lives. */
			lseek(fd, 0, SEEK_SET);
			uniqd::pool dup = uniqd::pool::restore(fd, uniqd::options{}, ec);
			CHECK(!dup && (ec.value() == EEXIST || ec.value() == EADDRINUSE),
			      "restore over a live pool: %s", ec.message().c_str());

			/* Merged into another pool: the saved handles map to its own. */
			uniqd::pool q = uniqd::pool::open("lib.hpp.merged", UNIQD_OPEN_NEW, ec);
			q.register_class("lib.hpp.first", ec);
			lseek(fd, 0, SEEK_SET);
			uniqd::snapshot_map m = q.merge(fd, ec);
			CHECK(m && !ec && m.size() == info.entries, "merge: %s", uniqd::last_error());
			for (int i = 0; i < N; i++)
				CHECK(m[hs[i]] && m[hs[i]] != hs[i] && q.resolve(m[hs[i]], ec) == key(i),
				      "merged %d", i);
			CHECK(q.digest(m[hs[7]], ec) == d7, "a digest is the same in every pool");

			/* Restored once the pool is gone: every handle as it was. */
			p.close();
			lseek(fd, 0, SEEK_SET);
			uniqd_snapshot_info rinfo{};
			p = uniqd::pool::restore(fd, uniqd::options{}, ec, &rinfo);
			CHECK(p && !ec && rinfo.entries == info.entries, "restore: %s", uniqd::last_error());
			for (int i = 0; p && i < N; i++)
				CHECK(p.resolve(hs[i], ec) == key(i), "restored %d", i);
			CHECK(p.find_class<ident>("hpp.ident", ec) == ci && p.cached_class<ident>(ec) == ci,
			      "the class ids, and the cache follows the new pool object");
			CHECK(p.digest(hs[7], ec) == d7, "digest after restore");
#if UNIQD_HPP_EXCEPTIONS
			lseek(fd, 0, SEEK_SET);
			try {
				uniqd::pool::restore(fd);
				CHECK(false, "restored twice");
			} catch (const uniqd::error &e) {
				CHECK(e.code() == std::errc::file_exists ||
				      e.code() == std::errc::address_in_use, "%s", e.what());
			}
#endif
		}
		close(fd);
	}

	th_case("close") {
		p.close();
		CHECK(!p, "closed");
	}
	ret = th_finish();
	if (mapped)
		ret |= ut_rerun_nomap(argv);
	return ret;
}
