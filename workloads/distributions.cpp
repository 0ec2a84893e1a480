#include "workloads/distributions.hpp"

#include <cmath>
#include <limits>

// Deterministic floating point: no fused multiply-add contraction in this file
// (a contracted a*b+c rounds once instead of twice and changes the samples on
// platforms with FMA). Only +, -, *, /, sqrt, floor, ldexp, frexp are used from
// the platform; all are exact or correctly rounded under IEEE-754.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace gpudict {

std::string_view dist_name(DistKind k) {
  switch (k) {
    case DistKind::Uniform: return "uniform";
    case DistKind::Zipfian: return "zipfian";
    case DistKind::Sequential: return "sequential";
    case DistKind::Normal: return "normal";
    case DistKind::Hotset: return "hotset";
    case DistKind::Rmat: return "rmat";
  }
  return "?";
}

// ---------------------------------------------------------------- math

namespace {
// ln 2 split so that k * kLn2Hi is exact for |k| < 2^11 (fdlibm's constants).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kTwo64 = 18446744073709551616.0;
}  // namespace

double det_exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.782712893384) return std::numeric_limits<double>::infinity();
  if (x < -745.2) return 0.0;
  // x = k ln2 + r, |r| <= ln2 / 2.
  const double k = std::floor(x * kInvLn2 + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  // exp(r) by its Taylor series to degree 14 (truncation error < 1e-18).
  double p = 1.0 / 87178291200.0;  // 1/14!
  p = 1.0 / 6227020800.0 + r * p;  // 1/13!
  p = 1.0 / 479001600.0 + r * p;
  p = 1.0 / 39916800.0 + r * p;
  p = 1.0 / 3628800.0 + r * p;
  p = 1.0 / 362880.0 + r * p;
  p = 1.0 / 40320.0 + r * p;
  p = 1.0 / 5040.0 + r * p;
  p = 1.0 / 720.0 + r * p;
  p = 1.0 / 120.0 + r * p;
  p = 1.0 / 24.0 + r * p;
  p = 1.0 / 6.0 + r * p;
  p = 0.5 + r * p;
  p = 1.0 + r * p;
  p = 1.0 + r * p;
  return std::ldexp(p, static_cast<int>(k));
}

double det_expm1(double x) {
  if (std::fabs(x) >= 0.5) return det_exp(x) - 1.0;
  // x + x^2/2! + ... + x^18/18!  (truncation error < 1e-21 for |x| < 0.5)
  double p = 1.0;
  for (int n = 18; n >= 2; --n) p = 1.0 + x * p / n;
  return x * p;
}

double det_log(double x) {
  if (std::isnan(x) || x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    e -= 1;
  }
  // log(m) = 2 atanh(f), f = (m - 1) / (m + 1), |f| <= 0.1716.
  const double f = (m - 1.0) / (m + 1.0);
  const double s = f * f;
  double p = 1.0 / 27.0;
  for (int n = 25; n >= 3; n -= 2) p = 1.0 / n + s * p;
  p = 1.0 + s * p;
  const double log_m = 2.0 * f * p;
  const double de = static_cast<double>(e);
  return de * kLn2Hi + (log_m + de * kLn2Lo);
}

double det_log1p(double x) {
  const double u = 1.0 + x;
  if (u == 1.0) return x;
  return det_log(u) * (x / (u - 1.0));
}

