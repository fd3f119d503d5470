/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <uniqd.hpp>: libuniqd for C++17, header-only over <libuniqd.h>.
 *
 *	struct ident { static constexpr const char *name = "gcc.ident"; };
 *
 *	uniqd::pool p("build");				// throws uniqd::error
 *	auto cls = p.register_class<ident>();		// uniqd::class_id<ident>
 *	uniqd::handle<ident> h = p.intern(cls, "foo");	// std::string_view in
 *	std::string_view s = p.resolve(h);		// zero-copy when mapped
 *	p.for_each(cls, [](uniqd::handle<ident> h, std::string_view s) { ... });
 *
 * A handle<Tag> is a 64-bit handle that knows its class at compile time:
 * it compares (==, <, std::hash) like a pointer, and a handle of another
 * tag neither compares with it nor converts to it. handle<> (Tag void) is
 * the untyped handle that walks of every class give.
 *
 * Each call that can fail takes a std::error_code & last, which it sets
 * (the errno in std::generic_category(); uniqd_last_error() has the
 * sentence) or clears; those overloads are noexcept. Where C++ exceptions
 * are on (__cpp_exceptions, and UNIQD_HPP_NO_EXCEPTIONS not defined) each
 * also has an overload without it that throws uniqd::error, a
 * std::system_error with that code whose what() is the sentence. Built
 * -fno-exceptions (as LLVM, MLIR and GCC are) the header has the
 * error_code overloads only; it uses no RTTI either way. Absence is no
 * error: lookup() and find_class() return an empty handle or class id.
 *
 * Beyond interning: digest(), save(), pool::restore(), merge() and
 * merge_refs() (snapshots; a snapshot_map takes the saved pool's handles
 * to this one's), intern_refs() (records holding another pool's handles),
 * and cached_class<Tag>() and class_slot, libuniqd's per-call-site class
 * cache (UNIQD_CLASS).
 *
 * See uniqd.hpp(3) and Documentation/libuniqd.rst.
 */
#ifndef UNIQD_HPP
#define UNIQD_HPP

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <libuniqd.h>

/* The throwing overloads: only where exceptions exist, and not wanted off. */
#if defined(__cpp_exceptions) && !defined(UNIQD_HPP_NO_EXCEPTIONS)
#define UNIQD_HPP_EXCEPTIONS 1
#else
#define UNIQD_HPP_EXCEPTIONS 0
#endif

namespace uniqd {

/* ---- errors ------------------------------------------------------------- */

class error : public std::system_error {
public:
	error(int err, const char *message)
		: std::system_error(err, std::generic_category()), message_(message)
	{
	}

	/* uniqd_last_error()'s sentence at the time of the failure. */
	const char *what() const noexcept override
	{
		return message_.c_str();
	}

private:
	std::string message_;
};

namespace detail {

/* The failure the last libuniqd call of this thread reported. */
inline std::error_code last_code(int err) noexcept
{
	return std::error_code(err ? err : EPROTO, std::generic_category());
}

#if UNIQD_HPP_EXCEPTIONS
/* Throw what EC holds, if anything: the throwing calls are the noexcept ones. */
inline void check(const std::error_code &ec)
{
	if (ec)
		throw error(ec.value(), uniqd_last_error());
}

/* F(ec)'s value, or what EC held thrown as uniqd::error. */
template <class F>
auto throwing(F &&f)
{
	std::error_code ec;
	auto r = f(ec);

	check(ec);
	return r;
}
#endif

/*
 * Run F, which may allocate: false when an exception (std::bad_alloc) ended
 * it. Without exceptions a failed allocation ends the program, as
 * everywhere else in such a build.
 */
template <class F>
bool no_throw(F &&f) noexcept
{
#if defined(__cpp_exceptions)
	try {
		f();
		return true;
	} catch (...) {
		return false;
	}
#else
	f();
	return true;
#endif
}

/*
 * Run a caller's F, which may throw (a for_each() or intern_refs()
 * callable, called from libuniqd's C frames, which must never unwind):
 * false, with the exception in THROWN, when it did.
 */
template <class F>
bool guarded(F &&f, std::exception_ptr &thrown) noexcept
{
#if defined(__cpp_exceptions)
	try {
		f();
		return true;
	} catch (...) {
		thrown = std::current_exception();
		return false;
	}
#else
	(void)thrown;
	f();
	return true;
#endif
}

inline std::error_code no_memory() noexcept
{
	return std::error_code(ENOMEM, std::generic_category());
}

/* Tag::name, when the tag has one. */
template <class Tag, class = void>
struct has_name : std::false_type {};
template <class Tag>
struct has_name<Tag, std::void_t<decltype(std::string_view(Tag::name))>>
	: std::true_type {};

/* One class slot per tag (cached_class<Tag>()): constant-initialized. */
template <class Tag>
inline uniqd_class_slot tag_slot{};

} /* namespace detail */

/* ---- class ids and handles ------------------------------------------------- */

/* A class id of a pool, for the class that Tag stands for (void: any). */
template <class Tag = void>
class class_id {
public:
	constexpr class_id() noexcept = default;
	constexpr explicit class_id(std::uint32_t id) noexcept : id_(id) {}

