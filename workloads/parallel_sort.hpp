// Sorting and merging the engine's large host arrays on the host's threads
// (parallel.hpp), with results that do not depend on the number of threads:
// a stable sort and a merge of sets have one result whatever the pieces.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "workloads/parallel.hpp"

namespace gpudict {

// Stable LSD radix sort of `a` by key_of(element) (u64), 8 bits a pass,
// skipping the bytes in which every key agrees (`varying`: the bits in
// which some keys differ). Each pass counts digits per piece, lays the
// pieces out digit-major, and scatters each piece on its own thread.
template <class T, class A, class KeyOf>
void parallel_radix_sort(std::vector<T, A>& a, uint64_t varying, KeyOf key_of) {
  const uint64_t n = a.size();
  if (n < 2 || varying == 0) return;
  std::vector<T, A> b(n);
  const uint64_t pieces = parallel_pieces(n, uint64_t{1} << 16);
  std::vector<std::array<uint64_t, 256>> at(pieces);
  for (unsigned shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xFF) == 0) continue;
    parallel_each(pieces, [&](uint64_t p) {
      auto& h = at[p];
      h.fill(0);
      for (uint64_t i = piece_begin(n, pieces, p), e = piece_begin(n, pieces, p + 1); i < e; ++i)
        ++h[(key_of(a[i]) >> shift) & 0xFF];
    });
    uint64_t sum = 0;  // digit d of piece p starts after every smaller digit and digit d of pieces before p
    for (int d = 0; d < 256; ++d)
      for (uint64_t p = 0; p < pieces; ++p) {
        const uint64_t c = at[p][d];
        at[p][d] = sum;
        sum += c;
      }
    parallel_each(pieces, [&](uint64_t p) {
      auto& h = at[p];
      for (uint64_t i = piece_begin(n, pieces, p), e = piece_begin(n, pieces, p + 1); i < e; ++i)
        b[h[(key_of(a[i]) >> shift) & 0xFF]++] = a[i];
    });
    a.swap(b);
  }
}

// The bits in which some of the n keys key_of(a[i]) differ, and whether
// they are strictly ascending already.
template <class T, class A, class KeyOf>
std::pair<uint64_t, bool> varying_bits(const std::vector<T, A>& a, KeyOf key_of) {
  const uint64_t n = a.size();
  const uint64_t pieces = parallel_pieces(n, uint64_t{1} << 16);
  std::vector<uint64_t> any(pieces, 0), all(pieces, ~uint64_t{0});
  std::vector<char> ascending(pieces, 1);
  parallel_each(pieces, [&](uint64_t p) {
    const uint64_t lo = piece_begin(n, pieces, p), hi = piece_begin(n, pieces, p + 1);
    uint64_t any_p = 0, all_p = ~uint64_t{0};  // (locals: the pieces' words share cache lines)
    bool up = true;
    uint64_t prev = lo > 0 ? key_of(a[lo - 1]) : 0;
    for (uint64_t i = lo; i < hi; ++i) {
      const uint64_t k = key_of(a[i]);
      any_p |= k;
      all_p &= k;
      up = up && (i == 0 || prev < k);
      prev = k;
    }
    any[p] = any_p;
    all[p] = all_p;
    ascending[p] = up;
  });
  uint64_t any_set = 0, all_set = ~uint64_t{0};
  bool sorted = true;
  for (uint64_t p = 0; p < pieces; ++p) {
    any_set |= any[p];
    all_set &= all[p];
    sorted = sorted && ascending[p];
  }
  return {n ? any_set ^ all_set : 0, sorted};
}

