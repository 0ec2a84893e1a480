// The reference model the verifier checks results against (docs/semantics.md).
//
// Definite keys live in a DefiniteStore (definite_store.hpp: sorted arrays
// shared with snapshots, plus an ordered overlay of recent changes); keys
// whose state the semantics leave open (several updates of one key in one
// batch under a rule that allows more than one outcome) live in a usually
// empty map<key, Outcomes> of "ambiguous cells" (a std::pmr::map, its nodes
// from a pool: ModelState says why). A key is in at most one of the two; a
// key in neither is absent. Snapshots are copies (sharing the arrays).
//
// The model knows what is *possible*; deciding whether a structure's answer is
// acceptable, and wording a mismatch, is the verifier's job (verifier.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory_resource>
#include <optional>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"
#include "workloads/definite_store.hpp"
#include "workloads/uninit_vector.hpp"

namespace gpudict {

// What a key may hold: std::nullopt = absent, a value = present with it.
using Outcome = std::optional<uint64_t>;
// A set of outcomes: sorted (absent first, then values ascending), no duplicates.
using Outcomes = std::vector<Outcome>;

// Sorts and deduplicates `o` into an Outcomes set.
Outcomes make_outcomes(std::vector<Outcome> o);
// Union of two Outcomes sets.
Outcomes union_outcomes(const Outcomes& a, const Outcomes& b);
bool contains(const Outcomes& set, const Outcome& o);

// All updates of one key in one batch: their effects in batch order
// (insert -> its value, delete -> nullopt).
struct KeyUpdates {
  uint64_t key = 0;
  std::vector<Outcome> effects;
};
// The batch's updates grouped by key, sorted by key.
std::vector<KeyUpdates> group_updates(const Batch& batch);

// The outcomes a phased batch may leave for a key with these updates (batch
// order) under `rule`: LastWins -> the last; DeleteWinsElseAny -> absent if
// any delete, else any of the inserted values; AnyUpdate -> any effect.
Outcomes resolve_phased(DuplicateRule rule, const std::vector<Outcome>& effects);
// The outcomes a concurrent batch may leave: the effect of any of the updates.
Outcomes resolve_concurrent(const std::vector<Outcome>& effects);

// The keys an in-flight concurrent batch updates, each with the set of its
// update effects. While the batch runs, a query may observe such a key in its
// pre-batch state or in any of these effects.
class TouchedKeys {
 public:
  struct Entry {
    uint64_t key;
    Outcomes effects;
  };
  TouchedKeys() = default;
  explicit TouchedKeys(const std::vector<KeyUpdates>& groups);

  const Outcomes* find(uint64_t key) const;  // null: not touched
  size_t lower_bound(uint64_t key) const;   // index of the first entry with key >= `key`
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const Entry& operator[](size_t i) const { return entries_[i]; }

 private:
  std::vector<Entry> entries_;  // sorted by key
};

// What one key may hold, as seen by one query: its state before the query's
// batch, exactly one of
//   definite absent   (set == nullptr, present == false)
//   definite present  (set == nullptr, present == true, value)
//   a set of outcomes (set != nullptr: an ambiguous cell)
// and, for a key the in-flight concurrent batch updates (touched), the
// batch's update effects, any of which the query may also observe. The two
// are kept apart (no union is built per cell: a successor walking a window
// of hot keys visits every one of them); outcomes() unites them for
// messages. A touched cell is never collapsed by what a query observes.
struct Cell {
  uint64_t key = 0;
  bool touched = false;
  bool present = false;
  uint64_t value = 0;
  const Outcomes* set = nullptr;
  const Outcomes* effects = nullptr;  // touched: the batch's update effects

  bool definite() const { return set == nullptr && effects == nullptr; }
  bool can_be_absent() const;
  bool can_be_present() const;
  bool allows(const Outcome& o) const;
  Outcomes outcomes() const;  // as a set (for messages)
};

// The definite keys as a map (for tests), and the ambiguous cells' map (its
// nodes from the state's own pool).
using DefiniteMap = std::map<uint64_t, uint64_t>;
using AmbiguousMap = std::pmr::map<uint64_t, Outcomes>;

// One dictionary state: the live structure or a snapshot.
//
// Why a pool: a std::map over the default allocator gives every freed node
// back to glibc's malloc. Deleting part of a large model leaves millions of
// small free chunks between live ones, and glibc then sorts thousands of
// them into its bins on each later malloc that finds no exact fit: the CUDA
// driver's own allocations inside the next batch's launches then ran slowly,
// time the device spent waiting inside timed regions. The pool keeps freed
// nodes on its own free lists, outside malloc's.
class ModelState {
 public:
  ModelState() = default;
  // A snapshot: a copy in a pool of its own (also what a move does: the maps
  // cannot leave their pool). Not assignable, for the same reason.
  ModelState(const ModelState& o);
  ModelState& operator=(const ModelState&) = delete;

  void clear();
  // Replaces the contents with `initial` (later duplicates win): a radix
  // sort (kv_sort.hpp), then an in-order fill of the map.
  void build(const KeyValues& initial);
  void build(KeyValues&& initial);  // frees initial's arrays as it goes