	constexpr std::uint32_t value() const noexcept { return id_; }
	constexpr explicit operator bool() const noexcept { return id_ != 0; }

	friend constexpr bool operator==(class_id a, class_id b) noexcept { return a.id_ == b.id_; }
	friend constexpr bool operator!=(class_id a, class_id b) noexcept { return a.id_ != b.id_; }

private:
	std::uint32_t id_ = 0;
};

/*
 * A handle of class Tag. The comparison operators are hidden friends of
 * the one type: handle<A> == handle<B> does not compile, nor does a handle
 * compare with a bare integer.
 */
template <class Tag = void>
class handle {
public:
	using tag_type = Tag;

	constexpr handle() noexcept = default;
	/* What libuniqd returned for this class; 0 is the empty handle. */
	static constexpr handle from_raw(std::uint64_t raw) noexcept { return handle(raw); }
	/* A typed handle, forgetting its type (only towards handle<>). */
	template <class Other, class T = Tag,
		  class = std::enable_if_t<std::is_void_v<T> && !std::is_void_v<Other>>>
	constexpr explicit handle(handle<Other> h) noexcept : raw_(h.raw()) {}

	constexpr std::uint64_t raw() const noexcept { return raw_; }
	constexpr explicit operator bool() const noexcept { return raw_ != 0; }

	friend constexpr bool operator==(handle a, handle b) noexcept { return a.raw_ == b.raw_; }
	friend constexpr bool operator!=(handle a, handle b) noexcept { return a.raw_ != b.raw_; }
	friend constexpr bool operator<(handle a, handle b) noexcept { return a.raw_ < b.raw_; }
	friend constexpr bool operator>(handle a, handle b) noexcept { return a.raw_ > b.raw_; }
	friend constexpr bool operator<=(handle a, handle b) noexcept { return a.raw_ <= b.raw_; }
	friend constexpr bool operator>=(handle a, handle b) noexcept { return a.raw_ >= b.raw_; }

private:
	constexpr explicit handle(std::uint64_t raw) noexcept : raw_(raw) {}

	std::uint64_t raw_ = 0;
};

/* ---- snapshots -------------------------------------------------------------- */

/* A digest: BLAKE3-256 of le32(class name length) || class name || content. */
using digest_bytes = std::array<std::uint8_t, UNIQD_DIGEST_SIZE>;

/*
 * What merge() and merge_refs() give: the snapshot's info(), and for each
 * handle the saved pool gave (its pool_id << 32 | 1 .. entries) the handle
 * of the same entry in the pool merged into. Move-only; owns libuniqd's
 * array (uniqd_merge(3)).
 */
class snapshot_map {
public:
	snapshot_map() noexcept = default;

	const uniqd_snapshot_info &info() const noexcept { return info_; }
	/* The saved entries (0 for an empty map). */
	std::size_t size() const noexcept { return map_ ? static_cast<std::size_t>(info_.entries) : 0; }
	explicit operator bool() const noexcept { return map_ != nullptr; }
	/* libuniqd's array: data()[i] for the saved handle pool_id << 32 | i. */
	const std::uint64_t *data() const noexcept { return map_.get(); }

