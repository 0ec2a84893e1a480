// Sharded runs (`--devices 0,1,...`): one instance of a structure per shard,
// each on its own device (or several on one device, or on the CPU reference),
// behind the engine's one Dictionary interface.
//
// The engine's batches are made on the host, so a sharded run splits each
// batch there by the partition (core/common/shard_partition.hpp), hands each
// shard its part on the shard's own thread (all shards at once), and puts
// the shards' results back in batch order:
//   - insert, delete, lookup, and a hash table's count and range of one key:
//     the key's owner;
//   - count and range (range partition): every shard the interval meets,
//     clipped to the shard's keys; the counts add up and the pairs join in
//     shard order, which is key order;
//   - successor: the key's owner, and, once per batch, each later shard's
//     smallest key (a successor query of the key before the shard's first);
//     the first found answers. Both read the same state as the batch's
//     other queries, in the same shard call.
// A phased batch stays phased (every shard applies its updates before its
// queries run); snapshots are taken and dropped on every shard at the same
// step, so queries at a snapshot read one consistent version of every shard.
// Several updates of one key reach one shard in batch order, so the
// structure's duplicate rule is unchanged. The report's device time of a
// phase is the busiest device's: the sum of its shards' times.
//
// The range partition's boundaries are quantiles of a sample of the initial
// keys (of the first batch's keys when there are none); they do not move
// afterwards, so updates that skew the keys leave the shards uneven (the
// report lists each shard's keys).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "core/common/shard_partition.hpp"

namespace gpudict {

// The largest key of a key width: 2^32 - 1 or 2^64 - 1.
inline uint64_t key_domain_max(KeyType t) { return t == KeyType::U64 ? ~0ull : 0xFFFFFFFFull; }

struct ShardSetup {
  std::string structure;  // for messages
  // One entry per shard: what the report shows as its device ("0", "1", or
  // "cpu"). The number of shards is its size.
  std::vector<std::string> devices;
  KeyType key_type = KeyType::U32;
  // Runs first on each shard's thread (cudaSetDevice for a GPU shard).
  std::function<void(uint32_t shard)> enter;
  // Makes shard s's structure (on the shard's thread).
  std::function<std::unique_ptr<Dictionary>(uint32_t shard)> make;
};

// Why a structure with `caps` cannot be sharded (empty: it can): the
// graph's vertex deletes and triangle counts reach every shard.
std::string sharding_refusal(const std::string& structure, const Capabilities& caps);

// InputError when the structure cannot be sharded (sharding_refusal) or
// there are more than shard_partition::max_shards shards.
std::unique_ptr<Dictionary> make_sharded_dictionary(ShardSetup setup);

}  // namespace gpudict
