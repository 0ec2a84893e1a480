#include "workloads/dictionary.hpp"

namespace gpudict {

std::string vertex_block_query_message(const std::string& structure, OpType type, uint64_t lo, uint64_t hi,
                                       uint64_t batch) {
  return structure + " answers count and range over a whole vertex block only ([u * 2^32, u * 2^32 + 2^32 - 1]: " +
         "a vertex's degree and neighbours); got " + std::string(op_name(type)) + " [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "] in batch " + std::to_string(batch);
}

std::string_view rule_name(DuplicateRule r) {
  switch (r) {
    case DuplicateRule::LastWins: return "last-wins";
    case DuplicateRule::DeleteWinsElseAny: return "delete-wins-else-any-insert";
    case DuplicateRule::AnyUpdate: return "any-update";
    case DuplicateRule::DeletesThenInserts: return "deletes-then-inserts";
  }
  return "?";
}

std::string_view rule_description(DuplicateRule r) {
  switch (r) {
    case DuplicateRule::LastWins: return "the batch's last update to a key takes effect";
    case DuplicateRule::DeleteWinsElseAny:
      return "a key deleted in the batch is deleted; otherwise one of its inserts takes effect";
    case DuplicateRule::AnyUpdate: return "one of the batch's updates to a key takes effect";
    case DuplicateRule::DeletesThenInserts:
      return "a key's deletes in the batch take effect first, then its inserts";
  }
  return "?";
}

std::string_view semantics_name(Semantics s) {
  switch (s) {
    case Semantics::Map: return "map";
    case Semantics::Multimap: return "multimap";
    case Semantics::Set: return "set";
  }
  return "?";
}

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::Build: return "build";
    case Phase::Update: return "update";
    case Phase::Lookup: return "lookup";
    case Phase::Count: return "count";
    case Phase::Range: return "range";
    case Phase::Successor: return "successor";
    case Phase::Concurrent: return "concurrent";
    case Phase::Snapshot: return "snapshot";
    case Phase::Cleanup: return "cleanup";
    case Phase::VertexDelete: return "vertex_delete";
    case Phase::Triangles: return "triangles";
  }
  return "?";
}

Phase query_phase(OpType t) {
  switch (t) {
    case OpType::Lookup: return Phase::Lookup;
    case OpType::Count: return Phase::Count;
    case OpType::Range: return Phase::Range;
    case OpType::Successor: return Phase::Successor;
    case OpType::Triangles: return Phase::Triangles;
    case OpType::VertexDelete: return Phase::VertexDelete;
    default: return Phase::Update;
  }
}

}  // namespace gpudict
