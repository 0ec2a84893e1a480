// The generators' own pseudo-random numbers: splitmix64 for seeding and
// hashing, xoshiro256** for streams, and integer/real samplers built only from
// integer arithmetic, so a workload is the same bit for bit on every platform
// and standard library (std:: distributions are implementation-defined and are
// never used). docs/workload-format.md describes the streams.
#pragma once

#include <cstdint>

namespace gpudict {

// One step of splitmix64 (Steele, Lea, Flood): advances `state`, returns the output.
inline constexpr uint64_t splitmix64_next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// splitmix64 used as a hash: the output of one step from state `x`.
inline constexpr uint64_t splitmix64(uint64_t x) { return splitmix64_next(x); }

// High and low 64 bits of a 64x64-bit product (portable; same result everywhere).
inline void mul128(uint64_t a, uint64_t b, uint64_t& hi, uint64_t& lo) {
#if defined(__SIZEOF_INT128__)
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  hi = static_cast<uint64_t>(p >> 64);
  lo = static_cast<uint64_t>(p);
#else
  const uint64_t a0 = a & 0xFFFFFFFFull, a1 = a >> 32, b0 = b & 0xFFFFFFFFull, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFull) + (p10 & 0xFFFFFFFFull);
  lo = (mid << 32) | (p00 & 0xFFFFFFFFull);
  hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

// (a * b) mod m for m > 0, without overflow.
inline uint64_t mulmod64(uint64_t a, uint64_t b, uint64_t m) {
#if defined(__SIZEOF_INT128__)
  return static_cast<uint64_t>(static_cast<unsigned __int128>(a) * b % m);
#else
  a %= m;
  b %= m;
  uint64_t r = 0;
  while (b) {
    if (b & 1) r = (r >= m - a) ? r - (m - a) : r + a;
    a = (a >= m - a) ? a - (m - a) : a + a;
    b >>= 1;
  }
  return r;
#endif
}

// xoshiro256** (Blackman, Vigna), seeded from splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t sm = seed;
    for (uint64_t& w : s_) w = splitmix64_next(sm);
  }

  // An independent stream for (seed, a, b, c): the workload seed plus the
  // coordinates of what is generated (stream tag, step index, batch index).
  static Rng stream(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
    return Rng(stream_seed(seed, a, b, c));
  }
  // The seed of stream(seed, a, b, c).
  static uint64_t stream_seed(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
    uint64_t h = splitmix64(seed);
    h = splitmix64(h ^ a);
    h = splitmix64(h ^ (b * 0xD1B54A32D192ED03ull));
    return splitmix64(h ^ (c * 0x8CB92BA72F3D8DD7ull));
  }
  // The stream of item `index` under a stream seed: counter-based, so the
  // items of a stream can be drawn in any order and on any thread.
  static Rng at(uint64_t stream_seed, uint64_t index) {
    return Rng(splitmix64(stream_seed ^ (index * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull)));
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, bound), bound > 0 (Lemire's multiply-and-reject: unbiased).
  uint64_t below(uint64_t bound) {
    uint64_t hi, lo;
    mul128(next(), bound, hi, lo);
    if (lo < bound) {
      const uint64_t threshold = (0 - bound) % bound;
      while (lo < threshold) mul128(next(), bound, hi, lo);
    }
    return hi;
  }

  // Uniform in [0, last] (last may be 2^64 - 1).
  uint64_t upto(uint64_t last) { return last == ~0ull ? next() : below(last + 1); }

  // Uniform in [lo, hi], lo <= hi.
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + upto(hi - lo); }

  // Uniform in [0, 1) with 53 random bits (exact: no rounding happens).
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // True with probability p (p >= 1: always; p <= 0: never). Always consumes one draw.
  bool bernoulli(double p) { return uniform01() < p; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace gpudict
