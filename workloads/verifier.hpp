// The verifier: checks every query result of every batch a structure ran
// against what the semantics (docs/semantics.md) allow, on a CPU model of the
// dictionary that it advances batch by batch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"

namespace gpudict {

struct Mismatch {
  uint64_t batch = 0;  // index of the batch in the workload (0-based, over all phases)
  uint64_t op = 0;     // index of the operation in its batch
  OpType type = OpType::Lookup;
  uint64_t key = 0;
  uint64_t arg = 0;
  std::string expected;  // what the semantics allow, in words ("value 17", "not found", "count in [3, 5]")
  std::string got;
  // Non-empty: a check of the whole state after the batch (check_size),
  // named here, rather than of operation `op`.
  std::string subject;
};

class Verifier {
 public:
  // `phased_rule`: the structure's rule for several updates of one key in one
  // phased batch. Concurrent batches follow the general concurrent rule.
  // `semantics`: map (unique keys), multimap (a key holds a multiset of values)
  // or set (values ignored everywhere). Multimap with AnyUpdate is refused
  // (InputError): the multimap rule is DeletesThenInserts.
  Verifier(KeyType key_type, KeyType value_type, DuplicateRule phased_rule, Semantics semantics,
           size_t max_reported = 10);
  // Map semantics.
  Verifier(KeyType key_type, KeyType value_type, DuplicateRule phased_rule, size_t max_reported = 10);
  ~Verifier();
  Verifier(const Verifier&) = delete;
  Verifier& operator=(const Verifier&) = delete;

  void build(const KeyValues& initial);
  void build(KeyValues&& initial);  // frees initial's arrays as it goes
  // Checks every query result of `batch` (which the structure has run) and
  // advances the model by the batch's updates. Returns the number of query
  // results checked.
  uint64_t check_batch(uint64_t batch_index, const Batch& batch, const BatchResults& results);
  void snapshot(const std::string& name);
  void drop_snapshot(const std::string& name);
  // On: the structure runs a concurrent batch's queries first, on the state
  // before the batch (Capabilities::concurrent_queries_first); they are then
  // checked exactly against that state, without the allowances for keys the
  // batch updates (docs/semantics.md, section 4). Off by default.
  void set_concurrent_queries_first(bool on);
  // After batch `batch_index` (checked): the structure holds `live` keys.
  // Compared with the reference when it knows its size exactly (no
  // ambiguous keys); a difference is a mismatch. Not counted in checked().
  void check_size(uint64_t batch_index, uint64_t live);

  uint64_t checked() const;                          // query results checked so far
  uint64_t mismatches() const;                       // how many failed
  const std::vector<Mismatch>& first_mismatches() const;  // the first max_reported

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpudict
