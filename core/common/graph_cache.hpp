// A short, fixed sequence of stream work replayed as one CUDA graph. A CUB
// radix sort is a dozen stream operations (two memsets, a histogram, a scan,
// then a memset and a kernel per 8-bit pass), each enqueued by the host
// after CUB's dispatch logic; at 2^20 pairs the device finishes them faster
// than the host issues them, so inside a timed region it waits for the host
// between them (GPUDICT_TRACE=1 shows a sort's stream time well above the
// sum of its kernels). Captured once per key - every pointer
// and size the sequence depends on - by prepare(), outside timed regions
// (instantiation costs host time), and replayed by run() with one call.
// The graph holds no memory of its own: a pointer in a key that was freed and
// allocated again at the same address is valid again, provided the caller
// sized the buffers for the key's sizes before each launch, as every caller
// does (CUB's temporary storage too: prepared before each timed segment).
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"

namespace gpudict {

class GraphCache {
 public:
  // Everything the captured work depends on: buffers, sizes, bit ranges.
  using Key = std::array<uint64_t, 12>;
  // Graphs kept (the least recently used goes): a batch's query lists of
  // several types, or updates between queries, each keep theirs.
  static constexpr size_t kEntries = 8;

  GraphCache() = default;
  ~GraphCache() { reset(); }
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // Captures enqueue() - stream work on `s` only, no synchronisation, no
  // allocation - into a graph for `key`, unless one for that key is cached.
  // Nothing runs on the device here. An enqueue() that returns an int (host
  // state the captured work leaves behind, such as which buffer of a CUB
  // DoubleBuffer holds the output) has it kept with the graph: run() hands
  // it back.
  template <class F>
  void prepare(const Key& key, cudaStream_t s, F&& enqueue) {
    if (find(key) != nullptr) return;
    if (entries_.size() == kEntries) {
      // An evicted graph still in flight is not stopped: CUDA frees it when it completes.
      cudaGraphExecDestroy(entries_.front().exec);
      entries_.erase(entries_.begin());
    }
    GPUDICT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    int payload = 0;
    try {
      payload = call(enqueue);
    } catch (...) {
      cudaStreamEndCapture(s, &graph);  // leaves the stream usable
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    GPUDICT_CUDA(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    GPUDICT_CUDA(err);
    entries_.push_back({key, exec, payload});
  }

  // Replays the graph cached for `key`, or, when there is none (a path that
  // skipped prepare()), runs enqueue() directly on the stream; returns the
  // graph's int (or enqueue()'s, or 0 when it returns nothing).
  template <class F>
  int run(const Key& key, cudaStream_t s, F&& enqueue) {
    if (Entry* e = find(key)) {
      GPUDICT_CUDA(cudaGraphLaunch(e->exec, s));
      return e->payload;
    }
    return call(enqueue);
  }

  void reset() {
    for (Entry& e : entries_) cudaGraphExecDestroy(e.exec);
    entries_.clear();
  }

 private:
  // enqueue()'s int, or 0 when it returns nothing.
  template <class F>
  static int call(F& enqueue) {
    if constexpr (std::is_void_v<decltype(enqueue())>) {
      enqueue();
      return 0;
    } else {
      return enqueue();
    }
  }

  struct Entry {
    Key key;
    cudaGraphExec_t exec;
    int payload;
  };
  // The entry for `key`, moved to the back (most recently used), or null.
  Entry* find(const Key& key) {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].key != key) continue;
      const Entry e = entries_[i];
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      entries_.push_back(e);
      return &entries_.back();
    }
    return nullptr;
  }
  std::vector<Entry> entries_;
};

// A pointer as a key word.
inline uint64_t key_word(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace gpudict
