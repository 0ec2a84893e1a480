// Vectors whose resize leaves new elements uninitialized (default-init, not
// value-init): the engine's large host arrays are written in full right
// after they are sized, on the host's threads, so zero-filling them first
// would be one serial pass over gigabytes for nothing (and would fault every
// page in on one thread).
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpudict {

template <class T>
struct default_init_allocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <class U>
  struct rebind {
    using other = default_init_allocator<U>;
  };
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <class T>
using uninit_vector = std::vector<T, default_init_allocator<T>>;

}  // namespace gpudict
