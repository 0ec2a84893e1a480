// The typed containers over the B-Tree (btree_map, mvbtree_map): their
// arguments as the tree's lists and outputs, and a mixed call's range
// pairs narrowed back to the caller's types.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/btree/detail/btree_impl.cuh"
#include "core/common/device_buffer.hpp"
#include "core/common/mixed_batch.hpp"
#include "core/common/width_copy.cuh"

namespace gpudict::btree {

// n operations on keys: every one of type `type`, inserts with values
// `args`, counts and ranges up to `upper`.
template <class Key, class Value>
DeviceSource typed_source(const Key* keys, const Value* args, const Key* upper, OpType type, std::uint64_t n) {
  DeviceSource s;
  s.keys = keys;
  s.key_bytes = sizeof(Key);
  s.args = args;
  s.arg_bytes = sizeof(Value);
  s.upper = upper;
  s.upper_bytes = sizeof(Key);
  s.type = static_cast<uint8_t>(type);
  s.n = n;
  return s;
}

// A mixed call's list (ops null: every one `uniform`) and outputs.
template <class Key, class Value>
DeviceSource typed_mixed_source(const std::uint8_t* ops, op_code uniform, const Key* keys, const Value* values,
                                const Key* upper, std::uint64_t n) {
  static_assert(static_cast<int>(op_code::insert) == static_cast<int>(OpType::Insert) &&
                    static_cast<int>(op_code::erase) == static_cast<int>(OpType::Delete) &&
                    static_cast<int>(op_code::find) == static_cast<int>(OpType::Lookup) &&
                    static_cast<int>(op_code::count) == static_cast<int>(OpType::Count) &&
                    static_cast<int>(op_code::range) == static_cast<int>(OpType::Range) &&
                    static_cast<int>(op_code::successor) == static_cast<int>(OpType::Successor),
                "op_code and OpType agree");
  DeviceSource s = typed_source(keys, values, upper, static_cast<OpType>(uniform), n);
  s.types = ops;
  return s;
}

template <class Key, class Value>
MixedOutputs typed_outputs(const mixed_outputs<Key, Value>& out, const std::uint8_t* ops, op_code uniform) {
  static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long), "counts and offsets are 64-bit");
  MixedOutputs o;
  o.found = out.found;
  o.values = out.values;
  o.value_bytes = sizeof(Value);
  o.keys = out.keys;
  o.key_bytes = sizeof(Key);
  o.counts = reinterpret_cast<unsigned long long*>(out.counts);
  o.offsets = reinterpret_cast<unsigned long long*>(out.offsets);
  o.kinds_hint = ops ? out.kinds_hint : 1u << static_cast<unsigned>(uniform);
  return o;
}

// The pairs of a mixed call in the caller's types: the tree's own words
// when they are those types (unless `copy`), else narrowed or copied into
// keys / values (grown as needed) on stream s.
template <class Key, class Value, class Word>
range_output<Key, Value> typed_pairs(const MixedPairs<Word>& p, DeviceBuffer<Key>& keys, DeviceBuffer<Value>& values,
                                     cudaStream_t s, bool copy = false) {
  range_output<Key, Value> r;
  r.size = p.size;
  if (p.size == 0) return r;
  if (std::is_same_v<Key, Word> && std::is_same_v<Value, Word> && !copy) {
    r.keys = reinterpret_cast<const Key*>(p.keys);
    r.values = reinterpret_cast<const Value*>(p.values);
  } else {
    keys.reserve_discard(p.size, "btree range results");
    values.reserve_discard(p.size, "btree range results");
    narrow_copy(p.keys, nullptr, keys.data(), sizeof(Key), p.size, s);
    narrow_copy(p.values, nullptr, values.data(), sizeof(Value), p.size, s);
    GPUDICT_CUDA(cudaStreamSynchronize(s));
    r.keys = keys.data();
    r.values = values.data();
  }
  return r;
}

}  // namespace gpudict::btree