// The positions i < n for which selected(i) holds, in order, on the host's
// threads: each piece of [0, n) counts its own, resize(total) sizes the
// output, then emit(rank, i) gets each position with its rank among all.
template <class Selected, class Resize, class Emit>
void parallel_select(uint64_t n, uint64_t grain, Selected selected, Resize resize, Emit emit) {
  const uint64_t pieces = parallel_pieces(n, grain);
  std::vector<uint64_t> first(pieces + 1, 0);
  parallel_each(pieces, [&](uint64_t p) {
    uint64_t c = 0;
    for (uint64_t i = piece_begin(n, pieces, p), e = piece_begin(n, pieces, p + 1); i < e; ++i) c += selected(i);
    first[p + 1] = c;
  });
  for (uint64_t p = 0; p < pieces; ++p) first[p + 1] += first[p];
  resize(first[pieces]);
  parallel_each(pieces, [&](uint64_t p) {
    uint64_t rank = first[p];
    for (uint64_t i = piece_begin(n, pieces, p), e = piece_begin(n, pieces, p + 1); i < e; ++i)
      if (selected(i)) emit(rank++, i);
  });
}

// Keeps, of each run of equal keys in `a` (sorted by key), its last element.
template <class T, class A, class KeyOf>
void keep_last_of_runs(std::vector<T, A>& a, KeyOf key_of) {
  const uint64_t n = a.size();
  std::vector<T, A> out;
  parallel_select(
      n, uint64_t{1} << 16, [&](uint64_t i) { return i + 1 == n || key_of(a[i + 1]) != key_of(a[i]); },
      [&](uint64_t total) { out.resize(total); }, [&](uint64_t at, uint64_t i) { out[at] = a[i]; });
  a.swap(out);
}

// A sorted set of n unique keys (base_key(i)) with m updates applied
// (update_key(j), sorted and unique; keeps(j): the key is present after
// it), in pieces of the key space on the host's threads: each piece is
// merged twice, counted, then written. resize(total) sizes the output;
// write(at, from_base, index) puts base key `index` (from_base) or update
// `index` at output position `at`, in key order.
template <class BaseKey, class UpdateKey, class Keeps, class Resize, class Write>
void merge_with_updates(uint64_t n, BaseKey base_key, uint64_t m, UpdateKey update_key, Keeps keeps, Resize resize,
                        Write write) {
  // Splitters from the longer list; piece p covers the keys from its first base
  // position bi[p] and first update ui[p] up to the next piece's.
  const bool by_base = n >= m;
  const uint64_t longer = by_base ? n : m;
  const uint64_t pieces = parallel_pieces(longer, uint64_t{1} << 18);
  std::vector<uint64_t> bi(pieces + 1, 0), ui(pieces + 1, 0);
  bi[pieces] = n;
  ui[pieces] = m;
  for (uint64_t p = 1; p < pieces; ++p) {
    const uint64_t at = piece_begin(longer, pieces, p);
    const uint64_t split = by_base ? base_key(at) : update_key(at);
    uint64_t lo = 0, hi = by_base ? m : n;  // the first position of the other list with a key >= split
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if ((by_base ? update_key(mid) : base_key(mid)) < split) lo = mid + 1;
      else hi = mid;
    }
    (by_base ? bi : ui)[p] = at;
    (by_base ? ui : bi)[p] = lo;
  }
  // Piece p's merge: emit(from_base, index) for every key present after the updates.
  auto merge_piece = [&](uint64_t p, auto&& emit) {
    uint64_t i = bi[p], j = ui[p];
    const uint64_t ie = bi[p + 1], je = ui[p + 1];
    while (i < ie && j < je) {
      const uint64_t a = base_key(i), u = update_key(j);
      if (a < u) {
        emit(true, i++);
      } else {
        if (keeps(j)) emit(false, j);
        i += a == u;  // replaced or deleted
        ++j;
      }
    }
    for (; i < ie; ++i) emit(true, i);
    for (; j < je; ++j)
      if (keeps(j)) emit(false, j);
  };
  std::vector<uint64_t> start(pieces + 1, 0);
  parallel_each(pieces, [&](uint64_t p) {
    uint64_t c = 0;
    merge_piece(p, [&](bool, uint64_t) { ++c; });
    start[p + 1] = c;
  });
  for (uint64_t p = 0; p < pieces; ++p) start[p + 1] += start[p];
  resize(start[pieces]);
  parallel_each(pieces, [&](uint64_t p) {
    uint64_t at = start[p];
    merge_piece(p, [&](bool from_base, uint64_t index) { write(at++, from_base, index); });
  });
}

}  // namespace gpudict
