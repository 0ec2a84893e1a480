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

// The graph operations (docs/semantics.md, "Graph operations") work on the
// edge keys u * 2^32 + v: vertex_delete (key u * 2^32) removes every edge
// from and to u; triangles (key 0) counts the triangles of the undirected
// graph the edges form. Only structures that declare them run them.
enum class OpType : uint8_t {
  Insert = 0,
  Delete = 1,
  Lookup = 2,
  Count = 3,
  Range = 4,
  Successor = 5,
  VertexDelete = 6,
  Triangles = 7
};
inline constexpr int kNumOpTypes = 8;
inline constexpr std::array<OpType, kNumOpTypes> kAllOpTypes = {
    OpType::Insert, OpType::Delete,    OpType::Lookup,       OpType::Count,
    OpType::Range,  OpType::Successor, OpType::VertexDelete, OpType::Triangles};

inline std::string_view op_name(OpType t) {
  constexpr std::array<std::string_view, kNumOpTypes> names = {"insert", "delete",    "lookup",        "count",
                                                               "range",  "successor", "vertex_delete", "triangles"};
  return names[static_cast<int>(t)];
}
// Edge (key) updates: an insert or delete of one key. A vertex delete also
// changes the structure but is neither (it is applied after them).
inline constexpr bool is_update(OpType t) { return t == OpType::Insert || t == OpType::Delete; }
// Operations that return a result.
inline constexpr bool is_query(OpType t) { return !is_update(t) && t != OpType::VertexDelete; }
inline constexpr bool is_graph_op(OpType t) { return t == OpType::VertexDelete || t == OpType::Triangles; }
inline constexpr bool is_ordered_query(OpType t) {
  return t == OpType::Count || t == OpType::Range || t == OpType::Successor;
}

}  // namespace gpudict