	/* This pool's handle for SAVED, or empty if SAVED is not the snapshot's. */
	template <class Tag>
	handle<Tag> operator[](handle<Tag> saved) const noexcept
	{
		std::uint64_t r = saved.raw(), i = r & 0xffffffffu;

		if (!map_ || (r >> 32) != info_.pool_id || i == 0 || i > info_.entries)
			return handle<Tag>();
		return handle<Tag>::from_raw(map_[i]);
	}

private:
	friend class pool;

	struct freer {
		void operator()(std::uint64_t *p) const noexcept { std::free(p); }
	};

	std::unique_ptr<std::uint64_t[], freer> map_;
	uniqd_snapshot_info info_{};
};

/* For intern_refs()'s lookup: the handle names no item before the record. */
inline constexpr std::size_t no_item = SIZE_MAX;

/* ---- opening ------------------------------------------------------------ */

/* How pool's constructor opens: uniqd_open_ex()'s arguments. */
struct options {
	unsigned int flags = 0;		/* UNIQD_OPEN_* */
	const char *device = nullptr;	/* nullptr: /dev/uniqd */
	uniqd_limits limits = {};	/* of a pool created now; 0: the module's */
};

/* ---- the pool --------------------------------------------------------------- */

/*
 * An open, attached pool: closed by the destructor. Move-only. Every call
 * may be made from many threads at once, as libuniqd's.
 */
class pool {
public:
	pool() noexcept = default;

#if UNIQD_HPP_EXCEPTIONS
	explicit pool(std::string_view name, unsigned int flags = 0)
		: pool(name, options{ flags, nullptr, {} })
	{
	}

	pool(std::string_view name, const options &opt)
	{
		std::error_code ec;

		*this = open(name, opt, ec);
		detail::check(ec);
	}
#endif

	/* The noexcept way: an empty pool and EC set on failure. */
	static pool open(std::string_view name, const options &opt,
			 std::error_code &ec) noexcept
	{
		pool p;

		p.copies_ = make_copies();
		if (!p.copies_) {
			ec = detail::no_memory();
			return p;
		}
		p.p_ = uniqd_open_ex(opt.device, name.data(), name.size(), opt.flags,
				     &opt.limits);
		ec = p.p_ ? std::error_code() : detail::last_code(errno);
		if (!p.p_)
			p.copies_.reset();
		return p;
	}

	static pool open(std::string_view name, unsigned int flags, std::error_code &ec) noexcept
	{
		return open(name, options{ flags, nullptr, {} }, ec);
	}

	/*
	 * Recreate the pool saved to FD (uniqd_restore(3)) on OPT.device with
	 * OPT.flags (UNIQD_OPEN_NOCACHE, UNIQD_OPEN_NOMAP; the limits are the
	 * snapshot's), every handle as it was; INFO (may be null) gets what
	 * the snapshot held.
	 */
	static pool restore(int fd, const options &opt, std::error_code &ec,
			    uniqd_snapshot_info *info = nullptr) noexcept
	{
		pool p;

		p.copies_ = make_copies();
		if (!p.copies_) {
			ec = detail::no_memory();
			return p;
		}
		p.p_ = uniqd_restore(opt.device, fd, opt.flags, info);
		ec = p.p_ ? std::error_code() : detail::last_code(errno);
		if (!p.p_)
			p.copies_.reset();
		return p;
	}

#if UNIQD_HPP_EXCEPTIONS
	static pool restore(int fd, const options &opt = options{},
			    uniqd_snapshot_info *info = nullptr)
	{
		std::error_code ec;
		pool p = restore(fd, opt, ec, info);

		detail::check(ec);
		return p;
	}
#endif

	/* Take over a uniqd_pool from C code (an empty pool if out of memory). */
	explicit pool(uniqd_pool *p) noexcept : copies_(make_copies())
	{
		if (copies_)
			p_ = p;
		else if (p)
			uniqd_close(p);
	}

