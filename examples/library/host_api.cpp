// gpudict as a library, from host code: a B-Tree and a slab hash built from
// keys already on the device, then queried there. Exit 0 when every answer
// is right, 1 when one is not, 77 without a CUDA device.
#include <gpudict/gpudict.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

// Distinct pseudo-random 64-bit keys (splitmix64 is a bijection).
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw gpudict::RuntimeFailure(std::string(what) + ": " + cudaGetErrorString(e));
}

// A device copy of a host vector, freed at scope exit.
template <class T>
struct DeviceArray {
  T* data = nullptr;
  explicit DeviceArray(const std::vector<T>& h) : DeviceArray(h.size()) {
    check(cudaMemcpy(data, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  explicit DeviceArray(size_t n) { check(cudaMalloc(&data, n * sizeof(T)), "cudaMalloc"); }
  ~DeviceArray() { cudaFree(data); }
  std::vector<T> to_host(size_t n) const {
    std::vector<T> h(n);
    check(cudaMemcpy(h.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return h;
  }
};

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("host_api: skipped (no CUDA device)\n");
    return 77;
  }
  try {
    const uint64_t n = 1u << 20;
    std::vector<uint64_t> keys(n), values(n);
    for (uint64_t i = 0; i < n; ++i) {
      keys[i] = splitmix64(i);
      values[i] = i;
    }
    const DeviceArray<uint64_t> d_keys(keys), d_values(values);
    DeviceArray<uint64_t> d_out(n);
    DeviceArray<bool> d_found(n);
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");

    // A B-Tree of u64 keys and values, built in bulk, then every key found.
    gpudict::btree_map<uint64_t, uint64_t> tree;
    tree.build(d_keys.data, d_values.data, n, stream);
    tree.find(d_keys.data, n, d_out.data, d_found.data, stream);
    std::vector<uint64_t> out = d_out.to_host(n);
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < n; ++i) wrong += out[i] != values[i];
    // An ordered query: how many keys lie in the lower half of the domain.
    const std::vector<uint64_t> lo = {0}, hi = {~0ull >> 1};
    const DeviceArray<uint64_t> d_lo(lo), d_hi(hi);
    DeviceArray<uint64_t> d_count(1);
    tree.count(d_lo.data, d_hi.data, 1, d_count.data, stream);
    uint64_t expect_low = 0;
    for (uint64_t k : keys) expect_low += k <= hi[0];
    const uint64_t low = d_count.to_host(1)[0];
    wrong += low != expect_low;

    // A slab hash of u32 keys and values: the low halves, the first half
    // of them deleted again, then all looked up.
    std::vector<uint32_t> keys32(n), values32(n);
    for (uint64_t i = 0; i < n; ++i) {
      keys32[i] = static_cast<uint32_t>(i * 2654435761u);  // distinct: an odd multiplier is a bijection mod 2^32
      values32[i] = static_cast<uint32_t>(i);
    }
    const DeviceArray<uint32_t> d_keys32(keys32), d_values32(values32);
    DeviceArray<uint32_t> d_out32(n);
    gpudict::slab_hash_options options;
    options.expected_keys = n;
    gpudict::slab_hash_map<uint32_t, uint32_t> table(options);
    table.build(d_keys32.data, d_values32.data, n, stream);
    table.erase(d_keys32.data, n / 2, stream);
    table.find(d_keys32.data, n, d_out32.data, d_found.data, stream);
    const std::vector<uint32_t> out32 = d_out32.to_host(n);
    const std::vector<bool> found = [&] {
      std::vector<uint8_t> f(n);
      check(cudaMemcpy(f.data(), d_found.data, n, cudaMemcpyDeviceToHost), "cudaMemcpy");
      return std::vector<bool>(f.begin(), f.end());
    }();
    for (uint64_t i = 0; i < n; ++i) {
      const bool live = i >= n / 2;
      wrong += found[i] != live || out32[i] != (live ? values32[i] : 0u);
    }
    cudaStreamDestroy(stream);

    std::printf("btree_map<u64, u64>: %llu keys built and found; %llu of them in [0, 2^63)\n",
                static_cast<unsigned long long>(tree.size()), static_cast<unsigned long long>(low));
    std::printf("slab_hash_map<u32, u32>: %llu keys built, %llu erased, %llu left\n",
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(n / 2),
                static_cast<unsigned long long>(table.size()));
    if (wrong || tree.size() != n || table.size() != n - n / 2) {
      std::printf("host_api: %llu wrong answers\n", static_cast<unsigned long long>(wrong));
      return 1;
    }
    std::printf("host_api: every answer right\n");
    return 0;
  } catch (const gpudict::Error& e) {
    std::fprintf(stderr, "host_api: %s\n", e.what());
    return 1;
  }
}
