// A run's replacement for a YAML workload's key and value widths.
#pragma once

#include <optional>

#include "workloads/batch.hpp"

namespace gpudict {

// Widths that replace a YAML workload's key_type / value_type (`--key-type`,
// `--value-type`): the same workload at another width. Keys, values and
// distributions are checked against the new widths; key and value files keep
// the widths the YAML declares (a raw u32 key file stays 4-byte keys).
struct WidthOverride {
  std::optional<KeyType> key_type;
  std::optional<KeyType> value_type;
};

}  // namespace gpudict
