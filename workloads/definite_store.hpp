// The reference model's definitely present keys and their values
// (reference.hpp), in three levels, newest first:
// - an overlay of single changes (a pooled ordered map of key -> value or
//   tombstone), for the keys a batch updates one at a time;
// - a delta: sorted arrays of the changes of whole lists (a phased batch's
//   updates arrive as one sorted list), each entry a value replacing a base
//   pair, a new key, or a tombstone over a base key;
// - a sorted base of two arrays.
// The delta and the base are immutable once built and shared between a
// state and its snapshots. A list is merged into the delta (its size plus
// the list's, on the host's threads); the overlay is folded into the delta
// when it grows past a share of the levels below it, and the delta into the
// base when it grows past a share of the base, or when the caller is about
// to read a lot (settle). Lookups and counts search the small overlay, then
// the arrays (binary searches narrowed by radix indexes), where the ordered
// map this replaces chased a pointer per level of a tree of every key.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <utility>
#include <vector>

#include "workloads/sorted_index.hpp"
#include "workloads/uninit_vector.hpp"

namespace gpudict {

class DefiniteStore {
 public:
  DefiniteStore() = default;
  // A copy shares the base and copies the overlay (into a pool of its own).
  DefiniteStore(const DefiniteStore& o);
  DefiniteStore& operator=(const DefiniteStore&) = delete;

  // Replaces the contents with pairs sorted by key, keys unique.
  void build(uninit_vector<uint64_t> keys, uninit_vector<uint64_t> values);
  void build(const std::vector<uint64_t>& keys, const std::vector<uint64_t>& values);
  void clear();

  void put(uint64_t key, uint64_t value);
  void erase(uint64_t key);
  // put or erase (nullopt) of each keys[i], keys ascending and unique: into
  // the overlay when few, else merged into the delta.
  void apply_sorted(const std::vector<uint64_t>& keys, const std::vector<std::optional<uint64_t>>& outcomes);
  // The key's value, or null when it is not definitely present (valid until
  // the next change).
  const uint64_t* find(uint64_t key) const;
  // Keys in [lo, hi] (0 when lo > hi).
  uint64_t count(uint64_t lo, uint64_t hi) const;
  uint64_t size() const { return count(0, UINT64_MAX); }
  // Folds the overlay (and the delta) into the arrays below if a read of
  // about `reads` lookups would pay for it. Queries then search arrays only.
  void settle(uint64_t reads);

  // The keys from `lo` up, ascending.
  class Cursor {
   public:
    bool valid() const { return valid_; }
    uint64_t key() const { return key_; }
    uint64_t value() const { return value_; }
    void next();

   private:
    friend class DefiniteStore;
    void settle();
    const DefiniteStore* s_ = nullptr;
    size_t bi_ = 0, di_ = 0;
    std::pmr::map<uint64_t, std::optional<uint64_t>>::const_iterator oi_;
    bool valid_ = false;
    uint64_t key_ = 0, value_ = 0;
  };
  Cursor lower_bound(uint64_t lo) const;

  // Every pair, ascending (tests).
  std::map<uint64_t, uint64_t> to_map() const;

 private:
  struct Base {
    uninit_vector<uint64_t> keys, values;
    SortedIndex ix;
    void index() { ix.build(keys); }
    size_t lower(uint64_t key) const { return ix.lower(keys, key); }  // first position with keys[i] >= key
    bool contains(uint64_t key) const {
      const size_t i = lower(key);
      return i < keys.size() && keys[i] == key;
    }
  };
  // A delta entry's kind: what it does to the base.
  enum Kind : uint8_t { kTomb, kNew, kOver };  // deletes a base key; a key the base lacks; a base key's new value
  struct Delta : Base {
    uninit_vector<uint8_t> kind;
    std::vector<int64_t> adjust;  // adjust[i]: the keys delta[0, i) add to the base's (size + 1 entries)
  };
  // The value of `key` in the delta and base, or null.
  const uint64_t* below(uint64_t key) const;
  void maybe_merge();
  // The overlay into the delta, the delta into the base.
  void fold_overlay();
  void fold_delta();
  // The delta with m sorted, unique updates (update_key(j), value_of(j)
  // null: a delete) applied, on the host's threads; then the delta into
  // the base when it has grown past a share of it.
  template <class UpdateKey, class ValueOf>
  void merge_into_delta(uint64_t m, UpdateKey update_key, ValueOf value_of);

  std::shared_ptr<const Base> base_ = std::make_shared<Base>();
  std::shared_ptr<const Delta> delta_ = std::make_shared<Delta>();
  std::pmr::unsynchronized_pool_resource pool_;
  std::pmr::map<uint64_t, std::optional<uint64_t>> overlay_{&pool_};  // nullopt: deleted from the levels below
};

}  // namespace gpudict
