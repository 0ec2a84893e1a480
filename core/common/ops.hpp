// The operations and key widths, as the structures' internals and the
// replay engine name them (the library's op_code, mixed_batch.hpp, has the
// same codes). Plain C++ (no CUDA) so host-only code can use it. The
// engine's batches of them: workloads/batch.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpudict {

// Width of keys and values. Everything in the model is stored as u64 so one
// model serves 32- and 64-bit workloads; a u32 workload never holds a value
// above 0xFFFFFFFF (the readers and generators guarantee it).
enum class KeyType : uint8_t { U32 = 4, U64 = 8 };

inline constexpr unsigned width_bytes(KeyType t) { return static_cast<unsigned>(t); }
inline constexpr uint64_t max_of(KeyType t) {
  return t == KeyType::U32 ? 0xFFFFFFFFull : 0xFFFFFFFFFFFFFFFFull;
}
inline std::string_view type_name(KeyType t) { return t == KeyType::U32 ? "u32" : "u64"; }

enum class OpType : uint8_t { Insert = 0, Delete = 1, Lookup = 2, Count = 3, Range = 4, Successor = 5 };
inline constexpr int kNumOpTypes = 6;
inline constexpr std::array<OpType, kNumOpTypes> kAllOpTypes = {
    OpType::Insert, OpType::Delete, OpType::Lookup, OpType::Count, OpType::Range, OpType::Successor};

inline std::string_view op_name(OpType t) {
  constexpr std::array<std::string_view, kNumOpTypes> names = {"insert", "delete",  "lookup",
                                                               "count",  "range",   "successor"};
  return names[static_cast<int>(t)];
}
inline constexpr bool is_update(OpType t) { return t == OpType::Insert || t == OpType::Delete; }
inline constexpr bool is_ordered_query(OpType t) {
  return t == OpType::Count || t == OpType::Range || t == OpType::Successor;
}

}  // namespace gpudict