	pool(pool &&o) noexcept
		: p_(std::exchange(o.p_, nullptr)), copies_(std::move(o.copies_))
	{
	}

	pool &operator=(pool &&o) noexcept
	{
		if (this != &o) {
			close();
			p_ = std::exchange(o.p_, nullptr);
			copies_ = std::move(o.copies_);
		}
		return *this;
	}

	pool(const pool &) = delete;
	pool &operator=(const pool &) = delete;

	~pool() { close(); }

	/* Close now; string_views resolve() gave die with the pool. */
	void close() noexcept
	{
		if (p_)
			uniqd_close(p_);
		p_ = nullptr;
		copies_.reset();
	}

	explicit operator bool() const noexcept { return p_ != nullptr; }
	uniqd_pool *get() const noexcept { return p_; }
	uniqd_pool *release() noexcept
	{
		copies_.reset();
		return std::exchange(p_, nullptr);
	}

	/* The C struct: its name is also a function's. */
	struct uniqd_pool_info info(std::error_code &ec) const noexcept
	{
		struct uniqd_pool_info i {};

		ec = uniqd_pool_info(p_, &i) ? detail::last_code(errno) : std::error_code();
		return i;
	}

	/* Whether and where the pool is mapped (uniqd_map_info(3)). */
	struct uniqd_map_info map_info(std::error_code &ec) const noexcept
	{
		struct uniqd_map_info m {};

		ec = uniqd_map_info(p_, &m) ? detail::last_code(errno) : std::error_code();
		return m;
	}

	uniqd_pool_stats stats(std::error_code &ec) const noexcept
	{
		uniqd_pool_stats s{};

		ec = uniqd_stats(p_, &s) ? detail::last_code(errno) : std::error_code();
		return s;
	}

#if UNIQD_HPP_EXCEPTIONS
	struct uniqd_pool_info info() const
	{
		return detail::throwing([&](std::error_code &ec) { return info(ec); });
	}

	struct uniqd_map_info map_info() const
	{
		return detail::throwing([&](std::error_code &ec) { return map_info(ec); });
	}

	uniqd_pool_stats stats() const
	{
		return detail::throwing([&](std::error_code &ec) { return stats(ec); });
	}
#endif

	/* ---- classes ---- */

	/* The class called NAME, registered if absent. */
	template <class Tag = void>
	class_id<Tag> register_class(std::string_view name, std::error_code &ec) const noexcept
	{
		std::uint32_t id = uniqd_class_n(p_, name.data(), name.size(), 0);

		ec = id ? std::error_code() : detail::last_code(errno);
		return class_id<Tag>(id);
	}

	/* The class Tag::name. */
	template <class Tag>
	class_id<Tag> register_class(std::error_code &ec) const noexcept
	{
		static_assert(detail::has_name<Tag>::value,
			      "register_class<Tag>() needs Tag::name (or pass the name)");
		return register_class<Tag>(std::string_view(Tag::name), ec);
	}

	/* The class called NAME if registered, else an empty class id. */
	template <class Tag = void>
	class_id<Tag> find_class(std::string_view name, std::error_code &ec) const noexcept
	{
		std::uint32_t id = uniqd_class_n(p_, name.data(), name.size(),
						 UNIQD_CLASS_FIND);

		ec = id || errno == ENOENT ? std::error_code() : detail::last_code(errno);
		return class_id<Tag>(id);
	}

	/*
	 * The class Tag::name through libuniqd's class cache (UNIQD_CLASS,
	 * uniqd_class_cached(3)): one slot per tag in the program, filled on
	 * first use; afterwards one load-acquire and a compare while the same
	 * pool object asks. Tag::name must be a const char * that never
	 * changes (a literal).
	 */
	template <class Tag>
	class_id<Tag> cached_class(std::error_code &ec) const noexcept
	{
		static_assert(detail::has_name<Tag>::value &&
			      std::is_convertible_v<decltype(Tag::name), const char *>,
			      "cached_class<Tag>() needs a const char *Tag::name");
		std::uint32_t id = uniqd_class_cached(p_, &detail::tag_slot<Tag>, Tag::name);

		ec = id ? std::error_code() : detail::last_code(errno);
		return class_id<Tag>(id);
	}

#if UNIQD_HPP_EXCEPTIONS
	template <class Tag = void>
	class_id<Tag> register_class(std::string_view name) const
	{
		return detail::throwing([&](std::error_code &ec) { return register_class<Tag>(name, ec); });
	}

