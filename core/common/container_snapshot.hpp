// gpudict::container_snapshot<Map>: the contents of an ordered container
// (sorted_array_map, lsm_map) at one moment, with the container's queries.
// Host code, no CUDA compiler needed to include it.
//
// Made by Map::snapshot(). Every query takes device arrays and a stream, as
// the container's call of the same name does, and answers as the container
// was when the snapshot was taken, whatever it did after. ref() gives the
// container's device ref (Map::ref_type) on the snapshot, valid while the
// snapshot lives. Movable; destroying it frees what only it held. It must
// not outlive its container (moving the container is fine).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>

namespace gpudict {

template <class Map>
class container_snapshot {
 public:
  using key_type = typename Map::key_type;
  using mapped_type = typename Map::mapped_type;
  using ref_type = typename Map::ref_type;

  container_snapshot(container_snapshot&& o) noexcept : owner_(std::exchange(o.owner_, nullptr)), name_(std::move(o.name_)) {}
  container_snapshot& operator=(container_snapshot&& o) noexcept {
    if (this != &o) {
      release();
      owner_ = std::exchange(o.owner_, nullptr);
      name_ = std::move(o.name_);
    }
    return *this;
  }
  container_snapshot(const container_snapshot&) = delete;
  container_snapshot& operator=(const container_snapshot&) = delete;
  ~container_snapshot() { release(); }

  void find(const key_type* keys, std::uint64_t n, mapped_type* values_out, bool* found_out,
            cudaStream_t stream = 0) const;
  void count(const key_type* lo, const key_type* hi, std::uint64_t n, std::uint64_t* counts_out,
             cudaStream_t stream = 0) const;
  std::uint64_t range(const key_type* lo, const key_type* hi, std::uint64_t n, std::uint64_t* offsets_out,
                      key_type* keys_out, mapped_type* values_out, std::uint64_t capacity,
                      cudaStream_t stream = 0) const;
  void successor(const key_type* keys, std::uint64_t n, key_type* keys_out, mapped_type* values_out,
                 bool* found_out, cudaStream_t stream = 0) const;

  template <class R = ref_type>
  R ref() const {
    return R(ref_source());
  }
  // ref()'s source (what the ref type is constructed from).
  const void* ref_source() const;

 private:
  friend Map;
  container_snapshot(void* owner, std::string name) : owner_(owner), name_(std::move(name)) {}
  // Drops the snapshot from its container (never throws).
  void release() noexcept;
  typename Map::impl& owner() const;

  void* owner_ = nullptr;  // the container's implementation (its address survives moves of the container)
  std::string name_;       // the structure's name for it
};

}  // namespace gpudict
