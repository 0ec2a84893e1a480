// Level storage: allocation, the recycling pool, level lists and views.
#include <string>

#include "core/common/errors.hpp"
#include "core/lsm/detail/level.cuh"
#include "core/lsm/detail/level_filter.cuh"

namespace gpudict::lsm {

template <class K, class V>
std::shared_ptr<Level<K, V>> LevelPool<K, V>::acquire(int index) {
  if (index < 0 || index >= kMaxLevels) throw RuntimeFailure("lsm: level index " + std::to_string(index) + " out of range");
  std::unique_ptr<Level<K, V>> l = std::move(free_[index]);
  if (!l) {
    const uint64_t n = b_ << index;
    if (n > kMaxLevelSize)
      throw RuntimeFailure("lsm: a level would hold " + std::to_string(n) + " elements (at most 2^31 per level)");
    l = std::make_unique<Level<K, V>>();
    l->index = index;
    l->capacity = n;
    l->kv.keys = DeviceBuffer<K>(round_up(n, sa::kFanout), "lsm level keys");
    l->kv.values = DeviceBuffer<V>(n, "lsm level values");
    l->status = DeviceBuffer<uint8_t>(n, "lsm level status");
    l->kv.fences = DeviceBuffer<K>(level_fence_entries(n), "lsm level index");
  }
  l->set_size(0);  // the caller writes the contents and sets their count
  l->filter_ready = false;
  l->disjoint = false;
  l->local_stale = 0;
  return std::shared_ptr<Level<K, V>>(l.release(), Recycle{this->weak_from_this()});
}

template <class K, class V>
void Level<K, V>::set_size(uint64_t n) {
  if (n > capacity)
    throw RuntimeFailure("lsm: " + std::to_string(n) + " elements in a level of room for " + std::to_string(capacity));
  kv.n = n;
  kv.layout = level_layout(n);
}

template <class K, class V>
void LevelPool<K, V>::Recycle::operator()(Level<K, V>* l) const {
  if (auto p = pool.lock())
    p->put(l);
  else
    delete l;
}

template <class K, class V>
void LevelPool<K, V>::put(Level<K, V>* l) {
  std::unique_ptr<Level<K, V>> owned(l);
  if (!free_[l->index]) free_[l->index] = std::move(owned);
  // else: owned frees the storage here
}

template <class K, class V>
uint64_t LevelPool<K, V>::bytes() const {
  uint64_t s = 0;
  for (const auto& l : free_)
    if (l) s += l->bytes();
  return s;
}

template <class K, class V>
void LevelPool<K, V>::clear() {
  for (auto& l : free_) l.reset();
}

template <class K, class V>
bool wants_lookup_filter(const LevelList<K, V>& list, int i) {
  const Level<K, V>* l = list.at[i].get();
  if (!l || l->disjoint || filter_words(l->kv.layout) == 0) return false;
  for (int j = i + 1; j < kMaxLevels; ++j)
    if (list.at[j]) return true;  // a larger level exists
  return false;
}

template <class K, class V>
LsmView<K, V> make_view(const LevelList<K, V>& list) {
  LsmView<K, V> v{};
  uint32_t staged = 0;
  for (int i = 0; i < kMaxLevels; ++i) {
    if (!list.at[i]) continue;
    const Level<K, V>& l = *list.at[i];
    LevelView<K, V>& lv = v.lv[v.count++];
    lv.ix = l.kv.view().ix;
    lv.values = l.kv.values.data();
    lv.status = l.status.data();
    lv.n = static_cast<uint32_t>(l.n());
    lv.filter = l.filter_ready && wants_lookup_filter(list, i) ? l.filter.data() : nullptr;
    lv.filter_seg_shift = filter_segment_shift(l.kv.layout);
    const uint32_t top = lv.ix.size[lv.ix.top];
    if (staged + top <= kStageBudget<K>) {
      lv.smem_off = static_cast<int32_t>(staged);
      staged += top;
    } else {
      lv.smem_off = -1;
    }
  }
  v.smem_entries = staged;
  return v;
}

#define GPUDICT_LSM_LEVEL(K, V)                                                \
  template struct Level<K, V>;                                                 \
  template class LevelPool<K, V>;                                              \
  template bool wants_lookup_filter<K, V>(const LevelList<K, V>&, int);       \
  template LsmView<K, V> make_view<K, V>(const LevelList<K, V>&);
GPUDICT_LSM_LEVEL(uint32_t, uint32_t)
GPUDICT_LSM_LEVEL(uint32_t, uint64_t)
GPUDICT_LSM_LEVEL(uint64_t, uint64_t)
#undef GPUDICT_LSM_LEVEL

}  // namespace gpudict::lsm
