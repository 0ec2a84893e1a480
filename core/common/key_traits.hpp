// Key and value widths as types: what device code needs to know about a key
// or value type instead of 32-bit literals (its largest value, its bit count,
// the unsigned type CUDA's atomics take), and the one place that maps the
// engine's run-time KeyType pair onto the typed instantiations a structure
// has. Plain C++ (host and device).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/common/ops.hpp"

namespace gpudict {

template <class T>
struct KeyTraits;

template <>
struct KeyTraits<uint32_t> {
  static constexpr KeyType kind = KeyType::U32;
  static constexpr unsigned bits = 32;
  static constexpr uint32_t max = 0xFFFFFFFFu;
  using atomic_type = unsigned int;  // what atomicCAS/atomicExch take for this width
};

template <>
struct KeyTraits<uint64_t> {
  static constexpr KeyType kind = KeyType::U64;
  static constexpr unsigned bits = 64;
  static constexpr uint64_t max = 0xFFFFFFFFFFFFFFFFull;
  using atomic_type = unsigned long long;
  static_assert(sizeof(unsigned long long) == 8, "atomics on 64-bit words");
};

// The largest key (or value) of width T: every structure stores it like any
// other (no value of a user's domain is reserved at either width).
template <class T>
inline constexpr T key_max = KeyTraits<T>::max;

template <class T>
inline constexpr KeyType key_type_of = KeyTraits<T>::kind;

// A type as a value, for dispatching on a (key, value) type pair.
template <class T>
struct TypeTag {
  using type = T;
};

// The (key, value) pairs the structures are instantiated for. A u64-key
// workload with u32 values runs on the u64/u64 instantiation (its values fit;
// a fourth instantiation would cost build time and no device bytes that
// matter next to 8-byte keys).
//   u32 keys, u32 values -> <uint32_t, uint32_t>
//   u32 keys, u64 values -> <uint32_t, uint64_t>
//   u64 keys, any values -> <uint64_t, uint64_t>
template <class F>
decltype(auto) with_kv_types(KeyType key, KeyType value, F&& f) {
  if (key == KeyType::U64) return f(TypeTag<uint64_t>{}, TypeTag<uint64_t>{});
  if (value == KeyType::U64) return f(TypeTag<uint32_t>{}, TypeTag<uint64_t>{});
  return f(TypeTag<uint32_t>{}, TypeTag<uint32_t>{});
}

// "u32/u64": the pair a structure was instantiated for, as reports show it.
template <class K, class V>
inline std::string_view kv_name() {
  if constexpr (sizeof(K) == 4 && sizeof(V) == 4) return "u32/u32";
  else if constexpr (sizeof(K) == 4) return "u32/u64";
  else if constexpr (sizeof(V) == 4) return "u64/u32";
  else return "u64/u64";
}

}  // namespace gpudict
