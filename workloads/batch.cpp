#include "workloads/batch.hpp"

#include "workloads/parallel.hpp"

namespace gpudict {

// Two passes over pieces of the batch: each piece's count per type, then
// each piece writes its indices from its offsets (the earlier pieces'
// counts), so the order within a type is batch order on any number of
// threads.
BatchPlan::BatchPlan(const Batch& b) {
  const uint64_t n = b.size();
  const uint64_t pieces = parallel_pieces(n, uint64_t{1} << 16);
  if (pieces <= 1) {
    for (uint32_t i = 0; i < n; ++i) by_type[static_cast<int>(b.types[i])].push_back(i);
    return;
  }
  std::vector<std::array<uint64_t, kNumOpTypes>> at(pieces);
  parallel_each(pieces, [&](uint64_t p) {
    at[p].fill(0);
    for (uint64_t i = piece_begin(n, pieces, p); i < piece_begin(n, pieces, p + 1); ++i)
      ++at[p][static_cast<int>(b.types[i])];
  });
  std::array<uint64_t, kNumOpTypes> total{};
  for (uint64_t p = 0; p < pieces; ++p)
    for (int t = 0; t < kNumOpTypes; ++t) {
      const uint64_t c = at[p][t];
      at[p][t] = total[t];
      total[t] += c;
    }
  for (int t = 0; t < kNumOpTypes; ++t) by_type[t].resize(total[t]);
  parallel_each(pieces, [&](uint64_t p) {
    auto& next = at[p];
    for (uint64_t i = piece_begin(n, pieces, p); i < piece_begin(n, pieces, p + 1); ++i) {
      const int t = static_cast<int>(b.types[i]);
      by_type[t][next[t]++] = static_cast<uint32_t>(i);
    }
  });
}

}  // namespace gpudict
