// The slab hash's option checks and sizing arithmetic.
#include "core/slabhash/options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/common/errors.hpp"

namespace gpudict {

namespace sh = slabhash;

namespace slabhash {

void validate(const Options& o) {
  auto bad = [](const std::string& what) { throw InputError("slab hash options: " + what); };
  if (o.mode != Mode::Map && o.mode != Mode::Multimap && o.mode != Mode::Set) bad("mode is not map, multimap or set");
  if (o.buckets > kMaxBuckets) bad("buckets " + std::to_string(o.buckets) + " is more than " + std::to_string(kMaxBuckets));
  if (!std::isfinite(o.load_factor) || o.load_factor <= 0.0 || o.load_factor > kMaxLoadFactor)
    bad("load_factor " + std::to_string(o.load_factor) + " is not in (0, 0.93]");
  if (o.pool_slabs > (1ull << 30)) bad("pool_slabs " + std::to_string(o.pool_slabs) + " is more than 2^30");
  if (!std::isfinite(o.flush_tombstones) || o.flush_tombstones < 0.0)
    bad("flush_tombstones " + std::to_string(o.flush_tombstones) + " is not a fraction >= 0");
  if (o.prefetch > 2) bad("prefetch " + std::to_string(o.prefetch) + " is not 0 (off), 1 (l2) or 2 (bulk)");
}

SlabShape slab_shape(Mode m, uint32_t key_bytes, uint32_t value_bytes) {
  if (m == Mode::Set) return key_bytes == 4 ? SlabShape{30, 4} : SlabShape{15, 8};
  return key_bytes == 4 && value_bytes == 4 ? SlabShape{15, 8} : SlabShape{7, 16};
}

double utilization_ceiling(SlabShape s) { return static_cast<double>(s.slots) * s.element_bytes / 128.0; }

double expected_slabs_per_bucket(SlabShape s, double lambda) {
  const double M = s.slots;
  if (lambda <= 0) return 1.0;
  if (lambda > 1e6) return lambda / M + 0.5;  // the Poisson mass is far past one slab
  const double hi = lambda + 12.0 * std::sqrt(lambda) + 40.0;
  double sum = 0.0, mass = 0.0;
  for (double l = 0; l <= hi; l += 1.0) {
    const double p = std::exp(-lambda + l * std::log(lambda) - std::lgamma(l + 1.0));
    mass += p;
    sum += p * std::max(1.0, std::ceil(l / M));
  }
  return mass > 0 ? sum / mass : 1.0;
}

double expected_utilization(SlabShape s, double lambda) {
  return s.element_bytes * lambda / (128.0 * expected_slabs_per_bucket(s, lambda));
}

uint64_t buckets_for(SlabShape s, uint64_t n, double lf) {
  if (n == 0) return kDefaultBuckets;
  // Bisection on log(lambda): the utilization grows with the keys per bucket.
  double lo = std::log(1e-4), hi = std::log(1e7);
  for (int it = 0; it < 80; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (expected_utilization(s, std::exp(mid)) < lf)
      lo = mid;
    else
      hi = mid;
  }
  const double lambda = std::exp(0.5 * (lo + hi));
  const double b = std::round(static_cast<double>(n) / lambda);
  return static_cast<uint64_t>(std::clamp(b, 1.0, static_cast<double>(kMaxBuckets)));
}

double expected_overflow_slabs(SlabShape s, uint64_t slots, uint64_t buckets) {
  const double b = static_cast<double>(std::max<uint64_t>(buckets, 1));
  return b * (expected_slabs_per_bucket(s, static_cast<double>(slots) / b) - 1.0);
}

uint64_t auto_pool_slabs(SlabShape s, uint64_t n, uint64_t buckets) {
  const double overflow = expected_overflow_slabs(s, n, buckets);
  const double want = std::max(1.5 * overflow + 16384.0, 32768.0);
  uint64_t p = 1024;
  while (static_cast<double>(p) < want && p < (1ull << 30)) p <<= 1;
  return p;
}

}  // namespace slabhash
}  // namespace gpudict