  // --- mutation ---
  void put(uint64_t key, uint64_t value);  // definitely present with `value`
  void erase(uint64_t key);                // definitely absent
  // The key may hold any of `outcomes` (must be non-empty); one outcome makes
  // it definite, several make it an ambiguous cell.
  void set(uint64_t key, const Outcomes& outcomes);
  // Applies a batch's updates: phased under `rule`, or concurrent (each
  // touched key then holds any of its update effects).
  void apply_phased(const std::vector<KeyUpdates>& groups, DuplicateRule rule);
  void apply_concurrent(const std::vector<KeyUpdates>& groups);

  // A phased batch's vertex deletes, after its edge updates: every key
  // whose source or target is one of `vertices` (keys u * 2^32 + v)
  // becomes definitely absent.
  void erase_vertices(std::vector<uint32_t> vertices);

  // --- collapse (an observation fixes an ambiguous cell; definite keys and
  //     touched keys are left alone) ---
  void collapse(uint64_t key, const Outcome& observed);
  void collapse_present(uint64_t key);  // drop "absent" from the cell's outcomes

  // --- what queries may see; `touched` (may be null) is the in-flight
  //     concurrent batch ---
  Cell cell(uint64_t key, const TouchedKeys* touched) const;
  // Calls fn(cell) for every key in [lo, hi] that is not definitely absent,
  // ascending; stops when fn returns false. Nothing when lo > hi.
  // The cell's set pointer is valid only during the call.
  void for_each_cell(uint64_t lo, uint64_t hi, const TouchedKeys* touched,
                     const std::function<bool(const Cell&)>& fn) const;
  // Like for_each_cell, over every key > `key` (none when key is the maximum).
  void for_each_cell_above(uint64_t key, const TouchedKeys* touched,
                           const std::function<bool(const Cell&)>& fn) const;

  struct CountBounds {
    uint64_t min = 0;  // keys that must be present
    uint64_t max = 0;  // keys that may be present
  };
  // The triangles of the undirected graph of the keys (triangles.hpp): its
  // exact count, or with ambiguous cells the range from the definite keys'
  // count to the count with every cell that may be present.
  CountBounds triangle_bounds() const;

  CountBounds count_bounds(uint64_t lo, uint64_t hi, const TouchedKeys* touched) const;
  // A count equal to its minimum (to_min) / maximum fixed every untouched
  // ambiguous cell in [lo, hi]: absent / present.
  void collapse_count(uint64_t lo, uint64_t hi, const TouchedKeys* touched, bool to_min);

  // A successor(key) answer the semantics allow: `key` may be the successor
  // holding any of `values`.
  // A key the successor may return and what it may hold (the cell points
  // into this state and the touched keys: valid until either changes).
  struct SuccessorOption {
    uint64_t key = 0;
    Cell cell;
    std::vector<uint64_t> values() const;  // the values it may hold, ascending (for messages)
  };
  struct SuccessorOptions {
    std::vector<SuccessorOption> found;  // ascending by key
    bool not_found = false;              // "no successor" is allowed
  };
  SuccessorOptions successor_options(uint64_t key, const TouchedKeys* touched) const;
  // successor(key) returned `result` (key, value) or not-found (nullopt): the
  // untouched ambiguous cells in between become absent, the result present
  // with its value.
  void collapse_successor(uint64_t key, const std::optional<std::pair<uint64_t, uint64_t>>& result,
                          const TouchedKeys* touched);

  // Before many reads (about `reads` queries): lets the definite store fold
  // its recent changes into its arrays when that pays (not thread-safe;
  // the reads after it may run on several threads).
  void settle(uint64_t reads) { definite_.settle(reads); }
  // --- inspection ---
  DefiniteMap definite() const { return definite_.to_map(); }
  uint64_t definite_size() const { return definite_.size(); }
  const AmbiguousMap& ambiguous() const { return ambiguous_; }
  // The key's outcomes in this state (no batch in flight).
  Outcomes outcomes(uint64_t key) const;

 private:
  // apply_phased and apply_concurrent: each key's effects through `resolve`.
  template <class Resolve>
  void apply_groups(const std::vector<KeyUpdates>& groups, Resolve resolve);
  // build: the initial pairs sorted by key, unique (kv_sort.hpp).
  void build_sorted(const uninit_vector<std::pair<uint64_t, uint64_t>>& pairs);

  // Declared before the maps: made before them, destroyed after them.
  std::pmr::unsynchronized_pool_resource pool_;
  DefiniteStore definite_;
  AmbiguousMap ambiguous_{&pool_};  // each with >= 2 outcomes
};

// The live state plus named snapshots (copies, ambiguous cells included).
class ReferenceModel {
 public:
  void build(const KeyValues& initial);
  void build(KeyValues&& initial);
  ModelState& live() { return live_; }
  const ModelState& live() const { return live_; }
  // The state queries of a batch run against: "" -> live. Throws InputError
  // for an unknown snapshot.
  ModelState& state(const std::string& snapshot);
  const ModelState& state(const std::string& snapshot) const;
  // Throws InputError when the name is in use / unknown.
  void snapshot(const std::string& name);
  void drop_snapshot(const std::string& name);
  bool has_snapshot(const std::string& name) const { return snapshots_.count(name) != 0; }
  size_t snapshots() const { return snapshots_.size(); }

 private:
  ModelState live_;
  std::map<std::string, ModelState> snapshots_;
};

}  // namespace gpudict
