// The sorted array's command-line side: the registry's factory (it takes no options).
#include "workloads/adapter/structures.hpp"
#include "workloads/registry/structures.hpp"

namespace gpudict {

std::unique_ptr<Dictionary> make_sorted_array(const StructureConfig& config) {
  return make_sorted_array_dictionary(config.device, config.key_type, config.value_type);
}

}  // namespace gpudict
