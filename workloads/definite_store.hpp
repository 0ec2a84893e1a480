// The reference model's definitely present keys and their values
// (reference.hpp): a sorted base of two arrays, shared between a state and
// its snapshots (immutable once built), and an overlay of the changes since
// the base was last rebuilt (a pooled ordered map of key -> value or
// tombstone). Lookups and counts search the small overlay, then the arrays
// (a binary search narrowed by a radix index over the keys), where the
// ordered map this replaces chased a pointer per level of a tree of every
// key. The overlay is merged into a new base when it grows past a share of
// the base, or when the caller is about to read a lot (settle).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <utility>
#include <vector>

#include "workloads/sorted_index.hpp"

namespace gpudict {

class DefiniteStore {
 public:
  DefiniteStore() = default;
  // A copy shares the base and copies the overlay (into a pool of its own).
  DefiniteStore(const DefiniteStore& o);
  DefiniteStore& operator=(const DefiniteStore&) = delete;

  // Replaces the contents with pairs sorted by key, keys unique.
  void build(std::vector<uint64_t> keys, std::vector<uint64_t> values);
  void clear();

  void put(uint64_t key, uint64_t value);
  void erase(uint64_t key);
  // put or erase (nullopt) of each keys[i], keys ascending and unique: into
  // the overlay, or, when they are many for the base, merged into it at once.
  void apply_sorted(const std::vector<uint64_t>& keys, const std::vector<std::optional<uint64_t>>& outcomes);
  // The key's value, or null when it is not definitely present (valid until
  // the next change).
  const uint64_t* find(uint64_t key) const;
  // Keys in [lo, hi] (0 when lo > hi).
  uint64_t count(uint64_t lo, uint64_t hi) const;
  uint64_t size() const { return count(0, UINT64_MAX); }
  // Merges the overlay into the base if a read of about `reads` lookups
  // would pay for it (or the overlay is large). Queries then search arrays
  // only.
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
    size_t bi_ = 0;
    std::pmr::map<uint64_t, std::optional<uint64_t>>::const_iterator oi_;
    bool valid_ = false, from_overlay_ = false;
    uint64_t key_ = 0, value_ = 0;
  };
  Cursor lower_bound(uint64_t lo) const;

  // Every pair, ascending (tests).
  std::map<uint64_t, uint64_t> to_map() const;

 private:
  struct Base {
    std::vector<uint64_t> keys, values;
    SortedIndex ix;
    void index() { ix.build(keys); }
    size_t lower(uint64_t key) const { return ix.lower(keys, key); }  // first position with keys[i] >= key
  };
  bool in_base(uint64_t key) const;
  void maybe_merge();
  void merge();
  // A new base: the base with m sorted updates (update_key(j), value_of(j)
  // null: a delete) applied, on the host's threads.
  template <class UpdateKey, class ValueOf>
  void merge_into_base(uint64_t m, UpdateKey update_key, ValueOf value_of);

  std::shared_ptr<const Base> base_ = std::make_shared<Base>();
  std::pmr::unsynchronized_pool_resource pool_;
  std::pmr::map<uint64_t, std::optional<uint64_t>> overlay_{&pool_};  // nullopt: deleted from the base
};

}  // namespace gpudict
