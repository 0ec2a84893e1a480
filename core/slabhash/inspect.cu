#include "core/slabhash/inspect.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/slabhash/slabhash_impl.cuh"

namespace gpudict::slabhash {

static_assert(sizeof(SlabWords) == sizeof(Slab), "a host copy of a slab is 128 bytes");

TableCopy copy_table(const Dictionary& d) {
  const auto* h = dynamic_cast<const SlabHash*>(&d);
  if (!h) throw InputError("copy_table: not a slab hash");
  TableCopy t;
  t.mode = h->opt_.mode;
  if (!h->created_) return t;
  const uint64_t B = h->buckets_;
  t.buckets = B;
  t.hash_a = h->hash_.a;
  t.hash_b = h->hash_.b;
  GPUDICT_CUDA(cudaStreamSynchronize(h->stream_));
  t.base.resize(B + 1);
  GPUDICT_CUDA(cudaMemcpy(t.base.data(), h->base_.data(), (B + 1) * sizeof(Slab), cudaMemcpyDeviceToHost));
  const SlabPool& pool = h->pool_;
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

TableCheck check_table(const Dictionary& d) { return check_table_copy(copy_table(d)); }

uint64_t bucket_of(const TableCopy& t, uint32_t key) {
  if (key == kEmptyKey) return t.buckets;
  UniversalHash hash;
  hash.a = t.hash_a;
  hash.b = t.hash_b;
  return hash.bucket(key, static_cast<uint32_t>(t.buckets));
}

TableCheck check_table_copy(const TableCopy& t) {
  TableCheck out;
  const uint64_t B = t.buckets;
  if (B == 0 && t.base.empty() && t.pool.empty() && t.bitmap.empty()) return out;  // no table yet
  const bool pairs = t.mode != Mode::Set;
  const uint32_t slots = pairs ? 15u : 30u;
  const uint64_t cap = t.pool.size();
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
    std::vector<uint32_t> alive_keys;
    const std::string where0 = "bucket " + std::to_string(b);
    for (;;) {
      const uint32_t state = (*s)[30], next = (*s)[31];
      for (uint32_t slot = 0; slot < slots; ++slot) {
        const uint32_t key = pairs ? (*s)[2 * slot] : (*s)[slot];
        const uint32_t value = pairs ? (*s)[2 * slot + 1] : 0u;
        const bool alive = (state >> slot) & 1u;
        const std::string where = where0 + ", slab " + std::to_string(length - 1) + ", slot " + std::to_string(slot);
        if (key == kEmptyKey) {
          empty_seen = true;
          if (pairs && value != 0xFFFFFFFFu) fail(where + ": empty slot with value " + std::to_string(value));
          if (!alive) fail(where + ": empty slot with a tombstone");
          continue;
        }
        if (empty_seen) fail(where + ": claimed slot after an empty one (claimed slots must be a prefix)");
        if (b == B) {
          if (key != kSpecialStoredKey) fail(where + ": key 0xFFFFFFFF's bucket holds stored key " + std::to_string(key));
        } else if (bucket_of(t, key) != b) {
          fail(where + ": key " + std::to_string(key) + " does not hash to this bucket");
        }
        if (!alive) {
          ++out.tombstones;
          continue;
        }
        const uint32_t user = b == B ? kEmptyKey : key;
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
