// The key bits a B-Tree query list is sorted on (core/btree/detail/sort_bits.hpp):
// host arithmetic, so tested here; that the query kernel answers lists
// sorted on fewer bits correctly is tested on the GPU (tests/gpu/test_btree.cu).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "core/btree/detail/sort_bits.hpp"

using gpudict::btree::query_sort_bits;
using gpudict::btree::query_sort_bits_of;

TEST_CASE("btree query sort bits: nothing to order") {
  CHECK(query_sort_bits(5, 5, 1000).end == 0);
  CHECK(query_sort_bits(0, 0xFFFFFFFFu, 1).end == 0);
  CHECK(query_sort_bits(0, 0xFFFFFFFFu, 0).end == 0);
}

TEST_CASE("btree query sort bits: uniform 32-bit keys drop low bits, in whole passes") {
  // 2^22 keys over 2^32: gap 2^10 -> 22 bits need 3 passes: bits 8..31.
  const auto b = query_sort_bits(0, 0xFFFFFFFFu, 1ull << 22);
  CHECK(b.begin == 8);
  CHECK(b.end == 32);
  // A gap just under 2^10 (floor(log2) = 9): still 3 passes, not 4.
  const auto e = query_sort_bits(0x123u, 0xFFFFFF00u, 1ull << 22);
  CHECK(e.begin == 8);
  CHECK(e.end == 32);
  // 2^20 keys: gap 2^12; 20 bits fit 3 passes, so bits 8..31.
  const auto c = query_sort_bits(3, 0xFFFFFFF0u, 1ull << 20);
  CHECK(c.begin == 8);
  CHECK(c.end == 32);
  // Few keys: most bits dropped, but never all.
  const auto d = query_sort_bits(0, 0xFFFFFFFFu, 2);
  CHECK(d.end == 32);
  CHECK(d.begin >= 16);
  CHECK(d.begin < d.end);
}

TEST_CASE("btree query sort bits: shared high bits are skipped, dense keys keep every low bit") {
  // Keys 0 .. 2^26 - 1 (bits 26.. are zero in every key), 2^22 of them: gap
  // 16 -> 22 bits need 3 passes: bits 2..25.
  const auto b = query_sort_bits(0, (1u << 26) - 1, 1ull << 22);
  CHECK(b.end == 26);
  CHECK(b.begin == 2);
  // Dense: as many keys as values -> every bit below the shared ones.
  const auto c = query_sort_bits(0x70000000u, 0x70000000u + 4095, 4096);
  CHECK(c.end == 12);
  CHECK(c.begin == 0);
  // Neighbours differing in the lowest bit only.
  const auto d = query_sort_bits(0xFFFFFFFEu, 0xFFFFFFFFu, 2);
  CHECK(d.begin == 0);
  CHECK(d.end == 1);
}

TEST_CASE("btree query sort bits: the window is a whole number of 8-bit passes when it can be") {
  for (uint32_t hi : {0xFFu, 0xFFFFu, 0xFFFFFFu, 0x0FFFFFFFu, 0xFFFFFFFFu})
    for (uint64_t n : {2ull, 100ull, 1ull << 16, 1ull << 24}) {
      const auto b = query_sort_bits(0, hi, n);
      REQUIRE(b.end > 0);
      CHECK(b.begin >= 0);
      CHECK(b.begin < b.end);
      CHECK(b.end <= 32);
      CHECK((b.begin == 0 || (b.end - b.begin) % 8 == 0));
      // Buckets are never wider than the mean gap between the keys.
      const uint64_t gap = (static_cast<uint64_t>(hi) + 1) / n;
      CHECK((1ull << b.begin) <= std::max<uint64_t>(1, gap));
    }
}

TEST_CASE("btree query sort bits: 64-bit keys") {
  constexpr uint64_t kMax = ~0ull;
  CHECK(query_sort_bits_of<uint64_t>(7, 7, 1000).end == 0);
  CHECK(query_sort_bits_of<uint64_t>(0, kMax, 1).end == 0);
  // The whole domain (a span of 2^64, which overflows 64-bit arithmetic):
  // 2^22 keys, gap 2^42 -> 22 bits in 3 passes: bits 40..63.
  const auto b = query_sort_bits_of<uint64_t>(0, kMax, 1ull << 22);
  CHECK(b.begin == 40);
  CHECK(b.end == 64);
  // u32 keys held in 64-bit words: the same bits as at 32.
  for (uint64_t n : {2ull, 100ull, 1ull << 16, 1ull << 22}) {
    const auto w = query_sort_bits_of<uint64_t>(3, 0xFFFFFFF0ull, n);
    const auto u = query_sort_bits(3, 0xFFFFFFF0u, n);
    CHECK(w.begin == u.begin);
    CHECK(w.end == u.end);
  }
  // Keys that differ only above bit 32 (k and k + 2^32): those bits are sorted.
  const auto c = query_sort_bits_of<uint64_t>(5, 5 + (1ull << 32), 2);
  CHECK(c.end == 33);
  CHECK(c.begin < c.end);
  CHECK(c.begin >= 25);
  // Neighbours at the top of the domain.
  const auto d = query_sort_bits_of<uint64_t>(kMax - 1, kMax, 2);
  CHECK(d.begin == 0);
  CHECK(d.end == 1);
}