	template <class Tag>
	class_id<Tag> register_class() const
	{
		return detail::throwing([&](std::error_code &ec) { return register_class<Tag>(ec); });
	}

	template <class Tag = void>
	class_id<Tag> find_class(std::string_view name) const
	{
		return detail::throwing([&](std::error_code &ec) { return find_class<Tag>(name, ec); });
	}

	template <class Tag>
	class_id<Tag> cached_class() const
	{
		return detail::throwing([&](std::error_code &ec) { return cached_class<Tag>(ec); });
	}
#endif

	/* ---- interning ---- */

	template <class Tag>
	handle<Tag> intern(class_id<Tag> c, std::string_view s, std::error_code &ec) noexcept
	{
		std::uint64_t h = uniqd_intern(p_, c.value(), s.data(), s.size());

		ec = h ? std::error_code() : detail::last_code(errno);
		return handle<Tag>::from_raw(h);
	}

	/* The handle if interned, else the empty handle (never creates). */
	template <class Tag>
	handle<Tag> lookup(class_id<Tag> c, std::string_view s,
			   std::error_code &ec) const noexcept
	{
		std::uint64_t h = uniqd_lookup(p_, c.value(), s.data(), s.size());

		ec = h || errno == ENOENT ? std::error_code() : detail::last_code(errno);
		return handle<Tag>::from_raw(h);
	}

	/*
	 * uniqd_intern_many() over ITEMS[0..COUNT): COUNT, or the index of
	 * the failing item with EC set.
	 */
	std::size_t intern_many(uniqd_item *items, std::size_t count, unsigned int flags,
				std::error_code &ec) noexcept
	{
		std::size_t n = uniqd_intern_many(p_, items, count, flags);

		ec = n == count ? std::error_code() : detail::last_code(errno);
		return n;
	}

	/*
	 * uniqd_intern_refs(3): uniqd_intern_many() where an item with
	 * REFS[i] non-zero is a record of little-endian 64-bit handles of
	 * another pool, each naming an item before it. LOOKUP(handle<>)
	 * returns the index in ITEMS of the item a handle names, or no_item;
	 * it is called once for each handle not 0, in order, before anything
	 * is interned. Returns COUNT, or the failing item's index with EC set
	 * (EBADMSG: a record is not a run of handles, or names no item before
	 * it; nothing was interned). An exception LOOKUP throws stops the
	 * call before anything is interned and goes on up.
	 */
	template <class Lookup>
	std::size_t intern_refs(uniqd_item *items, std::size_t count, const unsigned char *refs,
				Lookup &&lookup, unsigned int flags, std::error_code &ec)
	{
		struct ctx {
			std::remove_reference_t<Lookup> *fn;
			std::exception_ptr thrown;
		} x{ &lookup, nullptr };
		std::size_t n = uniqd_intern_refs(p_, items, count, refs,
			[](void *arg, std::uint64_t h) -> std::size_t {
				ctx *x = static_cast<ctx *>(arg);
				std::size_t i = no_item;

				if (x->thrown)
					return no_item;
				if (!detail::guarded([&] {
					i = static_cast<std::size_t>(
						std::invoke(*x->fn, handle<>::from_raw(h)));
				    }, x->thrown))
					return no_item;
				return i;
			}, &x, flags);

		ec = n == count ? std::error_code() : detail::last_code(errno);
		rethrow(x.thrown);
		return n;
	}

	/* The identity of H beyond this machine (uniqd_digest(3)). */
	template <class Tag>
	digest_bytes digest(handle<Tag> h, std::error_code &ec) const noexcept
	{
		digest_bytes d{};

		ec = uniqd_digest(p_, h.raw(), d.data()) ? detail::last_code(errno)
							  : std::error_code();
		return d;
	}

#if UNIQD_HPP_EXCEPTIONS
	template <class Tag>
	handle<Tag> intern(class_id<Tag> c, std::string_view s)
	{
		return detail::throwing([&](std::error_code &ec) { return intern(c, s, ec); });
	}