double sample_standard_normal(Rng& rng) {
  double u, v, s;
  do {
    u = 2.0 * rng.uniform01() - 1.0;
    v = 2.0 * rng.uniform01() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  return u * std::sqrt(-2.0 * det_log(s) / s);
}

uint64_t clamp_to_rank(double x, uint64_t last) {
  if (!(x > 0)) return 0;  // also NaN
  if (x >= kTwo64) return last;
  const uint64_t r = static_cast<uint64_t>(x);
  return r < last ? r : last;
}

// ---------------------------------------------------------------- Feistel

FeistelPermutation::FeistelPermutation(uint64_t last, uint64_t key) : last_(last) {
  int bits = 0;
  while (bits < 64 && (last >> bits) != 0) ++bits;
  half_bits_ = (bits + 1) / 2;
  half_mask_ = half_bits_ == 0 ? 0 : ((1ull << half_bits_) - 1);
  uint64_t k = key;
  for (uint64_t& rk : keys_) rk = splitmix64_next(k);
}

uint64_t FeistelPermutation::encrypt(uint64_t x) const {
  uint64_t l = x >> half_bits_, r = x & half_mask_;
  for (int i = 0; i < kRounds; ++i) {
    const uint64_t nl = r;
    r = l ^ (splitmix64(r ^ keys_[i]) & half_mask_);
    l = nl;
  }
  return (l << half_bits_) | r;
}

uint64_t FeistelPermutation::operator()(uint64_t r) const {
  if (half_bits_ == 0) return r;
  uint64_t x = encrypt(r);
  while (x > last_) x = encrypt(x);  // cycle walking: stays a bijection on [0, last]
  return x;
}

// ---------------------------------------------------------------- Zipf

namespace {
// log1p(x) / x, accurate near 0.
double helper1(double x) {
  return std::fabs(x) > 1e-8 ? det_log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
// expm1(x) / x, accurate near 0.
double helper2(double x) {
  return std::fabs(x) > 1e-8 ? det_expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}
}  // namespace

ZipfSampler::ZipfSampler(double n, double exponent) : n_(n), s_(exponent) {
  h_integral_x1_ = h_integral(1.5) - 1.0;
  h_integral_n_ = h_integral(n_ + 0.5);
  threshold_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

double ZipfSampler::h(double x) const { return det_exp(-s_ * det_log(x)); }

double ZipfSampler::h_integral(double x) const {
  const double log_x = det_log(x);
  return helper2((1.0 - s_) * log_x) * log_x;
}

double ZipfSampler::h_integral_inverse(double x) const {
  double t = x * (1.0 - s_);
  if (t < -1.0) t = -1.0;
  return det_exp(helper1(t) * x);
}

double ZipfSampler::sample(Rng& rng) const {
  for (;;) {
    const double u = h_integral_n_ + rng.uniform01() * (h_integral_x1_ - h_integral_n_);
    const double x = h_integral_inverse(u);
    double k = std::floor(x + 0.5);
    if (k < 1.0) k = 1.0;
    else if (k > n_) k = n_;
    if (k - x <= threshold_ || u >= h_integral(k + 0.5) - h(k)) return k;
  }
}

// ---------------------------------------------------------------- KeySampler

KeySampler::KeySampler(const KeyDistSpec& spec, uint64_t scramble_seed)
    : spec_(spec), scramble_seed_(scramble_seed) {
  if (spec_.kind != DistKind::Rmat) return;
  // Integers, so a level costs one 64-bit draw and two compares; the
  // doubles' sums and products are exact IEEE operations, the same everywhere.
  const double two64 = 18446744073709551616.0;
  auto threshold = [&](double p) { return p >= 1.0 ? ~0ull : static_cast<uint64_t>(p * two64); };
  rmat_a_ = threshold(spec_.a);
  rmat_ab_ = threshold(spec_.a + spec_.b);
  rmat_abc_ = threshold(spec_.a + spec_.b + spec_.c);
}

const FeistelPermutation& KeySampler::perm(Cache& c, uint64_t last) {
  if (!c.perm_valid || c.perm.last() != last) {
    c.perm = FeistelPermutation(last, scramble_seed_);
    c.perm_valid = true;
  }
  return c.perm;
}

uint64_t KeySampler::rmat_edge(Rng& rng, Cache& c) {
  uint64_t u = 0, v = 0;
  for (int level = 0; level < spec_.scale; ++level) {
    const uint64_t r = rng.next();
    const uint64_t row = r >= rmat_ab_ ? 1 : 0;
    const uint64_t col = (r >= rmat_a_ && r < rmat_ab_) || r >= rmat_abc_ ? 1 : 0;
    u = (u << 1) | row;
    v = (v << 1) | col;
  }
  if (spec_.scramble) {
    const uint64_t vertices_last = (uint64_t{1} << spec_.scale) - 1;
    const FeistelPermutation& p = perm(c, vertices_last);
    u = p(u);
    v = p(v);
  }
  return (u << 32) | v;
}

uint64_t KeySampler::rank(Rng& rng, uint64_t last, uint64_t& counter, int slot) {
  Cache& c = cache_[slot];
  switch (spec_.kind) {
    case DistKind::Uniform: return rng.upto(last);
    case DistKind::Zipfian: {
      if (!c.zipf_valid || c.zipf_last != last) {
        c.zipf = ZipfSampler(domain_size(last), spec_.exponent);
        c.zipf_last = last;
        c.zipf_valid = true;
      }
      const uint64_t r = clamp_to_rank(c.zipf.sample(rng) - 1.0, last);
      return spec_.scramble ? perm(c, last)(r) : r;
    }
    case DistKind::Sequential: {
      const uint64_t i = counter++;
      if (last == ~0ull) return spec_.start + i * spec_.stride;  // arithmetic mod 2^64
      const uint64_t n = last + 1;
      const uint64_t a = spec_.start % n, b = mulmod64(i, spec_.stride % n, n);
      return a >= n - b ? a - (n - b) : a + b;
    }
    case DistKind::Normal: {
      const double z = sample_standard_normal(rng);
      const double x = (spec_.mean + spec_.stddev * z) * domain_size(last);
      return clamp_to_rank(std::floor(x), last);
    }
    case DistKind::Rmat: {
      // A draw among present keys (a hit) picks a present edge uniformly;
      // a universe draw is an edge of the recursive matrix.
      if (slot == 1) return rng.upto(last);
      return rmat_edge(rng, c);
    }
    case DistKind::Hotset: {
      double hot = std::ceil(spec_.hot_fraction * domain_size(last));
      if (hot < 1.0) hot = 1.0;
      const uint64_t hot_last = clamp_to_rank(hot - 1.0, last);
      if (rng.bernoulli(spec_.hot_probability)) {
        const uint64_t r = rng.upto(hot_last);
        return spec_.scramble ? perm(c, last)(r) : r;
      }
      return rng.upto(last);
    }
  }
  return 0;
}

// ---------------------------------------------------------------- range lengths

uint64_t RangeLengthSampler::length(Rng& rng) const {
  switch (spec_.kind) {
    case RangeLenKind::Fixed: return spec_.length;
    case RangeLenKind::Uniform: return rng.between(spec_.min, spec_.max);
    case RangeLenKind::Geometric: {
      const double u = 1.0 - rng.uniform01();  // (0, 1]
      if (spec_.mean <= 1.0) return 1;
      const double p = 1.0 / spec_.mean;
      const double extra = std::floor(det_log(u) / det_log1p(-p));
      if (!(extra < kTwo64 - 1.0)) return ~0ull;
      return 1 + clamp_to_rank(extra, ~0ull - 1);
    }
  }
  return 1;
}

uint64_t RangeLengthSampler::span(Rng& rng, double universe_size, uint64_t present) const {
  const uint64_t len = length(rng);
  if (spec_.unit == RangeUnit::Keys) return len;
  if (spec_.unit == RangeUnit::Vertices) return len >= (uint64_t{1} << 32) ? ~0ull : len << 32;
  const double denom = present == 0 ? 1.0 : static_cast<double>(present);
  const double x = std::floor(static_cast<double>(len) * universe_size / denom + 0.5);
  if (x < 1.0) return 1;
  return clamp_to_rank(x, ~0ull);
}

}  // namespace gpudict
