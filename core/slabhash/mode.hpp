// The slab hash's modes (host and device).
#pragma once

#include <cstdint>
#include <string_view>

namespace gpudict::slabhash {

enum class Mode : uint8_t { Map = 0, Multimap = 1, Set = 2 };

inline std::string_view mode_name(Mode m) {
  return m == Mode::Map ? "map" : m == Mode::Multimap ? "multimap" : "set";
}

}  // namespace gpudict::slabhash
