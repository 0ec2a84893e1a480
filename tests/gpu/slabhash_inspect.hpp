// The slab hash checker (core/slabhash/detail/inspect.hpp) on what the
// engine's factory returns: the table of the slab_hash_map inside the
// engine's adapter.
#pragma once

#include <cstdint>

#include "core/common/errors.hpp"
#include "core/slabhash/detail/inspect.hpp"
#include "workloads/adapter/container_dictionary.hpp"

namespace gpudict::slabhash {

inline TableCopy copy_table(const Dictionary& d) {
  if (auto* c = dynamic_cast<const ContainerDictionary<slab_hash_map<uint32_t, uint32_t>>*>(&d))
    return copy_table(c->container());
  if (auto* c = dynamic_cast<const ContainerDictionary<slab_hash_map<uint32_t, uint64_t>>*>(&d))
    return copy_table(c->container());
  if (auto* c = dynamic_cast<const ContainerDictionary<slab_hash_map<uint64_t, uint64_t>>*>(&d))
    return copy_table(c->container());
  throw InputError("copy_table: not a slab hash");
}

inline TableCheck check_table(const Dictionary& d) { return check_table_copy(copy_table(d)); }

}  // namespace gpudict::slabhash
