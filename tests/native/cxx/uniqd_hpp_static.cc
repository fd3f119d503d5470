// SPDX-License-Identifier: GPL-2.0
/*
 * What <uniqd.hpp> must refuse at compile time, proved with static_assert
 * (compiled, never run, by mk/libuniqd.mk, with exceptions and with
 * -fno-exceptions -fno-rtti): handles of different tags neither compare
 * nor convert, a handle is not an integer, a class id of one tag does not
 * intern into another's handle type, and the throwing overloads exist
 * exactly when exceptions do.
 */
#include <cstdint>
#include <map>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include "uniqd.hpp"

namespace {

struct ident {
	static constexpr const char *name = "test.ident";
};
struct layout {};

using hi = uniqd::handle<ident>;
using hl = uniqd::handle<layout>;
using hany = uniqd::handle<>;

template <class A, class B, class = void>
struct eq_ok : std::false_type {};
template <class A, class B>
struct eq_ok<A, B, std::void_t<decltype(std::declval<A>() == std::declval<B>())>>
	: std::true_type {};

template <class A, class B, class = void>
struct lt_ok : std::false_type {};
template <class A, class B>
struct lt_ok<A, B, std::void_t<decltype(std::declval<A>() < std::declval<B>())>>
	: std::true_type {};

/* pool::intern(C, s, ec) is well-formed, and what it returns. */
template <class C, class = void>
struct intern_ok : std::false_type {};
template <class C>
struct intern_ok<C, std::void_t<decltype(std::declval<uniqd::pool &>().intern(
				   std::declval<C>(), std::string_view(),
				   std::declval<std::error_code &>()))>>
	: std::true_type {};

/* pool::intern(C, s), the throwing overload. */
template <class C, class = void>
struct intern_throws : std::false_type {};
template <class C>
struct intern_throws<C, std::void_t<decltype(std::declval<uniqd::pool &>().intern(
				       std::declval<C>(), std::string_view()))>>
	: std::true_type {};

/* Same tag: like pointers. */
static_assert(eq_ok<hi, hi>::value && lt_ok<hi, hi>::value, "a handle compares with its kind");
static_assert(eq_ok<hany, hany>::value, "untyped handles compare");

/* Different tags: no comparison, no conversion, either way. */
static_assert(!eq_ok<hi, hl>::value && !eq_ok<hl, hi>::value, "== across tags compiles");
static_assert(!lt_ok<hi, hl>::value && !lt_ok<hl, hi>::value, "< across tags compiles");
static_assert(!std::is_convertible_v<hi, hl> && !std::is_constructible_v<hl, hi>,
	      "a handle converts to another tag's");
static_assert(!eq_ok<hi, hany>::value, "a typed handle compares with an untyped one");
static_assert(!std::is_convertible_v<hi, hany> && std::is_constructible_v<hany, hi>,
	      "forgetting the tag must be explicit");
static_assert(!std::is_constructible_v<hi, hany>, "an untyped handle becomes typed");

/* Not an integer. */
static_assert(!eq_ok<hi, std::uint64_t>::value && !eq_ok<std::uint64_t, hi>::value,
	      "a handle compares with an integer");
static_assert(!std::is_convertible_v<hi, std::uint64_t> &&
	      !std::is_convertible_v<std::uint64_t, hi> && !std::is_constructible_v<hi, std::uint64_t>,
	      "a handle converts to or from an integer");
static_assert(!std::is_convertible_v<hi, bool>, "a handle converts to bool implicitly");

/* Class ids keep their tag too, and pick the handle type. */
static_assert(!eq_ok<uniqd::class_id<ident>, uniqd::class_id<layout>>::value,
	      "class ids of different tags compare");
static_assert(!std::is_convertible_v<std::uint32_t, uniqd::class_id<ident>>,
	      "an integer becomes a class id implicitly");
static_assert(intern_ok<uniqd::class_id<ident>>::value, "intern with a class id");
static_assert(!intern_ok<std::uint32_t>::value, "intern with a bare integer");
static_assert(std::is_same_v<decltype(std::declval<uniqd::pool &>().intern(
				     std::declval<uniqd::class_id<ident>>(), "x",
				     std::declval<std::error_code &>())), hi>,
	      "intern of class_id<ident> gives handle<ident>");

/* The throwing overloads exactly where exceptions are. */
#if defined(__cpp_exceptions)
static_assert(UNIQD_HPP_EXCEPTIONS == 1, "exceptions on, no throwing overloads");
#else
static_assert(UNIQD_HPP_EXCEPTIONS == 0, "exceptions off, throwing overloads");
#endif
static_assert(intern_throws<uniqd::class_id<ident>>::value == bool(UNIQD_HPP_EXCEPTIONS),
	      "intern(c, s) exists without exceptions, or not with them");
static_assert(std::is_constructible_v<uniqd::pool, std::string_view> == bool(UNIQD_HPP_EXCEPTIONS),
	      "the throwing constructor");
static_assert(noexcept(uniqd::pool::open(std::string_view(), 0u,
					 std::declval<std::error_code &>())),
	      "pool::open is noexcept");
static_assert(noexcept(std::declval<uniqd::pool &>().intern(
		      std::declval<uniqd::class_id<ident>>(), "x", std::declval<std::error_code &>())),
	      "error_code overloads are noexcept");

/* A snapshot_map translates typed handles, and is move-only. */
static_assert(std::is_same_v<decltype(std::declval<const uniqd::snapshot_map &>()[hi()]), hi>,
	      "snapshot_map keeps the tag");
static_assert(!std::is_copy_constructible_v<uniqd::snapshot_map> &&
	      std::is_nothrow_move_constructible_v<uniqd::snapshot_map>, "snapshot_map moves");

/* Usable as keys, trivially copyable, pointer-sized. */
static_assert(sizeof(hi) == sizeof(std::uint64_t) && std::is_trivially_copyable_v<hi>,
	      "a handle is a 64-bit value");
static_assert(std::is_default_constructible_v<std::hash<hi>>, "std::hash<handle>");
[[maybe_unused]] std::unordered_set<hi> as_hash_key;
[[maybe_unused]] std::map<hi, int> as_ordered_key;

/* The pool is move-only. */
static_assert(!std::is_copy_constructible_v<uniqd::pool> &&
	      !std::is_copy_assignable_v<uniqd::pool>, "a pool copies");
static_assert(std::is_nothrow_move_constructible_v<uniqd::pool> &&
	      std::is_nothrow_move_assignable_v<uniqd::pool>, "a pool moves");

/* Errors are system_errors. */
static_assert(std::is_base_of_v<std::system_error, uniqd::error>, "uniqd::error");

} /* namespace */
