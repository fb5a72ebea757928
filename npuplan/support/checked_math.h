// Checked integer arithmetic for values read from input (docs/reliability.md,
// "Checked arithmetic"). Every sum or product formed from input values goes
// through these: an overflow is an input error naming the node or field, never
// a wrapped value that a checker then accepts. Built on the compiler's
// overflow builtins (exact, for any mix of integer types).
//
//   auto end = CheckedAdd(offset, size);          // std::optional<int64_t>
//   if (!end) return Bad(where, "offset + size overflows int64");
//   auto id = CheckedCast<int32_t>(value);        // nullopt outside int32
#ifndef NPUPLAN_SUPPORT_CHECKED_MATH_H_
#define NPUPLAN_SUPPORT_CHECKED_MATH_H_

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

namespace npuplan {

// a + b, a - b, a * b in T; nullopt when the exact result does not fit in T.
template <typename T = int64_t, typename A, typename B>
constexpr std::optional<T> CheckedAdd(A a, B b) {
  static_assert(std::is_integral_v<T> && std::is_integral_v<A> && std::is_integral_v<B>);
  T r{};
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
template <typename T = int64_t, typename A, typename B>
constexpr std::optional<T> CheckedSub(A a, B b) {
  static_assert(std::is_integral_v<T> && std::is_integral_v<A> && std::is_integral_v<B>);
  T r{};
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
template <typename T = int64_t, typename A, typename B>
constexpr std::optional<T> CheckedMul(A a, B b) {
  static_assert(std::is_integral_v<T> && std::is_integral_v<A> && std::is_integral_v<B>);
  T r{};
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// `v` as To when it is representable exactly (no truncation, no sign change).
template <typename To, typename From>
constexpr std::optional<To> CheckedCast(From v) {
  static_assert(std::is_integral_v<To> && std::is_integral_v<From>);
  if (!std::in_range<To>(v)) return std::nullopt;
  return static_cast<To>(v);
}

// Running sum / product of input values: Add/Mul return false (and leave the
// value unchanged) on overflow, so a loop can stop at the first culprit.
template <typename T = int64_t>
class CheckedSum {
 public:
  constexpr explicit CheckedSum(T start = 0) : value_(start) {}
  template <typename V>
  [[nodiscard]] constexpr bool Add(V v) {
    T r{};
    if (__builtin_add_overflow(value_, v, &r)) return false;
    value_ = r;
    return true;
  }
  constexpr T value() const { return value_; }

 private:
  T value_;
};
template <typename T = int64_t>
class CheckedProduct {
 public:
  constexpr explicit CheckedProduct(T start = 1) : value_(start) {}
  template <typename V>
  [[nodiscard]] constexpr bool Mul(V v) {
    T r{};
    if (__builtin_mul_overflow(value_, v, &r)) return false;
    value_ = r;
    return true;
  }
  constexpr T value() const { return value_; }

 private:
  T value_;
};

}  // namespace npuplan

#endif  // NPUPLAN_SUPPORT_CHECKED_MATH_H_
