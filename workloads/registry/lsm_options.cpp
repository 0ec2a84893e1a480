// The LSM's command-line side: its options as --help shows them, their
// parsing into lsm::Options (errors name the flag), and the registry's
// factory. The structure itself (core/lsm) knows none of this.
#include <cmath>
#include <string>

#include "core/common/errors.hpp"
#include "workloads/adapter/structures.hpp"
#include "workloads/registry/structures.hpp"

namespace gpudict {

std::vector<OptionSpec> lsm_option_specs() {
  const lsm::Options d;  // the defaults --help shows
  return {
      {"batch-size",
       "b: the LSM batch and level-0 size, a power of two (1 to 2^30). Update batches are cut into chunks of at "
       "most b unique keys; a chunk that fits merges into level 0, so a batch of k keys stores k elements",
       std::to_string(d.batch_size), "UINT:2^k in [1, 2^30]"},
      {"cleanup-every", "run a cleanup after every N update batches (0: never)", std::to_string(d.cleanup_every), "UINT"},
      {"cleanup-stale-fraction",
       "run a cleanup after an update batch when stale elements exceed this fraction of the stored elements "
       "(0: never); the stale count is the one --stale-count keeps",
       shortest_text(d.stale_fraction), "FLOAT:>= 0"},
      {"lookup-filter",
       "on: a lookup batch first builds the filters that the queried levels lack (8 bits per key, a blocked Bloom "
       "filter per segment of a level's fence top; in that batch's time, once per level) and lookups skip the levels "
       "a filter rules out; the largest level, the levels of build and cleanup (disjoint key ranges) and levels of "
       "at most 1024 keys have none, as there a hit would pay a probe on top of its search; off: every lookup "
       "searches every level it reaches",
       on_off(d.lookup_filter), "{on,off}"},
      {"stale-count",
       "levels: each level counts the stale records it holds when it is written (free; a lower bound that misses "
       "records shadowed by a newer level until their levels merge); exact: every update batch also looks up its "
       "keys in the levels before it (one lookup per updated key)",
       d.exact_stale ? "exact" : "levels", "{levels,exact}"},
  };
}

std::unique_ptr<Dictionary> make_lsm(const StructureConfig& config) {
  return make_lsm_dictionary(lsm::parse_options(config), config.device, config.key_type, config.value_type);
}

void validate_lsm_options(const StructureConfig& config) { (void)lsm::parse_options(config); }

namespace lsm {

Options parse_options(const StructureConfig& config) {
  Options o;
  auto has = [&](const char* name) { return config.options.count(name) != 0; };
  if (has("batch-size")) {
    const uint64_t b = config.get_u64("batch-size");
    if (b == 0 || (b & (b - 1)) != 0 || b > lsm::kMaxBatchSize)
      throw InputError("--batch-size: '" + config.get("batch-size") + "' is not a power of two between 1 and 2^30");
    o.batch_size = b;
  }
  if (has("cleanup-every")) o.cleanup_every = config.get_u64("cleanup-every");
  if (has("cleanup-stale-fraction")) {
    const double x = config.get_double("cleanup-stale-fraction");
    if (!std::isfinite(x) || x < 0.0)
      throw InputError("--cleanup-stale-fraction: '" + config.get("cleanup-stale-fraction") +
                       "' is not a fraction >= 0");
    o.stale_fraction = x;
  }
  if (has("lookup-filter")) o.lookup_filter = config.get_choice("lookup-filter", "on", "off");
  if (has("stale-count")) o.exact_stale = config.get_choice("stale-count", "exact", "levels");
  return o;
}

}  // namespace lsm
}  // namespace gpudict