	template <class Tag>
	handle<Tag> lookup(class_id<Tag> c, std::string_view s) const
	{
		return detail::throwing([&](std::error_code &ec) { return lookup(c, s, ec); });
	}

	void intern_many(uniqd_item *items, std::size_t count, unsigned int flags = 0)
	{
		detail::throwing([&](std::error_code &ec) { return intern_many(items, count, flags, ec); });
	}

	template <class Lookup>
	void intern_refs(uniqd_item *items, std::size_t count, const unsigned char *refs,
			 Lookup &&lookup, unsigned int flags = 0)
	{
		detail::throwing([&](std::error_code &ec) {
			return intern_refs(items, count, refs, lookup, flags, ec);
		});
	}

	template <class Tag>
	digest_bytes digest(handle<Tag> h) const
	{
		return detail::throwing([&](std::error_code &ec) { return digest(h, ec); });
	}
#endif

	/* ---- resolving ---- */

	/*
	 * The content of H, valid until the pool is closed: in the mapping
	 * when the pool is mapped (no copy, no system call), else a copy the
	 * pool object keeps (one per handle resolved, made once).
	 */
	template <class Tag>
	std::string_view resolve(handle<Tag> h, std::error_code &ec) const noexcept
	{
		return resolve_raw(h.raw(), nullptr, ec);
	}

	/* The class of an untyped handle, and its content. */
	std::string_view resolve(handle<> h, class_id<> &cls, std::error_code &ec) const noexcept
	{
		std::uint32_t c = 0;
		std::string_view s = resolve_raw(h.raw(), &c, ec);

		cls = class_id<>(c);
		return s;
	}

#if UNIQD_HPP_EXCEPTIONS
	template <class Tag>
	std::string_view resolve(handle<Tag> h) const
	{
		return detail::throwing([&](std::error_code &ec) { return resolve(h, ec); });
	}

	std::string_view resolve(handle<> h, class_id<> &cls) const
	{
		return detail::throwing([&](std::error_code &ec) { return resolve(h, cls, ec); });
	}
#endif

	/* ---- snapshots ---- */

	/*
	 * Write the pool to FD (uniqd_save(3)): the published prefix of its
	 * entries, read from the mapping (EOPNOTSUPP when it is not mapped).
	 */
	uniqd_snapshot_info save(int fd, std::error_code &ec) const noexcept
	{
		uniqd_snapshot_info info{};

		ec = uniqd_save(p_, fd, 0, &info) ? detail::last_code(errno) : std::error_code();
		return info;
	}

	/*
	 * Intern the snapshot read from FD into this pool, classes by name
	 * (uniqd_merge(3)); the map takes the saved handles to this pool's.
	 * An empty map with EC set on failure (what was interned before it
	 * stays).
	 */
	snapshot_map merge(int fd, std::error_code &ec) noexcept
	{
		return merge_refs(fd, static_cast<const char *const *>(nullptr), ec);
	}

	/*
	 * merge() where the records of the classes REFS names (a
	 * null-terminated list) hold handles of the saved pool, translated to
	 * this pool's (uniqd_merge_refs(3)).
	 */
	snapshot_map merge_refs(int fd, const char *const *refs, std::error_code &ec) noexcept
	{
		snapshot_map m;
		std::uint64_t *map = nullptr;

		if (uniqd_merge_refs(p_, fd, refs, 0, &map, &m.info_)) {
			ec = detail::last_code(errno);
			return snapshot_map();
		}
		m.map_.reset(map);
		ec = std::error_code();
		return m;
	}

	snapshot_map merge_refs(int fd, std::initializer_list<const char *> refs,
				std::error_code &ec) noexcept
	{
		std::vector<const char *> list;

		if (!detail::no_throw([&] {
			list.assign(refs.begin(), refs.end());
			list.push_back(nullptr);
		    })) {
			ec = detail::no_memory();
			return snapshot_map();
		}
		return merge_refs(fd, list.data(), ec);
	}

#if UNIQD_HPP_EXCEPTIONS
	uniqd_snapshot_info save(int fd) const
	{
		return detail::throwing([&](std::error_code &ec) { return save(fd, ec); });
	}

	snapshot_map merge(int fd)
	{
		return detail::throwing([&](std::error_code &ec) { return merge(fd, ec); });
	}

	snapshot_map merge_refs(int fd, const char *const *refs)
	{
		return detail::throwing([&](std::error_code &ec) { return merge_refs(fd, refs, ec); });
	}

	snapshot_map merge_refs(int fd, std::initializer_list<const char *> refs)
	{
		return detail::throwing([&](std::error_code &ec) { return merge_refs(fd, refs, ec); });
	}
#endif

	/* ---- walking ---- */

	/*
	 * FN(handle<>, class_id<>, std::string_view) for every entry in handle
	 * order (uniqd_foreach(3)); FN returns void, or bool: false stops.
	 * The string_view is valid during the call only. Returns false if FN
	 * stopped the walk. An exception FN throws ends the walk and is
	 * rethrown here.
	 */
	template <class Fn>
	bool for_each(Fn &&fn, std::error_code &ec) const
	{
		return walk(0, [&fn](std::uint64_t h, std::uint32_t c, std::string_view s) {
			return call(fn, handle<>::from_raw(h), class_id<>(c), s);
		}, ec);
	}

	/* FN(handle<Tag>, std::string_view) for every entry of class C. */
	template <class Tag, class Fn>
	bool for_each(class_id<Tag> c, Fn &&fn, std::error_code &ec) const
	{
		if (!c) {	/* 0 would walk every class */
			ec = std::error_code(EINVAL, std::generic_category());
			return false;
		}
		return walk(c.value(), [&fn](std::uint64_t h, std::uint32_t, std::string_view s) {
			return call(fn, handle<Tag>::from_raw(h), s);
		}, ec);
	}

#if UNIQD_HPP_EXCEPTIONS
	template <class Fn>
	bool for_each(Fn &&fn) const
	{
		return detail::throwing([&](std::error_code &ec) { return for_each(fn, ec); });
	}

	template <class Tag, class Fn>
	bool for_each(class_id<Tag> c, Fn &&fn) const
	{
		return detail::throwing([&](std::error_code &ec) { return for_each(c, fn, ec); });
	}
#endif

private:
	/*
	 * The copies of unmapped content resolve() handed out, per handle: in
	 * their own allocation each, so that the string_views outlive rehashes
	 * and moves of the pool object.
	 */
	struct copy {
		std::string content;
		std::uint32_t class_id;
	};
	struct copies {
		std::mutex lock;
		std::unordered_map<std::uint64_t, std::unique_ptr<const copy>> of;
	};

	static std::unique_ptr<copies> make_copies() noexcept
	{
		std::unique_ptr<copies> c;

		detail::no_throw([&] { c = std::make_unique<copies>(); });
		return c;
	}

	static void rethrow(const std::exception_ptr &e)
	{
#if defined(__cpp_exceptions)
		if (e)
			std::rethrow_exception(e);
#else
		(void)e;
#endif
	}

	std::string_view resolve_raw(std::uint64_t h, std::uint32_t *cls,
				     std::error_code &ec) const noexcept
	{
		std::size_t len = 0;
		const void *p = uniqd_resolve_ptr(p_, h, &len, cls);

		ec = std::error_code();
		if (p)
			return std::string_view(static_cast<const char *>(p), len);
		if (errno != EOPNOTSUPP) {
			ec = detail::last_code(errno);
			return {};
		}
		return resolve_copy(h, cls, ec);
	}

