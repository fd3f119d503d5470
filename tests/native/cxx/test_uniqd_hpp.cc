// SPDX-License-Identifier: GPL-2.0
/*
 * <uniqd.hpp> against the fake device (fake/uniqd_fake.c): errors as
 * exceptions and as std::error_code, typed classes and handles, string_view
 * in and out (zero-copy from a mapped pool, one kept copy otherwise),
 * for_each with lambdas (stop, exceptions), moves. Built with g++ -std=c++17
 * -Wall -Wextra -Werror; what must not compile is in uniqd_hpp_static.cc.
 */
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../fake/uniqd_fake.h"
#include "harness.h"
#include "uniqd.hpp"

namespace {

struct ident {
	static constexpr const char *name = "cxx.ident";
};
struct layout {};

/* Does F throw uniqd::error with errno ERR and a what() starting with WHAT? */
template <class F>
bool throws(F f, int err, const char *what, std::string &got)
{
	try {
		f();
	} catch (const uniqd::error &e) {
		got = std::to_string(e.code().value()) + ": " + e.what();
		return e.code().value() == err && e.code().category() == std::generic_category() &&
		       !std::strncmp(e.what(), what, std::strlen(what));
	}
	got = "no exception";
	return false;
}

} /* namespace */

int main()
{
	using namespace std::literals;
	std::string got;

	th_init("uniqd-hpp");
	fk_map = 1;

	th_case("errors are exceptions, or error codes") {
		uniqd::options o;
		std::error_code ec;

		o.device = "/dev/nonexistent";
		CHECK(throws([&] { uniqd::pool p("x", o); }, ENOENT,
			     "open /dev/nonexistent: No such file or directory (ENOENT)", got),
		      "%s", got.c_str());
		uniqd::pool p = uniqd::pool::open("x", o, ec);
		CHECK(!p && ec == std::errc::no_such_file_or_directory, "%s", ec.message().c_str());
		CHECK(std::strstr(uniqd::last_error(), "modprobe uniqd") != nullptr, "%s",
		      uniqd::last_error());
		CHECK(throws([&] { uniqd::pool q("private"); }, EACCES, "attach to pool 'private'", got),
		      "%s", got.c_str());
	}

	uniqd::pool p("cxx");
	uniqd::class_id<ident> ci;
	uniqd::class_id<layout> cl;

	th_case("classes") {
		ci = p.register_class<ident>();
		cl = p.register_class<layout>("cxx.layout"sv);
		CHECK(ci && cl && ci.value() != cl.value(), "%u %u", ci.value(), cl.value());
		CHECK(p.register_class<ident>("cxx.ident") == ci, "by name");
		CHECK(p.find_class<layout>("cxx.layout") == cl, "find");
		CHECK(!p.find_class("cxx.absent"), "find absent: no exception, empty");
		CHECK(throws([&] { p.register_class(""); }, EINVAL, "register class ''", got), "%s",
		      got.c_str());
	}

	uniqd::handle<ident> foo, bar;

	th_case("intern and lookup, string_view in") {
		std::string s = "foo";
		std::error_code ec;

		foo = p.intern(ci, s);
		bar = p.intern(ci, "bar"sv);
		CHECK(foo && bar && foo != bar, "%llx %llx", (unsigned long long)foo.raw(),
		      (unsigned long long)bar.raw());
		CHECK(p.intern(ci, "foo") == foo, "again");
		CHECK(p.intern(ci, std::string_view("foobar", 3)) == foo, "a view of part");
		CHECK(p.intern(cl, "foo").raw() != foo.raw(), "another class");
		CHECK(p.lookup(ci, "foo") == foo, "lookup");
		CHECK(!p.lookup(ci, "absent"), "lookup absent: empty, no exception");
		CHECK(p.intern(ci, ""sv), "empty content");
		/* Like pointers: ordered, hashed. */
		std::unordered_set<uniqd::handle<ident>> set{ foo, bar, p.intern(ci, "foo") };
		std::map<uniqd::handle<ident>, int> order{ { foo, 1 }, { bar, 2 } };
		CHECK(set.size() == 2 && order.begin()->first == (foo < bar ? foo : bar), "keys");

		p.intern(uniqd::class_id<ident>(999), "x", ec);
		CHECK(ec.value() == EBADSLT, "%s", ec.message().c_str());
		CHECK(throws([&] { p.intern(uniqd::class_id<ident>(999), "x"); }, EBADSLT,
			     "intern under class 999 in pool 'cxx'", got), "%s", got.c_str());
	}

	th_case("resolve from the mapping: no copy") {
		struct uniqd_map_info mi = p.map_info();
		std::string_view s = p.resolve(foo);
		const char *base;

		base = static_cast<const char *>(mi.addr);
		CHECK(mi.addr != nullptr, "the pool is not mapped");
		CHECK(s == "foo" && s.data() >= base && s.data() < base + mi.size,
		      "'%.*s' at %p", (int)s.size(), (const void *)s.data());
		uniqd::class_id<> c;
		CHECK(p.resolve(uniqd::handle<>(bar), c) == "bar" && c.value() == ci.value(),
		      "untyped, class %u", c.value());
		CHECK(throws([&] { p.resolve(uniqd::handle<ident>::from_raw(12345)); }, ENOENT,
			     "resolve handle 0x3039", got), "%s", got.c_str());
	}

	th_case("resolve without the mapping: one kept copy a handle") {
		uniqd::pool q("cxx", uniqd::options{ UNIQD_OPEN_NOMAP, nullptr, {} });
		std::vector<uniqd::handle<ident>> hs;
		std::string_view first;
		uniqd::class_id<> c;

		first = q.resolve(foo);
		CHECK(first == "foo", "'%.*s'", (int)first.size(), first.data());
		CHECK(q.resolve(foo).data() == first.data(), "copied twice");
		for (int i = 0; i < 2000; i++)
			hs.push_back(q.intern(ci, "k" + std::to_string(i)));
		for (int i = 0; i < 2000; i++)
			CHECK(q.resolve(hs[i]) == "k" + std::to_string(i), "k%d", i);
		CHECK(first == "foo", "a rehash moved the copy");
		CHECK(q.resolve(uniqd::handle<>(bar), c) == "bar" && c.value() == ci.value(),
		      "untyped, class %u", c.value());
		/* A moved pool keeps its copies. */
		uniqd::pool r = std::move(q);
		CHECK(r.resolve(foo).data() == first.data() && first == "foo", "after a move");
	}

	th_case("for_each with lambdas") {
		std::vector<std::pair<uniqd::handle<>, std::string>> all;
		std::vector<uniqd::handle<ident>> idents;
		std::size_t n = 0;
		bool done;

		done = p.for_each([&](uniqd::handle<> h, uniqd::class_id<> c, std::string_view s) {
			all.emplace_back(h, std::string(s));
			(void)c;
		});
		CHECK(done && all.size() >= 4, "%zu", all.size());
		for (std::size_t i = 1; i < all.size(); i++)
			CHECK(all[i - 1].first < all[i].first, "order at %zu", i);
		CHECK(!all.empty() && all[0].first == uniqd::handle<>(foo) && all[0].second == "foo",
		      "first");
		done = p.for_each(ci, [&](uniqd::handle<ident> h, std::string_view s) {
			idents.push_back(h);
			CHECK(p.resolve(h) == s, "resolve");
		});
		CHECK(done && idents.size() > 2 && idents[0] == foo && idents[1] == bar, "%zu",
		      idents.size());
		done = p.for_each([&](uniqd::handle<>, uniqd::class_id<>, std::string_view) {
			return ++n < 2;
		});
		CHECK(!done && n == 2, "stop: %zu", n);
		n = 0;
		try {
			p.for_each(ci, [&](uniqd::handle<ident>, std::string_view) {
				if (++n == 3)
					throw std::runtime_error("from the lambda");
			});
			CHECK(false, "no exception");
		} catch (const std::runtime_error &e) {
			CHECK(n == 3 && !std::strcmp(e.what(), "from the lambda"), "%zu %s", n,
			      e.what());
		}
	}

	th_case("intern_many") {
		uniqd_item it[3] = {};
		const char *k[3] = { "foo", "m1", "m2" };

		for (int i = 0; i < 3; i++) {
			it[i].data = k[i];
			it[i].len = std::strlen(k[i]);
			it[i].class_id = ci.value();
		}
		p.intern_many(it, 3);
		CHECK(it[0].handle == foo.raw() && it[1].handle && it[2].handle, "handles");
		it[1].class_id = 999;
		std::error_code ec;
		CHECK(p.intern_many(it, 3, 0, ec) == 1 && ec.value() == EBADSLT, "%s",
		      ec.message().c_str());
	}

	th_case("moves; an empty pool refuses") {
		uniqd::pool q = std::move(p);
		std::error_code ec;

		CHECK(!p && q, "moved");
		CHECK(q.lookup(ci, "foo") == foo, "the moved-to pool works");
		CHECK(throws([&] { p.intern(ci, "x"); }, EINVAL, "intern under class", got), "%s",
		      got.c_str());
		p = std::move(q);
		CHECK(p && !q && p.intern(ci, "foo") == foo, "moved back");
		p.stats();
		CHECK(p.info().name == std::string("cxx"), "info");
		q.resolve(foo, ec);
		CHECK(ec.value() == EINVAL, "resolve on an empty pool: %s", ec.message().c_str());
	}

	th_case("close") {
		p.close();
		CHECK(!p, "closed");
		CHECK(fk_files_open() == 0 && fk_maps_live() == 0, "%d files, %d mappings left",
		      fk_files_open(), fk_maps_live());
	}
	return th_finish();
}
