// container_snapshot<Map>'s members (container_snapshot.hpp), written once
// for every container that has snapshots. Map::impl provides:
//   structure()               the structure, with follow(stream),
//                             drop_snapshot(name) and find_device,
//                             count_device, range_device, successor_device
//                             taking the snapshot's name last;
//   ref_source(name)          what Map::ref_type is constructed from.
// A container's .cu includes this and instantiates
// container_snapshot<its map> for each of its pairings.
#pragma once

#include "core/common/container_snapshot.hpp"

namespace gpudict {

template <class Map>
typename Map::impl& container_snapshot<Map>::owner() const {
  return *static_cast<typename Map::impl*>(owner_);
}

template <class Map>
void container_snapshot<Map>::release() noexcept {
  if (!owner_) return;
  try {
    owner().structure().drop_snapshot(name_);
  } catch (...) {  // a destructor does not throw: the container frees it with itself
  }
  owner_ = nullptr;
}

template <class Map>
void container_snapshot<Map>::find(const key_type* keys, std::uint64_t n, mapped_type* values_out, bool* found_out,
                                   cudaStream_t stream) const {
  auto& s = owner().structure();
  s.follow(stream);
  s.find_device(keys, n, values_out, found_out, name_);
}

template <class Map>
void container_snapshot<Map>::count(const key_type* lo, const key_type* hi, std::uint64_t n,
                                    std::uint64_t* counts_out, cudaStream_t stream) const {
  auto& s = owner().structure();
  s.follow(stream);
  s.count_device(lo, hi, n, counts_out, name_);
}

template <class Map>
std::uint64_t container_snapshot<Map>::range(const key_type* lo, const key_type* hi, std::uint64_t n,
                                             std::uint64_t* offsets_out, key_type* keys_out,
                                             mapped_type* values_out, std::uint64_t capacity,
                                             cudaStream_t stream) const {
  auto& s = owner().structure();
  s.follow(stream);
  return s.range_device(lo, hi, n, offsets_out, keys_out, values_out, capacity, name_);
}

template <class Map>
void container_snapshot<Map>::successor(const key_type* keys, std::uint64_t n, key_type* keys_out,
                                        mapped_type* values_out, bool* found_out, cudaStream_t stream) const {
  auto& s = owner().structure();
  s.follow(stream);
  s.successor_device(keys, n, keys_out, values_out, found_out, name_);
}

template <class Map>
const void* container_snapshot<Map>::ref_source() const {
  return owner().ref_source(name_);
}

}  // namespace gpudict
