#include "core/slabhash/detail/inspect.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/slabhash/detail/map_impl.cuh"

namespace gpudict::slabhash {

static_assert(sizeof(SlabWords) == sizeof(Slab), "a host copy of a slab is 128 bytes");

}  // namespace gpudict::slabhash

namespace gpudict {
namespace slabhash {

template <class Key, class Value>
TableCopy copy_table(const slab_hash_map<Key, Value>& map) {
  return map.impl_->table.copy();
}

template TableCopy copy_table(const slab_hash_map<uint32_t, uint32_t>&);
template TableCopy copy_table(const slab_hash_map<uint32_t, uint64_t>&);
template TableCopy copy_table(const slab_hash_map<uint64_t, uint64_t>&);

}  // namespace slabhash
}  // namespace gpudict

namespace gpudict::slabhash {

template <class K, class V>
TableCopy SlabHash<K, V>::copy() const {
  TableCopy t;
  t.mode = opt_.mode;
  t.key_bytes = sizeof(K);
  t.value_bytes = sizeof(V);
  if (!created_) return t;
  const uint64_t B = buckets_;
  t.buckets = B;
  t.hash_a = hash_.a;
  t.hash_b = hash_.b;
  t.hash_a2 = hash_.a2;
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  t.base.resize(B + 1);
  GPUDICT_CUDA(cudaMemcpy(t.base.data(), base_.data(), (B + 1) * sizeof(Slab), cudaMemcpyDeviceToHost));
  const SlabPool& pool = pool_;
  const uint64_t cap = pool.capacity();
  t.pool.resize(cap);
  t.bitmap.resize(cap / 32);
  uint64_t at = 0;
  for (uint32_t k = 0; k < pool.super_blocks(); ++k) {
    const uint64_t m = pool.super_block_slabs(k);
    GPUDICT_CUDA(cudaMemcpy(t.pool.data() + at, pool.super_block(k), m * sizeof(Slab), cudaMemcpyDeviceToHost));
    GPUDICT_CUDA(cudaMemcpy(t.bitmap.data() + at / 32, pool.super_block_bitmap(k), m / 8, cudaMemcpyDeviceToHost));
    at += m;
  }
  return t;
}

template TableCopy SlabHash<uint32_t, uint32_t>::copy() const;
template TableCopy SlabHash<uint32_t, uint64_t>::copy() const;
template TableCopy SlabHash<uint64_t, uint64_t>::copy() const;


uint64_t empty_key_of(const TableCopy& t) { return t.key_bytes == 4 ? kEmptyKey : kEmptyKeyOf<uint64_t>; }

uint64_t bucket_of(const TableCopy& t, uint64_t key) {
  if (key == empty_key_of(t)) return t.buckets;
  UniversalHash hash;
  hash.a = t.hash_a;
  hash.b = t.hash_b;
  hash.a2 = t.hash_a2;
  const uint32_t B = static_cast<uint32_t>(t.buckets);
  return t.key_bytes == 4 ? hash.bucket(static_cast<uint32_t>(key), B) : hash.bucket(key, B);
}

namespace {

// Which layout of slab_layout.cuh the copy holds.
enum class Kind { Pair32, Key32, WidePair, WideKey };
Kind kind_of(const TableCopy& t) {
  if (t.mode == Mode::Set) return t.key_bytes == 4 ? Kind::Key32 : Kind::WideKey;
  return t.value_bytes == 4 ? Kind::Pair32 : Kind::WidePair;
}
uint64_t word64(const SlabWords& s, uint32_t w) { return static_cast<uint64_t>(s[w]) | (static_cast<uint64_t>(s[w + 1]) << 32); }
void set_word64(SlabWords& s, uint32_t w, uint64_t x) {
  s[w] = static_cast<uint32_t>(x);
  s[w + 1] = static_cast<uint32_t>(x >> 32);
}

}  // namespace

uint32_t slots_of(const TableCopy& t) {
  switch (kind_of(t)) {
    case Kind::Pair32: return PairLayout::kSlots;
    case Kind::Key32: return KeyLayout<uint32_t>::kSlots;
    case Kind::WidePair: return WidePairLayout<uint64_t>::kSlots;
    default: return WideKeyLayout<uint64_t>::kSlots;
  }
}

uint64_t slot_key(const TableCopy& t, const SlabWords& s, uint32_t slot) {
  switch (kind_of(t)) {
    case Kind::Pair32: return s[2 * slot];
    case Kind::Key32: return s[slot];
    case Kind::WidePair: return t.key_bytes == 4 ? s[4 * slot] : word64(s, 4 * slot);
    default: return word64(s, 2 * slot);
  }
}

uint64_t slot_value(const TableCopy& t, const SlabWords& s, uint32_t slot) {
  switch (kind_of(t)) {
    case Kind::Pair32: return s[2 * slot + 1];
    case Kind::WidePair: return word64(s, 4 * slot + 2);
    default: return 0;
  }
}

void set_slot_key(const TableCopy& t, SlabWords& s, uint32_t slot, uint64_t key) {
  switch (kind_of(t)) {
    case Kind::Pair32: s[2 * slot] = static_cast<uint32_t>(key); break;
    case Kind::Key32: s[slot] = static_cast<uint32_t>(key); break;
    case Kind::WidePair:
      if (t.key_bytes == 4)
        s[4 * slot] = static_cast<uint32_t>(key);
      else
        set_word64(s, 4 * slot, key);
      break;
    default: set_word64(s, 2 * slot, key); break;
  }
}

void set_slot_value(const TableCopy& t, SlabWords& s, uint32_t slot, uint64_t value) {
  switch (kind_of(t)) {
    case Kind::Pair32: s[2 * slot + 1] = static_cast<uint32_t>(value); break;
    case Kind::WidePair: set_word64(s, 4 * slot + 2, value); break;
    default: break;
  }
}

TableCheck check_table_copy(const TableCopy& t) {
  TableCheck out;
  const uint64_t B = t.buckets;
  if (B == 0 && t.base.empty() && t.pool.empty() && t.bitmap.empty()) return out;  // no table yet
  const bool pairs = t.mode != Mode::Set;
  const Kind kind = kind_of(t);
  const uint32_t slots = slots_of(t);
  const uint64_t empty_key = empty_key_of(t);
  const uint64_t empty_value = t.value_bytes == 4 ? uint64_t{key_max<uint32_t>} : key_max<uint64_t>;  // all ones
  const uint64_t cap = t.pool.size();
  if ((t.key_bytes != 4 && t.key_bytes != 8) || (t.value_bytes != 4 && t.value_bytes != 8) ||
      t.key_bytes > t.value_bytes) {
    out.error = "malformed copy: " + std::to_string(t.key_bytes) + "-byte keys, " + std::to_string(t.value_bytes) +
                "-byte values";
    return out;
  }
  if (B == 0 || B >= (1ull << 32) || t.base.size() != B + 1 || cap % 32 != 0 || t.bitmap.size() != cap / 32) {
    out.error = "malformed copy: " + std::to_string(B) + " buckets, " + std::to_string(t.base.size()) +
                " base slabs, " + std::to_string(cap) + " pool slabs, " + std::to_string(t.bitmap.size()) +
                " bitmap words";
    return out;
  }
  auto allocated = [&](uint64_t a) { return (t.bitmap[a / 32] >> (a % 32)) & 1u; };
  for (uint32_t w : t.bitmap) out.allocated += static_cast<uint64_t>(__builtin_popcount(w));
  out.buckets = B + 1;

  std::vector<uint8_t> seen(cap, 0);
  auto fail = [&](const std::string& what) {
    if (out.error.empty()) out.error = what;
  };
  for (uint64_t b = 0; b <= B && out.error.empty(); ++b) {
    const SlabWords* s = &t.base[b];
    uint64_t length = 1;
    bool empty_seen = false;  // an empty slot was seen earlier in this chain
    std::vector<uint64_t> alive_keys;
    const std::string where0 = "bucket " + std::to_string(b);
    for (;;) {
      const uint32_t state = (*s)[30], next = (*s)[31];
      // Words no slot holds (the u64-value layout's 28, 29) and the u32
      // keys' pads there stay pristine.
      if (kind == Kind::WidePair) {
        if ((*s)[28] != 0xFFFFFFFFu || (*s)[29] != 0xFFFFFFFFu)
          fail(where0 + ", slab " + std::to_string(length - 1) + ": unused words 28, 29 are not pristine");
        if (t.key_bytes == 4)
          for (uint32_t slot = 0; slot < slots; ++slot)
            if ((*s)[4 * slot + 1] != 0xFFFFFFFFu)
              fail(where0 + ", slab " + std::to_string(length - 1) + ", slot " + std::to_string(slot) +
                   ": the key's pad is not pristine");
      }
      for (uint32_t slot = 0; slot < slots; ++slot) {
        const uint64_t key = slot_key(t, *s, slot);
        const uint64_t value = slot_value(t, *s, slot);
        const bool alive = (state >> slot) & 1u;
        const std::string where = where0 + ", slab " + std::to_string(length - 1) + ", slot " + std::to_string(slot);
        if (key == empty_key) {
          empty_seen = true;
          if (pairs && value != empty_value) fail(where + ": empty slot with value " + std::to_string(value));
          if (!alive) fail(where + ": empty slot with a tombstone");
          continue;
        }
        if (empty_seen) fail(where + ": claimed slot after an empty one (claimed slots must be a prefix)");
        if (b == B) {
          if (key != kSpecialStoredKey) fail(where + ": key key_max's bucket holds stored key " + std::to_string(key));
        } else if (bucket_of(t, key) != b) {
          fail(where + ": key " + std::to_string(key) + " does not hash to this bucket");
        }
        if (!alive) {
          ++out.tombstones;
          continue;
        }
        const uint64_t user = b == B ? empty_key : key;
        alive_keys.push_back(user);
        out.pairs.emplace_back(user, value);
      }
      if (next == kNullSlab) break;
      if (next >= cap) {
        fail(where0 + ": next address " + std::to_string(next) + " outside the pool of " + std::to_string(cap));
        break;
      }
      if (!allocated(next)) fail(where0 + ": chain reaches slab " + std::to_string(next) + ", which is not allocated");
      if (seen[next]) {
        fail(where0 + ": slab " + std::to_string(next) + " reached twice");
        break;
      }
      seen[next] = 1;
      ++out.pool_slabs;
      ++length;
      s = &t.pool[next];
    }
    out.max_chain = std::max<uint64_t>(out.max_chain, length);
    if (t.mode != Mode::Multimap && alive_keys.size() > 1) {
      std::sort(alive_keys.begin(), alive_keys.end());
      for (size_t i = 1; i < alive_keys.size(); ++i)
        if (alive_keys[i] == alive_keys[i - 1])
          fail(where0 + ": key " + std::to_string(alive_keys[i]) + " is stored twice (alive)");
    }
  }
  if (out.error.empty()) {
    for (uint64_t a = 0; a < cap; ++a) {
      if (allocated(a) && !seen[a]) {
        fail("slab " + std::to_string(a) + " is allocated but in no chain (leaked)");
        break;
      }
      if (!allocated(a)) {
        for (uint32_t w : t.pool[a])
          if (w != 0xFFFFFFFFu) {
            fail("free slab " + std::to_string(a) + " is not pristine");
            break;
          }
        if (!out.error.empty()) break;
      }
    }
  }
  if (out.error.empty() && out.allocated != out.pool_slabs)
    fail("bitmaps count " + std::to_string(out.allocated) + " allocated slabs, the chains " +
         std::to_string(out.pool_slabs));
  return out;
}

}  // namespace gpudict::slabhash
