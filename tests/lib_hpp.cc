// SPDX-License-Identifier: GPL-2.0
/*
 * <uniqd.hpp> against the module, as a static C++ program in the guest:
 * typed handles agree across processes, resolve() points into the mapping,
 * for_each() walks what was interned, and the module's errors arrive as
 * uniqd::error with libuniqd's sentence. Runs again with UNIQD_NOMAP=1
 * (resolve() then keeps copies). tests/native/cxx/ covers the rest.
 */
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

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
		close(fd[0]);
		try {
			uniqd::pool p("lib.hpp", uniqd::options{ UNIQD_OPEN_EXISTING, nullptr, {} });
			auto c = p.register_class<ident>();

			for (int i = 0; i < N; i++) {
				std::uint64_t h = p.intern(c, key(i)).raw();

				if (write(fd[1], &h, sizeof(h)) != sizeof(h))
					_exit(3);
			}
		} catch (const uniqd::error &e) {
			printf("child: %s\n", e.what());
			_exit(2);
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
	bool mapped = false;
	int ret;

	th_init(ut_nomap() ? "lib-hpp-nomap" : "lib-hpp");

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

	uniqd::pool p("lib.hpp", uniqd::options{ UNIQD_OPEN_NEW, nullptr, {} });
	auto ci = p.register_class<ident>();
	auto cl = p.register_class<layout>();

	th_case("intern, typed handles") {
		std::unordered_set<uniqd::handle<ident>> set;

		mapped = p.map_info().addr != nullptr;
		CHECK(mapped == !ut_nomap(), "mapped %d", mapped);
		for (int i = 0; i < N; i++)
			hs.push_back(p.intern(ci, key(i)));
		for (int i = 0; i < N; i++)
			set.insert(p.intern(ci, key(i % 50)));
		CHECK(set.size() == 50, "%zu", set.size());
		CHECK(p.lookup(ci, key(7)) == hs[7] && !p.lookup(ci, "absent"), "lookup");
		CHECK(p.intern(cl, key(7)).raw() != hs[7].raw(), "classes differ");
	}

	th_case("another process gets the same handles") {
		std::vector<std::uint64_t> other;

		CHECK(child_handles(other), "the child failed");
		for (int i = 0; i < N && i < (int)other.size(); i++)
			CHECK(uniqd::handle<ident>::from_raw(other[i]) == hs[i], "key %d", i);
	}

	th_case("resolve") {
		auto m = p.map_info();
		const char *base = static_cast<const char *>(m.addr);

		for (int i = 0; i < N; i++) {
			std::string_view s = p.resolve(hs[i]);

			CHECK(s == key(i), "%d: '%.*s'", i, (int)s.size(), s.data());
			if (mapped)
				CHECK(s.data() >= base && s.data() < base + m.size, "%d: a copy", i);
			else
				CHECK(p.resolve(hs[i]).data() == s.data(), "%d: copied twice", i);
		}
	}

	th_case("for_each") {
		int n = 0;

		p.for_each(ci, [&](uniqd::handle<ident> h, std::string_view s) {
			CHECK(n < N && h == hs[n] && s == key(n), "entry %d", n);
			n++;
		});
		CHECK(n == N, "%d entries", n);
		n = 0;
		CHECK(p.for_each([&](uniqd::handle<>, uniqd::class_id<> c, std::string_view) {
			return c.value() == ci.value() && ++n;
		}) == false && n == N, "stopped at the first layout: %d", n);
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
