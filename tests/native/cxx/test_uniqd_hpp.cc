// SPDX-License-Identifier: GPL-2.0
/*
 * <uniqd.hpp> against the fake device (fake/uniqd_fake.c): errors as
 * std::error_code and (with exceptions) as uniqd::error, typed classes and
 * handles, the class caches, string_view in and out (zero-copy from a
 * mapped pool, one kept copy otherwise), for_each with lambdas (stop,
 * exceptions), intern_many, intern_refs, digest, save and merge (restore
 * is the VM's: the fake cannot), moves. Built twice by mk/libuniqd.mk:
 * g++ -std=c++17 -Wall -Wextra -Werror as is (test_uniqd_hpp), and with
 * -fno-exceptions -fno-rtti (test_uniqd_hpp_noexc), where only the
 * error_code overloads exist; what must not compile is in
 * uniqd_hpp_static.cc.
 */
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <linux/uniqd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../fake/uniqd_fake.h"
#include "harness.h"
#include "uniqd.hpp"

namespace {

struct ident {
	static constexpr const char *name = "cxx.ident";
};
struct layout {};
struct cached {
	static constexpr const char *name = "cxx.cached";
};
struct record {
	static constexpr const char *name = "cxx.record";
};

#if UNIQD_HPP_EXCEPTIONS
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
#endif

/* Did the last call set EC to ERR, with the sentence starting with WHAT? */
bool failed(const std::error_code &ec, int err, const char *what, std::string &got)
{
	got = std::to_string(ec.value()) + ": " + uniqd::last_error();
	return ec.value() == err && ec.category() == std::generic_category() &&
	       !std::strncmp(uniqd::last_error(), what, std::strlen(what));
}

void put64(unsigned char *p, std::uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

std::uint64_t get64(const unsigned char *p)
{
	std::uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

} /* namespace */

int main()
{
	using namespace std::literals;
	std::string got;
	std::error_code ec;

#if defined(UQ_HPP_SUITE)
	th_init(UQ_HPP_SUITE);
#elif UNIQD_HPP_EXCEPTIONS
	th_init("uniqd-hpp");
#else
	th_init("uniqd-hpp-noexc");
#endif
	fk_map = 1;

	th_case("errors are error codes") {
		uniqd::options o;

		o.device = "/dev/nonexistent";
		uniqd::pool p = uniqd::pool::open("x", o, ec);
		CHECK(!p && failed(ec, ENOENT,
				   "open /dev/nonexistent: No such file or directory (ENOENT)", got),
		      "%s", got.c_str());
		CHECK(ec == std::errc::no_such_file_or_directory, "%s", ec.message().c_str());
		CHECK(std::strstr(uniqd::last_error(), "modprobe uniqd") != nullptr, "%s",
		      uniqd::last_error());
		uniqd::pool q = uniqd::pool::open("private", 0, ec);
		CHECK(!q && failed(ec, EACCES, "attach to pool 'private'", got), "%s", got.c_str());
		uniqd::pool r = uniqd::pool::open("cxx", 0, ec);
		CHECK(r && !ec, "a good open clears the code: %s", ec.message().c_str());
	}

#if UNIQD_HPP_EXCEPTIONS
	th_case("errors are exceptions") {
		uniqd::options o;

		o.device = "/dev/nonexistent";
		CHECK(throws([&] { uniqd::pool p("x", o); }, ENOENT,
			     "open /dev/nonexistent: No such file or directory (ENOENT)", got),
		      "%s", got.c_str());
		CHECK(throws([&] { uniqd::pool q("private"); }, EACCES, "attach to pool 'private'", got),
		      "%s", got.c_str());
	}
#endif

	uniqd::pool p = uniqd::pool::open("cxx", 0, ec);
	uniqd::class_id<ident> ci;
	uniqd::class_id<layout> cl;

	th_case("classes") {
		CHECK(p, "open: %s", uniqd::last_error());
		ci = p.register_class<ident>(ec);
		cl = p.register_class<layout>("cxx.layout"sv, ec);
		CHECK(ci && cl && ci.value() != cl.value() && !ec, "%u %u", ci.value(), cl.value());
		CHECK(p.register_class<ident>("cxx.ident", ec) == ci, "by name");
		CHECK(p.find_class<layout>("cxx.layout", ec) == cl, "find");
		CHECK(!p.find_class("cxx.absent", ec) && !ec, "find absent: empty, no error");
		p.register_class("", ec);
		CHECK(failed(ec, EINVAL, "register class ''", got), "%s", got.c_str());
#if UNIQD_HPP_EXCEPTIONS
		CHECK(p.register_class<ident>() == ci && p.find_class<layout>("cxx.layout") == cl,
		      "throwing overloads");
		CHECK(!p.find_class("cxx.absent"), "find absent: no exception");
		CHECK(throws([&] { p.register_class(""); }, EINVAL, "register class ''", got), "%s",
		      got.c_str());
#endif
	}

	th_case("class caches: one CLASS call, then none") {
		unsigned long before = fk_calls(UNIQD_IOC_CLASS);
		uniqd::class_id<cached> c = p.cached_class<cached>(ec);
		unsigned long after = fk_calls(UNIQD_IOC_CLASS);
		static uniqd::class_slot slot;

		CHECK(c && !ec && c == p.find_class<cached>("cxx.cached", ec), "%u", c.value());
		CHECK(after == before + 1, "%lu CLASS calls", after - before);
		for (int i = 0; i < 1000; i++)
			CHECK(p.cached_class<cached>(ec) == c, "call %d", i);
		CHECK(slot.get<ident>(p, "cxx.ident", ec) == ci && slot.get<ident>(p, "cxx.ident", ec) == ci,
		      "class_slot");
		CHECK(fk_calls(UNIQD_IOC_CLASS) == after, "%lu more CLASS calls",
		      fk_calls(UNIQD_IOC_CLASS) - after);
		/* Another pool object: the slot resolves again, for that pool. */
		uniqd::pool other = uniqd::pool::open("cxx.other", 0, ec);
		uniqd::class_id<ident> filler = other.register_class<ident>(ec);
		uniqd::class_id<cached> oc = other.cached_class<cached>(ec);

		CHECK(filler && oc && oc != c && oc == other.find_class<cached>("cxx.cached", ec),
		      "other pool: %u (first pool's %u)", oc.value(), c.value());
		CHECK(p.cached_class<cached>(ec) == c, "back to the first pool");
		uniqd::pool empty;
		CHECK(!empty.cached_class<cached>(ec) && ec.value() == EINVAL, "an empty pool: %s",
		      ec.message().c_str());
#if UNIQD_HPP_EXCEPTIONS
		CHECK(p.cached_class<cached>() == c && slot.get<ident>(p, "cxx.ident") == ci,
		      "throwing overloads");
#endif
	}

	uniqd::handle<ident> foo, bar;

	th_case("intern and lookup, string_view in") {
		std::string s = "foo";

		foo = p.intern(ci, s, ec);
		bar = p.intern(ci, "bar"sv, ec);
		CHECK(foo && bar && foo != bar && !ec, "%llx %llx", (unsigned long long)foo.raw(),
		      (unsigned long long)bar.raw());
		CHECK(p.intern(ci, "foo", ec) == foo, "again");
		CHECK(p.intern(ci, std::string_view("foobar", 3), ec) == foo, "a view of part");
		CHECK(p.intern(cl, "foo", ec).raw() != foo.raw(), "another class");
		CHECK(p.lookup(ci, "foo", ec) == foo, "lookup");
		CHECK(!p.lookup(ci, "absent", ec) && !ec, "lookup absent: empty, no error");
		CHECK(p.intern(ci, ""sv, ec), "empty content");
		/* Like pointers: ordered, hashed. */
		std::unordered_set<uniqd::handle<ident>> set{ foo, bar, p.intern(ci, "foo", ec) };
		std::map<uniqd::handle<ident>, int> order{ { foo, 1 }, { bar, 2 } };
		CHECK(set.size() == 2 && order.begin()->first == (foo < bar ? foo : bar), "keys");

		p.intern(uniqd::class_id<ident>(999), "x", ec);
		CHECK(failed(ec, EBADSLT, "intern under class 999 in pool 'cxx'", got), "%s",
		      got.c_str());
#if UNIQD_HPP_EXCEPTIONS
		CHECK(p.intern(ci, "foo") == foo && p.lookup(ci, "foo") == foo, "throwing overloads");
		CHECK(throws([&] { p.intern(uniqd::class_id<ident>(999), "x"); }, EBADSLT,
			     "intern under class 999 in pool 'cxx'", got), "%s", got.c_str());
#endif
	}

	th_case("resolve from the mapping: no copy") {
		struct uniqd_map_info mi = p.map_info(ec);
		std::string_view s = p.resolve(foo, ec);
		const char *base;

		base = static_cast<const char *>(mi.addr);
		CHECK(mi.addr != nullptr, "the pool is not mapped");
		CHECK(s == "foo" && s.data() >= base && s.data() < base + mi.size,
		      "'%.*s' at %p", (int)s.size(), (const void *)s.data());
		uniqd::class_id<> c;
		CHECK(p.resolve(uniqd::handle<>(bar), c, ec) == "bar" && c.value() == ci.value(),
		      "untyped, class %u", c.value());
		p.resolve(uniqd::handle<ident>::from_raw(12345), ec);
		CHECK(failed(ec, ENOENT, "resolve handle 0x3039", got), "%s", got.c_str());
#if UNIQD_HPP_EXCEPTIONS
		CHECK(p.resolve(foo) == "foo" && p.map_info().addr == mi.addr, "throwing overloads");
		CHECK(throws([&] { p.resolve(uniqd::handle<ident>::from_raw(12345)); }, ENOENT,
			     "resolve handle 0x3039", got), "%s", got.c_str());
#endif
	}

	th_case("resolve without the mapping: one kept copy a handle") {
		uniqd::pool q = uniqd::pool::open("cxx", UNIQD_OPEN_NOMAP, ec);
		std::vector<uniqd::handle<ident>> hs;
		std::string_view first;
		uniqd::class_id<> c;

		first = q.resolve(foo, ec);
		CHECK(first == "foo", "'%.*s'", (int)first.size(), first.data());
		CHECK(q.resolve(foo, ec).data() == first.data(), "copied twice");
		for (int i = 0; i < 2000; i++)
			hs.push_back(q.intern(ci, "k" + std::to_string(i), ec));
		for (int i = 0; i < 2000; i++)
			CHECK(q.resolve(hs[i], ec) == "k" + std::to_string(i), "k%d", i);
		CHECK(first == "foo", "a rehash moved the copy");
		CHECK(q.resolve(uniqd::handle<>(bar), c, ec) == "bar" && c.value() == ci.value(),
		      "untyped, class %u", c.value());
		/* A moved pool keeps its copies. */
		uniqd::pool r = std::move(q);
		CHECK(r.resolve(foo, ec).data() == first.data() && first == "foo", "after a move");
		r.resolve(uniqd::handle<ident>::from_raw(12345), ec);
		CHECK(ec.value() == ENOENT, "%s", ec.message().c_str());
	}

	th_case("for_each with lambdas") {
		std::vector<std::pair<uniqd::handle<>, std::string>> all;
		std::vector<uniqd::handle<ident>> idents;
		std::size_t n = 0;
		bool done;

		done = p.for_each([&](uniqd::handle<> h, uniqd::class_id<> c, std::string_view s) {
			all.emplace_back(h, std::string(s));
			(void)c;
		}, ec);
		CHECK(done && !ec && all.size() >= 4, "%zu", all.size());
		for (std::size_t i = 1; i < all.size(); i++)
			CHECK(all[i - 1].first < all[i].first, "order at %zu", i);
		CHECK(!all.empty() && all[0].first == uniqd::handle<>(foo) && all[0].second == "foo",
		      "first");
		done = p.for_each(ci, [&](uniqd::handle<ident> h, std::string_view s) {
			idents.push_back(h);
			CHECK(p.resolve(h, ec) == s, "resolve");
		}, ec);
		CHECK(done && idents.size() > 2 && idents[0] == foo && idents[1] == bar, "%zu",
		      idents.size());
		done = p.for_each([&](uniqd::handle<>, uniqd::class_id<>, std::string_view) {
			return ++n < 2;
		}, ec);
		CHECK(!done && !ec && n == 2, "stop: %zu", n);
		CHECK(!p.for_each(uniqd::class_id<ident>(), [](uniqd::handle<ident>, std::string_view) {},
				  ec) && ec.value() == EINVAL, "class 0: %s", ec.message().c_str());
#if UNIQD_HPP_EXCEPTIONS
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
#endif
	}

	th_case("intern_many") {
		uniqd_item it[3] = {};
		const char *k[3] = { "foo", "m1", "m2" };

		for (int i = 0; i < 3; i++) {
			it[i].data = k[i];
			it[i].len = std::strlen(k[i]);
			it[i].class_id = ci.value();
		}
		CHECK(p.intern_many(it, 3, 0, ec) == 3 && !ec, "%s", ec.message().c_str());
		CHECK(it[0].handle == foo.raw() && it[1].handle && it[2].handle, "handles");
		it[1].class_id = 999;
		CHECK(p.intern_many(it, 3, 0, ec) == 1 && ec.value() == EBADSLT, "%s",
		      ec.message().c_str());
#if UNIQD_HPP_EXCEPTIONS
		it[1].class_id = ci.value();
		p.intern_many(it, 3);
		it[1].class_id = 999;
		CHECK(throws([&] { p.intern_many(it, 3); }, EBADSLT, "batch intern", got), "%s", got.c_str());
#endif
	}

	th_case("intern_refs: records of another pool's handles") {
		/* Entries of "elsewhere" (handles 0x77..1, 0x77..2) and a record
		 * naming both, copied into this pool. */
		const std::uint64_t e1 = 0x77ULL << 32 | 1, e2 = 0x77ULL << 32 | 2;
		uniqd::class_id<record> cr = p.register_class<record>(ec);
		unsigned char rec[24], refs[3] = { 0, 0, 1 };
		const char *k[2] = { "ref.one", "ref.two" };
		uniqd_item it[3] = {};
		int lookups = 0;

		put64(rec, e2);
		put64(rec + 8, 0);
		put64(rec + 16, e1);
		for (int i = 0; i < 2; i++) {
			it[i].data = k[i];
			it[i].len = std::strlen(k[i]);
			it[i].class_id = ci.value();
		}
		it[2].data = rec;
		it[2].len = sizeof(rec);
		it[2].class_id = cr.value();
		auto where = [&](uniqd::handle<> h) {
			lookups++;
			return h.raw() == e1 ? 0 : h.raw() == e2 ? 1 : uniqd::no_item;
		};
		CHECK(p.intern_refs(it, 3, refs, where, 0, ec) == 3 && !ec, "%s", uniqd::last_error());
		CHECK(lookups == 2, "%d lookups", lookups);
		std::string_view r = p.resolve(uniqd::handle<record>::from_raw(it[2].handle), ec);
		CHECK(r.size() == 24 &&
		      get64((const unsigned char *)r.data()) == p.lookup(ci, "ref.two", ec).raw() &&
		      get64((const unsigned char *)r.data() + 8) == 0 &&
		      get64((const unsigned char *)r.data() + 16) == p.lookup(ci, "ref.one", ec).raw(),
		      "the record holds this pool's handles");
		CHECK(std::memcmp(rec + 16, "\x01\0\0\0\x77\0\0\0", 8) == 0, "the caller's record changed");

		/* A handle the lookup does not know: EBADMSG, nothing interned. */
		put64(rec, 0x77ULL << 32 | 9);
		k[0] = "ref.never";
		it[0].len = std::strlen(k[0]);
		CHECK(p.intern_refs(it, 3, refs, where, 0, ec) == 2 && ec.value() == EBADMSG,
		      "%zu %s", (size_t)0, ec.message().c_str());
		CHECK(!p.lookup(ci, "ref.never", ec), "an item was interned");
#if UNIQD_HPP_EXCEPTIONS
		bool thrown = false;
		try {
			p.intern_refs(it, 3, refs, [](uniqd::handle<>) -> std::size_t {
				throw std::runtime_error("from the lookup");
			});
		} catch (const std::runtime_error &e) {
			thrown = !std::strcmp(e.what(), "from the lookup");
		}
		CHECK(thrown && !p.lookup(ci, "ref.never", ec), "the lookup's exception");
		CHECK(throws([&] { p.intern_refs(it, 3, refs, where); }, EBADMSG, "intern", got), "%s",
		      got.c_str());
#endif
	}

	th_case("digest") {
		std::uint8_t want[UNIQD_DIGEST_SIZE];
		uniqd::digest_bytes d = p.digest(foo, ec);

		CHECK(!ec && uniqd_digest(p.get(), foo.raw(), want) == 0 &&
		      !std::memcmp(d.data(), want, sizeof(want)), "the C call's digest");
		p.digest(uniqd::handle<ident>::from_raw(12345), ec);
		CHECK(ec.value() == ENOENT, "%s", ec.message().c_str());
#if UNIQD_HPP_EXCEPTIONS
		CHECK(p.digest(foo) == d, "throwing overload");
#endif
	}

	th_case("save and merge, restore refused by the fake") {
		int fd = memfd_create("cxx.snap", 0);
		uniqd_snapshot_info info = p.save(fd, ec);
		uniqd::pool q = uniqd::pool::open("cxx.merged", 0, ec);
		uniqd::class_id<ident> qi = q.register_class<ident>("padding.first", ec);

		CHECK(fd >= 0 && !ec && info.entries > 4 && info.classes >= 3, "save: %s, %llu entries",
		      uniqd::last_error(), (unsigned long long)info.entries);
		lseek(fd, 0, SEEK_SET);
		uniqd::snapshot_map m = q.merge(fd, ec);
		qi = q.find_class<ident>("cxx.ident", ec);
		CHECK(m && !ec && m.size() == info.entries && m.info().entries == info.entries &&
		      m.info().pool_id == info.pool_id, "merge: %s", uniqd::last_error());
		CHECK(m[foo] && m[foo] == q.lookup(qi, "foo", ec) && q.resolve(m[foo], ec) == "foo",
		      "foo maps to the merged pool's foo");
		CHECK(m[bar] != m[foo] && q.resolve(m[bar], ec) == "bar", "bar");
		CHECK(!m[uniqd::handle<ident>::from_raw(12345)] && !m[uniqd::handle<ident>()],
		      "a handle of no snapshot maps to nothing");
		CHECK(m.data()[0] == 0, "the array");

		/* merge_refs: cxx.record's records hold handles: translated. */
		uniqd::pool r = uniqd::pool::open("cxx.refs", 0, ec);
		r.register_class("padding.a", ec);
		r.register_class("padding.b", ec);
		r.intern(r.register_class("padding.a", ec), "shift the handles", ec);
		lseek(fd, 0, SEEK_SET);
		uniqd::snapshot_map mr = r.merge_refs(fd, { "cxx.record" }, ec);
		CHECK(mr && !ec, "merge_refs: %s", uniqd::last_error());
		uniqd::class_id<ident> ri = r.find_class<ident>("cxx.ident", ec);
		uniqd::class_id<record> rr = r.find_class<record>("cxx.record", ec);
		bool seen = false;
		r.for_each(rr, [&](uniqd::handle<record>, std::string_view s) {
			seen = s.size() == 24 &&
			       get64((const unsigned char *)s.data()) == r.lookup(ri, "ref.two", ec).raw() &&
			       get64((const unsigned char *)s.data() + 16) == r.lookup(ri, "ref.one", ec).raw();
		}, ec);
		CHECK(seen, "the record names the merged pool's entries");

		/* Not a snapshot: EBADMSG, an empty map. */
		int junk = memfd_create("cxx.junk", 0);
		CHECK(write(junk, "not a snapshot at all, not at all, not at all......", 50) == 50,
		      "write");
		lseek(junk, 0, SEEK_SET);
		uniqd::snapshot_map bad = q.merge(junk, ec);
		CHECK(!bad && bad.size() == 0 && ec.value() == EBADMSG, "%s", ec.message().c_str());

		/* The fake has no RESTORE: the error, and no pool. */
		lseek(fd, 0, SEEK_SET);
		uniqd::pool back = uniqd::pool::restore(fd, uniqd::options{}, ec);
		CHECK(!back && ec.value() == EOPNOTSUPP, "restore on the fake: %s",
		      ec.message().c_str());
#if UNIQD_HPP_EXCEPTIONS
		lseek(fd, 0, SEEK_SET);
		CHECK(q.merge(fd)[foo] == m[foo], "throwing merge");
		lseek(fd, 0, SEEK_SET);
		CHECK(throws([&] { uniqd::pool::restore(fd); }, EOPNOTSUPP, "attach to pool 'cxx'", got), "%s",
		      got.c_str());
		CHECK(throws([&] { q.merge(junk); }, EBADMSG, "merge", got), "%s", got.c_str());
#endif
		close(junk);
		close(fd);
	}

	th_case("moves; an empty pool refuses") {
		uniqd::pool q = std::move(p);

		CHECK(!p && q, "moved");
		CHECK(q.lookup(ci, "foo", ec) == foo, "the moved-to pool works");
		p.intern(ci, "x", ec);
		CHECK(failed(ec, EINVAL, "intern under class", got), "%s", got.c_str());
#if UNIQD_HPP_EXCEPTIONS
		CHECK(throws([&] { p.intern(ci, "x"); }, EINVAL, "intern under class", got), "%s",
		      got.c_str());
#endif
		p = std::move(q);
		CHECK(p && !q && p.intern(ci, "foo", ec) == foo, "moved back");
		p.stats(ec);
		CHECK(!ec && p.info(ec).name == std::string("cxx"), "info");
		q.resolve(foo, ec);
		CHECK(ec.value() == EINVAL, "resolve on an empty pool: %s", ec.message().c_str());
		q.stats(ec);
		CHECK(ec.value() == EINVAL, "stats on an empty pool: %s", ec.message().c_str());
	}

	th_case("close") {
		p.close();
		CHECK(!p, "closed");
		CHECK(fk_files_open() == 0 && fk_maps_live() == 0, "%d files, %d mappings left",
		      fk_files_open(), fk_maps_live());
	}
	return th_finish();
}
