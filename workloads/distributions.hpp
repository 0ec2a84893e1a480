// Key distributions and range-length distributions of generated workloads
// (docs/workload-format.md, "Key distributions"). Every sampler draws a RANK
// in a domain [0, last] (domain size last + 1, up to 2^64); a universe draw
// maps the rank to min + rank, a "present" draw to the rank-th present key.
// All floating-point work uses the deterministic functions below, so the
// samples are the same on every platform.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "workloads/rng.hpp"

namespace gpudict {

enum class DistKind : uint8_t { Uniform = 0, Zipfian, Sequential, Normal, Hotset, Rmat };
std::string_view dist_name(DistKind k);

struct KeyDistSpec {
  DistKind kind = DistKind::Uniform;
  uint64_t min = 0;                    // universe bounds (inclusive)
  uint64_t max = 0xFFFFFFFFull;        // the parser sets the key type's maximum
  double exponent = 0.99;              // zipfian
  bool scramble = true;                // zipfian, hotset
  uint64_t start = 0, stride = 1;      // sequential (ranks)
  double mean = 0.5, stddev = 0.1;     // normal (fractions of the domain)
  double hot_fraction = 0.01;          // hotset
  double hot_probability = 0.9;        // hotset
  // rmat: graph edges as 64-bit keys u * 2^32 + v over 2^scale vertices,
  // each level of the recursion in quadrant (0,0), (0,1), (1,0), (1,1) with
  // probabilities a, b, c, 1 - a - b - c (Chakrabarti et al.; Graph500's
  // defaults); `scramble` permutes the vertex ids (hubs not at 0).
  int scale = 20;
  double a = 0.57, b = 0.19, c = 0.19;
};

enum class RangeLenKind : uint8_t { Fixed = 0, Uniform, Geometric };
// Keys: a span of that many keys from the drawn key; Results: scaled by the
// universe's size over the present keys' count; Vertices (64-bit graph keys
// u * 2^32 + v): whole vertex blocks [u * 2^32, (u + length) * 2^32 - 1]
// from the drawn key's vertex u (a count of one vertex is its degree).
enum class RangeUnit : uint8_t { Keys = 0, Results, Vertices };

struct RangeLengthSpec {
  RangeLenKind kind = RangeLenKind::Fixed;
  uint64_t length = 8;        // fixed
  uint64_t min = 1, max = 8;  // uniform
  double mean = 8;            // geometric (>= 1)
  RangeUnit unit = RangeUnit::Keys;
};

// ---- deterministic math: own implementations built on IEEE-754 +, -, *, /
// (correctly rounded everywhere; compiled without FMA contraction). Relative
// error about 1e-16 over the ranges the samplers use.
double det_exp(double x);
double det_expm1(double x);
double det_log(double x);    // x > 0
double det_log1p(double x);  // x > -1

// Standard normal variate (Marsaglia's polar method: needs only log and sqrt).
double sample_standard_normal(Rng& rng);

// Bijection on [0, last]: a keyed balanced Feistel network over the smallest
// even number of bits covering `last`, with cycle walking (expected < 4 rounds
// of the network per call).
class FeistelPermutation {
 public:
  FeistelPermutation() = default;
  FeistelPermutation(uint64_t last, uint64_t key);
  uint64_t operator()(uint64_t r) const;
  uint64_t last() const { return last_; }

 private:
  uint64_t encrypt(uint64_t x) const;
  static constexpr int kRounds = 6;
  uint64_t last_ = 0;
  int half_bits_ = 0;
  uint64_t half_mask_ = 0;
  uint64_t keys_[kRounds] = {};
};

// Zipf's law on {1, ..., n}: P(k) proportional to 1 / k^s, s > 0, n up to 2^64
// (passed as a double), by rejection-inversion (Hoermann & Derflinger 1996,
// as in Apache Commons RNG). Expected draws per sample: close to 1.
class ZipfSampler {
 public:
  ZipfSampler() = default;
  ZipfSampler(double n, double exponent);
  double sample(Rng& rng) const;  // an integer value in [1, n]

 private:
  double h(double x) const;
  double h_integral(double x) const;
  double h_integral_inverse(double x) const;
  double n_ = 1, s_ = 1;
  double h_integral_x1_ = 0, h_integral_n_ = 0, threshold_ = 0;
};

// Domain size last + 1 as a double (2^64 for last = 2^64 - 1).
inline double domain_size(uint64_t last) { return static_cast<double>(last) + 1.0; }

// A double >= 0 converted to an integer rank clamped to [0, last].
uint64_t clamp_to_rank(double x, uint64_t last);

// Samples ranks and keys from one KeyDistSpec. Stateful only for sequential
// (a counter per domain kind: universe draws and present draws count
// separately) and for caches keyed by the domain size.
class KeySampler {
 public:
  KeySampler(const KeyDistSpec& spec, uint64_t scramble_seed);

  // A key in [spec.min, spec.max].
  uint64_t universe(Rng& rng) { return spec_.min + rank(rng, spec_.max - spec_.min, universe_counter_, 0); }
  // A rank in [0, last] for a draw among `last + 1` present keys.
  uint64_t present_rank(Rng& rng, uint64_t last) { return rank(rng, last, present_counter_, 1); }
  // A rank in [0, last] with a caller-held sequential counter (initial keys).
  uint64_t rank_with_counter(Rng& rng, uint64_t last, uint64_t& counter) { return rank(rng, last, counter, 0); }

  const KeyDistSpec& spec() const { return spec_; }
  double universe_size() const { return domain_size(spec_.max - spec_.min); }

 private:
  struct Cache {
    bool perm_valid = false;
    FeistelPermutation perm;
    bool zipf_valid = false;
    uint64_t zipf_last = 0;
    ZipfSampler zipf;
  };
  uint64_t rank(Rng& rng, uint64_t last, uint64_t& counter, int slot);
  uint64_t rmat_edge(Rng& rng, Cache& c);
  const FeistelPermutation& perm(Cache& c, uint64_t last);
  KeyDistSpec spec_;
  uint64_t scramble_seed_;
  // rmat: a draw below rmat_a_ is quadrant (0, 0), below rmat_ab_ (0, 1),
  // below rmat_abc_ (1, 0), else (1, 1): a, a + b, a + b + c as 64-bit
  // thresholds, set once from the spec.
  uint64_t rmat_a_ = 0, rmat_ab_ = 0, rmat_abc_ = 0;
  uint64_t universe_counter_ = 0, present_counter_ = 0;
  Cache cache_[2];  // universe draws, present draws
};

// Samples range lengths (>= 1) in the spec's unit.
class RangeLengthSampler {
 public:
  explicit RangeLengthSampler(const RangeLengthSpec& spec) : spec_(spec) {}
  uint64_t length(Rng& rng) const;
  // Key span [lo, lo + span - 1] of a query: `universe_size` keys in the
  // universe, `present` keys present (unit results: span = len * universe / max(1, present)).
  uint64_t span(Rng& rng, double universe_size, uint64_t present) const;
  const RangeLengthSpec& spec() const { return spec_; }

 private:
  RangeLengthSpec spec_;
};

}  // namespace gpudict
