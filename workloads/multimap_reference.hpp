// The reference model for multimap semantics (docs/semantics.md, section 10):
// a key holds a multiset of values; insert adds a pair, delete removes every
// pair of the key.
//
// What the semantics leave open is always of one shape, so one cell type
// covers it: a key may hold any multiset M with `must` ⊆ M ⊆ `must` ⊎ `may`.
// A definite key has `may` empty. (A concurrent batch that deletes a key and
// inserts into it leaves any sub-multiset of its inserts: must = {}, may = I.)
// Kept apart from the map model (reference.hpp) so that the map path, which
// every ordered structure uses, stays as simple and fast as it is.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"

namespace gpudict {

// A multiset of values: a sorted vector (equal values repeated).
using ValueBag = std::vector<uint64_t>;

struct MultiCell {
  ValueBag must;  // pairs the key certainly holds
  ValueBag may;   // pairs it may hold in addition (any sub-multiset of them)
  bool empty() const { return must.empty() && may.empty(); }
};

// One key's updates in an in-flight concurrent batch (or a phased batch
// before it is applied): whether the batch deletes the key, and every value it
// inserts, sorted.
struct MultiTouch {
  uint64_t key = 0;
  bool deleted = false;
  ValueBag inserted;          // every insert of the key in the batch
  ValueBag inserted_after;    // the inserts after its last delete in batch order (LastWins)
};
// The batch's updates grouped by key, sorted by key.
std::vector<MultiTouch> group_multi_updates(const Batch& batch);

// What one query may see of one key: its cell, plus the key's updates when a
// concurrent batch touching it is in flight (then nothing collapses it).
struct MultiView {
  uint64_t key = 0;
  const MultiCell* cell = nullptr;      // null: no pairs before the batch
  const MultiTouch* touch = nullptr;    // null: untouched

  // The least and largest number of pairs the key may show.
  uint64_t min_pairs() const;
  uint64_t max_pairs() const;
  // Pairs every answer must include (a range's pairs of the key must contain
  // them) and pairs an answer may include at most (as multisets).
  ValueBag required() const;
  ValueBag allowed() const;
  // A lookup may report "not found" / `value`.
  bool lookup_may_miss() const;
  bool lookup_may_return(uint64_t value) const;
  bool collapsible() const { return touch == nullptr && cell != nullptr && !cell->may.empty(); }
};

// One multimap state: the live structure or a snapshot.
class MultiState {
 public:
  // Every pair of `initial` is kept (no "later wins").
  void build(const KeyValues& initial);

  // Applies a phased batch's updates under `rule`:
  //   DeletesThenInserts, AnyUpdate: the deletes, then every insert (AnyUpdate
  //     is not a multimap rule; the verifier refuses it before this point);
  //   LastWins: in batch order (a delete empties the key, an insert adds);
  //   DeleteWinsElseAny: a deleted key ends empty, else it gains every insert.
  void apply_phased(const std::vector<MultiTouch>& groups, DuplicateRule rule);
  // After a concurrent batch: not deleted -> its pairs plus every insert;
  // deleted -> any sub-multiset of its inserts.
  void apply_concurrent(const std::vector<MultiTouch>& groups);

  // Calls fn(view) for every key in [lo, hi] that may hold pairs or is
  // touched, ascending; stops when fn returns false. Nothing when lo > hi.
  void for_each(uint64_t lo, uint64_t hi, const std::vector<MultiTouch>* touched,
                const std::function<bool(const MultiView&)>& fn) const;
  MultiView view(uint64_t key, const std::vector<MultiTouch>* touched) const;

  // --- collapse (untouched keys only; a view that is not collapsible is left alone) ---
  void observe_lookup(uint64_t key, bool found, uint64_t value);  // at least that value / no pairs
  void observe_pairs(uint64_t key, const ValueBag& seen);          // exactly these pairs
  void observe_count_extreme(uint64_t key, bool at_min);           // may -> dropped / kept

  const std::map<uint64_t, MultiCell>& cells() const { return cells_; }
  uint64_t pairs() const;  // certain pairs (for tests)

 private:
  void store(uint64_t key, MultiCell c);  // erases the key when the cell is empty
  std::map<uint64_t, MultiCell> cells_;   // keys that may hold pairs
};

// The entry of `key` in a sorted MultiTouch vector (null vector: none), or null.
const MultiTouch* find_touch(const std::vector<MultiTouch>* touched, uint64_t key);

// Multiset helpers on sorted vectors.
ValueBag bag_union(const ValueBag& a, const ValueBag& b);   // a ⊎ b
bool bag_includes(const ValueBag& big, const ValueBag& small);  // small ⊆ big
ValueBag bag_minus(const ValueBag& a, const ValueBag& b);   // a − b (b ⊆ a)

// Live state plus named snapshots (copies, ambiguous cells included).
class MultiReference {
 public:
  void build(const KeyValues& initial) { live_.build(initial); }
  MultiState& live() { return live_; }
  MultiState& state(const std::string& snapshot);  // "" -> live; InputError when unknown
  void snapshot(const std::string& name);
  void drop_snapshot(const std::string& name);

 private:
  MultiState live_;
  std::map<std::string, MultiState> snapshots_;
};

}  // namespace gpudict
