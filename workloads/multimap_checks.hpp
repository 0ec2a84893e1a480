// The verifier's checks for multimap semantics (docs/semantics.md, section
// 10), on the multiset model of multimap_reference.hpp. Internal to the
// verifier (verifier.cpp drives it batch by batch and keeps the mismatches).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"
#include "workloads/multimap_reference.hpp"
#include "workloads/verifier_text.hpp"

namespace gpudict {

class MultimapChecker {
 public:
  // Throws InputError for AnyUpdate: "one of the updates" has no meaning when
  // inserts add pairs (the multimap rule is DeletesThenInserts).
  explicit MultimapChecker(DuplicateRule phased_rule);

  void build(const KeyValues& initial) { model_.build(initial); }
  void snapshot(const std::string& name) { model_.snapshot(name); }
  void drop_snapshot(const std::string& name) { model_.drop_snapshot(name); }

  // Before the batch's queries: a phased batch's updates take effect; a
  // concurrent batch on the live state marks its touched keys.
  void begin_batch(const Batch& b);
  // The problem with query `i` of the batch, if any (a correct answer
  // collapses what it observed).
  std::optional<Problem> check(const Batch& b, size_t i, const BatchResults& r);
  // After the queries: a concurrent batch's updates take effect.
  void end_batch(const Batch& b);

  const MultiReference& model() const { return model_; }

 private:
  std::optional<Problem> check_lookup(MultiState& s, uint64_t key, bool found, uint64_t value);
  std::optional<Problem> check_count(MultiState& s, uint64_t lo, uint64_t hi, uint64_t got);
  std::optional<Problem> check_range(MultiState& s, uint64_t lo, uint64_t hi, const BatchResults& r, size_t i);
  std::optional<Problem> check_successor(MultiState& s, uint64_t key, bool found, uint64_t got_key,
                                         uint64_t got_value);

  DuplicateRule rule_;
  MultiReference model_;
  std::vector<MultiTouch> groups_;          // the current batch's updates by key
  const std::vector<MultiTouch>* touched_ = nullptr;  // set while a concurrent batch on the live state is checked
  MultiState* queried_ = nullptr;           // the state the current batch's queries read
};

}  // namespace gpudict