	/* Not mapped: copy once, keep it for the pool's life. */
	std::string_view resolve_copy(std::uint64_t h, std::uint32_t *cls,
				      std::error_code &ec) const noexcept
	{
		if (!copies_) {		/* an empty pool */
			ec = std::error_code(EINVAL, std::generic_category());
			return {};
		}
		std::lock_guard<std::mutex> g(copies_->lock);
		std::string_view out;
		bool done = detail::no_throw([&] {
			auto it = copies_->of.find(h);

			if (it == copies_->of.end()) {
				std::uint32_t c = 0;
				std::size_t len = 0;
				std::unique_ptr<char, void (*)(void *)> data(
					static_cast<char *>(uniqd_resolve_alloc(p_, h, &len, &c)),
					std::free);

				if (!data) {
					ec = detail::last_code(errno);
					return;
				}
				it = copies_->of.emplace(h, std::make_unique<const copy>(
					copy{ std::string(data.get(), len), c })).first;
			}
			if (cls)
				*cls = it->second->class_id;
			out = std::string_view(it->second->content);
		});

		if (!done)
			ec = detail::no_memory();
		return ec ? std::string_view() : out;
	}

	/* FN's value as "go on": void goes on, bool says. */
	template <class Fn, class... Args>
	static bool call(Fn &fn, Args &&...args)
	{
		if constexpr (std::is_void_v<std::invoke_result_t<Fn &, Args...>>) {
			std::invoke(fn, std::forward<Args>(args)...);
			return true;
		} else {
			return static_cast<bool>(std::invoke(fn, std::forward<Args>(args)...));
		}
	}

	/* uniqd_foreach() with a C++ callable; exceptions stop it and go on up. */
	template <class Step>
	bool walk(std::uint32_t cls, Step step, std::error_code &ec) const
	{
		struct ctx {
			Step *step;
			std::exception_ptr thrown;
		} x{ &step, nullptr };
		int r = uniqd_foreach(p_, cls, 0,
			[](void *arg, std::uint64_t h, std::uint32_t c, const void *data,
			   std::size_t len) -> int {
				ctx *x = static_cast<ctx *>(arg);
				int ret = 2;

				if (!detail::guarded([&] {
					ret = (*x->step)(h, c, std::string_view(
						static_cast<const char *>(data), len)) ? 0 : 1;
				    }, x->thrown))
					return 2;
				return ret;
			}, &x);

		ec = r < 0 ? detail::last_code(errno) : std::error_code();
		rethrow(x.thrown);
		return r == 0;
	}

	uniqd_pool *p_ = nullptr;
	std::unique_ptr<copies> copies_;	/* non-null while p_ is */
};

/*
 * The class cache of one call site, for a name that is not a tag's
 * (cached_class<Tag>() keeps one per tag): C's UNIQD_CLASS_SLOT(). Make it
 * a static at the call site (it is constant-initialized: no guard) and
 * pass the same NAME every time; get() is uniqd_class_cached(3).
 *
 *	static uniqd::class_slot slot;
 *	uniqd::class_id<ident> c = slot.get<ident>(pool, "gcc.ident", ec);
 */
class class_slot {
public:
	constexpr class_slot() noexcept = default;

	template <class Tag = void>
	class_id<Tag> get(const pool &p, const char *name, std::error_code &ec) noexcept
	{
		std::uint32_t id = uniqd_class_cached(p.get(), &slot_, name);

		ec = id ? std::error_code() : detail::last_code(errno);
		return class_id<Tag>(id);
	}

#if UNIQD_HPP_EXCEPTIONS
	template <class Tag = void>
	class_id<Tag> get(const pool &p, const char *name)
	{
		std::error_code ec;
		class_id<Tag> c = get<Tag>(p, name, ec);

		detail::check(ec);
		return c;
	}
#endif

private:
	uniqd_class_slot slot_{};
};

/* The calling thread's last libuniqd failure, as a sentence. */
inline const char *last_error() noexcept
{
	return uniqd_last_error();
}

} /* namespace uniqd */

namespace std {

template <class Tag>
struct hash<uniqd::handle<Tag>> {
	size_t operator()(uniqd::handle<Tag> h) const noexcept
	{
		return hash<uint64_t>()(h.raw());
	}
};

template <class Tag>
struct hash<uniqd::class_id<Tag>> {
	size_t operator()(uniqd::class_id<Tag> c) const noexcept
	{
		return hash<uint32_t>()(c.value());
	}
};

} /* namespace std */

#endif /* UNIQD_HPP */
