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
 * Errors throw uniqd::error, a std::system_error whose code() is the errno
 * (std::generic_category()) and whose what() is uniqd_last_error()'s
 * sentence. Each call that can fail also has a noexcept overload taking a
 * std::error_code & last, which it sets (or clears) instead. Absence is no
 * error: lookup() and find_class() return an empty handle or class id.
 *
 * See uniqd.hpp(3) and Documentation/libuniqd.rst.
 */
#ifndef UNIQD_HPP
#define UNIQD_HPP

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <libuniqd.h>

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

[[noreturn]] inline void fail(int err)
{
	throw error(last_code(err).value(), uniqd_last_error());
}

/* Throw what EC holds, if anything: the throwing calls are the noexcept ones. */
inline void check(const std::error_code &ec)
{
	if (ec)
		throw error(ec.value(), uniqd_last_error());
}

/* Tag::name, when the tag has one. */
template <class Tag, class = void>
struct has_name : std::false_type {};
template <class Tag>
struct has_name<Tag, std::void_t<decltype(std::string_view(Tag::name))>>
	: std::true_type {};

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

	/* The noexcept way: an empty pool and EC set on failure. */
	static pool open(std::string_view name, const options &opt,
			 std::error_code &ec) noexcept
	{
		pool p;

		p.copies_ = make_copies();
		if (!p.copies_) {
			ec = std::error_code(ENOMEM, std::generic_category());
			return p;
		}
		p.p_ = uniqd_open_ex(opt.device, name.data(), name.size(), opt.flags,
				     &opt.limits);
		ec = p.p_ ? std::error_code() : detail::last_code(errno);
		if (!p.p_)
			p.copies_.reset();
		return p;
	}

	/* Take over a uniqd_pool from C code. */
	explicit pool(uniqd_pool *p) : p_(p), copies_(std::make_unique<copies>()) {}

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
	struct uniqd_pool_info info() const
	{
		struct uniqd_pool_info i {};

		if (uniqd_pool_info(p_, &i))
			detail::fail(errno);
		return i;
	}

	/* Whether and where the pool is mapped (uniqd_map_info(3)). */
	struct uniqd_map_info map_info() const
	{
		struct uniqd_map_info m {};

		if (uniqd_map_info(p_, &m))
			detail::fail(errno);
		return m;
	}

	uniqd_pool_stats stats() const
	{
		uniqd_pool_stats s{};

		if (uniqd_stats(p_, &s))
			detail::fail(errno);
		return s;
	}

	/* ---- classes ---- */

	/* The class called NAME, registered if absent. */
	template <class Tag = void>
	class_id<Tag> register_class(std::string_view name, std::error_code &ec) const noexcept
	{
		std::uint32_t id = uniqd_class_n(p_, name.data(), name.size(), 0);

		ec = id ? std::error_code() : detail::last_code(errno);
		return class_id<Tag>(id);
	}

	template <class Tag = void>
	class_id<Tag> register_class(std::string_view name) const
	{
		std::error_code ec;
		class_id<Tag> c = register_class<Tag>(name, ec);

		detail::check(ec);
		return c;
	}

	/* The class Tag::name. */
	template <class Tag>
	class_id<Tag> register_class() const
	{
		static_assert(detail::has_name<Tag>::value,
			      "register_class<Tag>() needs Tag::name (or pass the name)");
		return register_class<Tag>(std::string_view(Tag::name));
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

	template <class Tag = void>
	class_id<Tag> find_class(std::string_view name) const
	{
		std::error_code ec;
		class_id<Tag> c = find_class<Tag>(name, ec);

		detail::check(ec);
		return c;
	}

	/* ---- interning ---- */

	template <class Tag>
	handle<Tag> intern(class_id<Tag> c, std::string_view s, std::error_code &ec) noexcept
	{
		std::uint64_t h = uniqd_intern(p_, c.value(), s.data(), s.size());

		ec = h ? std::error_code() : detail::last_code(errno);
		return handle<Tag>::from_raw(h);
	}

	template <class Tag>
	handle<Tag> intern(class_id<Tag> c, std::string_view s)
	{
		std::error_code ec;
		handle<Tag> h = intern(c, s, ec);

		detail::check(ec);
		return h;
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

	template <class Tag>
	handle<Tag> lookup(class_id<Tag> c, std::string_view s) const
	{
		std::error_code ec;
		handle<Tag> h = lookup(c, s, ec);

		detail::check(ec);
		return h;
	}

	/*
	 * uniqd_intern_many() over ITEMS[0..COUNT): COUNT, or throws with the
	 * failing item's index in what the noexcept overload returns.
	 */
	std::size_t intern_many(uniqd_item *items, std::size_t count, unsigned int flags,
				std::error_code &ec) noexcept
	{
		std::size_t n = uniqd_intern_many(p_, items, count, flags);

		ec = n == count ? std::error_code() : detail::last_code(errno);
		return n;
	}

	void intern_many(uniqd_item *items, std::size_t count, unsigned int flags = 0)
	{
		std::error_code ec;

		intern_many(items, count, flags, ec);
		detail::check(ec);
	}

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

	template <class Tag>
	std::string_view resolve(handle<Tag> h) const
	{
		std::error_code ec;
		std::string_view s = resolve(h, ec);

		detail::check(ec);
		return s;
	}

	/* The class of an untyped handle, and its content. */
	std::string_view resolve(handle<> h, class_id<> &cls, std::error_code &ec) const noexcept
	{
		std::uint32_t c = 0;
		std::string_view s = resolve_raw(h.raw(), &c, ec);

		cls = class_id<>(c);
		return s;
	}

	std::string_view resolve(handle<> h, class_id<> &cls) const
	{
		std::error_code ec;
		std::string_view s = resolve(h, cls, ec);

		detail::check(ec);
		return s;
	}

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

	template <class Fn>
	bool for_each(Fn &&fn) const
	{
		std::error_code ec;
		bool done = for_each(std::forward<Fn>(fn), ec);

		detail::check(ec);
		return done;
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

	template <class Tag, class Fn>
	bool for_each(class_id<Tag> c, Fn &&fn) const
	{
		std::error_code ec;
		bool done = for_each(c, std::forward<Fn>(fn), ec);

		detail::check(ec);
		return done;
	}

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
		try {
			return std::make_unique<copies>();
		} catch (...) {
			return nullptr;
		}
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
		try {
			std::lock_guard<std::mutex> g(copies_->lock);
			auto it = copies_->of.find(h);

			if (it == copies_->of.end()) {
				std::uint32_t c = 0;
				std::size_t len = 0;
				std::unique_ptr<char, void (*)(void *)> data(
					static_cast<char *>(uniqd_resolve_alloc(p_, h, &len, &c)),
					std::free);

				if (!data) {
					ec = detail::last_code(errno);
					return {};
				}
				it = copies_->of.emplace(h, std::make_unique<const copy>(
					copy{ std::string(data.get(), len), c })).first;
			}
			if (cls)
				*cls = it->second->class_id;
			return std::string_view(it->second->content);
		} catch (...) {
			ec = std::error_code(ENOMEM, std::generic_category());
			return {};
		}
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

				try {
					return (*x->step)(h, c, std::string_view(
						static_cast<const char *>(data), len)) ? 0 : 1;
				} catch (...) {
					x->thrown = std::current_exception();
					return 2;
				}
			}, &x);

		ec = std::error_code();
		if (x.thrown)
			std::rethrow_exception(x.thrown);
		if (r < 0)
			ec = detail::last_code(errno);
		return r == 0;
	}

	uniqd_pool *p_ = nullptr;
	std::unique_ptr<copies> copies_;	/* non-null while p_ is */
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
