// gpudict as a library, from a kernel of your own: a B-Tree built on the
// host, then one kernel in which every thread inserts a key and another
// looks one up, through btree_ref (a warp serves its 32 threads' operations
// one at a time, all 32 lanes on each). Exit 0 when every answer is right,
// 1 when one is not, 77 without a CUDA device.
#include <gpudict/btree_map.hpp>
#include <gpudict/btree_ref.cuh>
#include <gpudict/errors.hpp>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace cg = cooperative_groups;

// Thread i inserts (new_keys[i], i) and looks up old_keys[i] (present
// before the kernel and untouched by it: its value is certain).
__global__ void insert_and_find(gpudict::btree_ref<uint32_t, uint32_t> tree, const uint32_t* new_keys,
                                const uint32_t* old_keys, uint32_t n, uint32_t* old_values, int* failures) {
  const auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool mine = i < n;
  const uint32_t my_new = mine ? new_keys[i] : 0, my_old = mine ? old_keys[i] : 0;
  const unsigned pending = warp.ballot(mine);
  for (unsigned q = 0; q < 32; ++q) {
    if (!((pending >> q) & 1u)) continue;
    // Lane q's operations, served by the whole warp.
    const uint32_t k = warp.shfl(my_new, q), old = warp.shfl(my_old, q);
    const uint32_t slot = warp.shfl(i, q);
    const bool inserted = tree.insert_or_assign(warp, k, slot);
    uint32_t value = 0;
    const bool found = tree.find(warp, old, &value);
    if (warp.thread_rank() == q) {
      old_values[i] = value;
      if (!inserted || !found) atomicAdd(failures, 1);
    }
  }
}

namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw gpudict::RuntimeFailure(std::string(what) + ": " + cudaGetErrorString(e));
}
}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("user_kernel: skipped (no CUDA device)\n");
    return 77;
  }
  try {
    const uint32_t n = 1u << 18;
    // Even keys are in the tree from the start (value = key / 2); the kernel
    // inserts odd ones.
    std::vector<uint32_t> even(n), odd(n), halves(n);
    for (uint32_t i = 0; i < n; ++i) {
      even[i] = 2 * (i * 40503u % n);  // a permutation of 0 .. n - 1, doubled
      halves[i] = even[i] / 2;
      odd[i] = 2 * i + 1;
    }
    uint32_t *d_even, *d_halves, *d_odd, *d_values;
    int* d_failures;
    check(cudaMalloc(&d_even, n * 4), "cudaMalloc");
    check(cudaMalloc(&d_halves, n * 4), "cudaMalloc");
    check(cudaMalloc(&d_odd, n * 4), "cudaMalloc");
    check(cudaMalloc(&d_values, n * 4), "cudaMalloc");
    check(cudaMalloc(&d_failures, sizeof(int)), "cudaMalloc");
    check(cudaMemcpy(d_even, even.data(), n * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(d_halves, halves.data(), n * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(d_odd, odd.data(), n * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemset(d_failures, 0, sizeof(int)), "cudaMemset");

    gpudict::btree_map<uint32_t, uint32_t> tree;
    tree.build(d_even, d_halves, n);
    // Room for every split the kernel's inserts can cause without the host.
    tree.reserve_nodes(n);
    insert_and_find<<<(n + 255) / 256, 256>>>(tree.ref(), d_odd, d_even, n, d_values, d_failures);
    check(cudaGetLastError(), "insert_and_find");
    check(cudaDeviceSynchronize(), "insert_and_find");

    int failures = 0;
    std::vector<uint32_t> values(n);
    check(cudaMemcpy(&failures, d_failures, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(cudaMemcpy(values.data(), d_values, n * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    uint64_t wrong = static_cast<uint64_t>(failures);
    for (uint32_t i = 0; i < n; ++i) wrong += values[i] != halves[i];
    // The kernel's inserts, seen from the host.
    tree.find(d_odd, n, d_values, nullptr);
    check(cudaMemcpy(values.data(), d_values, n * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (uint32_t i = 0; i < n; ++i) wrong += values[i] != i;
    const uint64_t size = tree.size();
    cudaFree(d_even);
    cudaFree(d_halves);
    cudaFree(d_odd);
    cudaFree(d_values);
    cudaFree(d_failures);

    std::printf("user_kernel: %u keys built, %u inserted and %u found by a kernel; the tree holds %llu\n", n, n, n,
                static_cast<unsigned long long>(size));
    if (wrong || size != 2ull * n) {
      std::printf("user_kernel: %llu wrong answers\n", static_cast<unsigned long long>(wrong));
      return 1;
    }
    std::printf("user_kernel: every answer right\n");
    return 0;
  } catch (const gpudict::Error& e) {
    std::fprintf(stderr, "user_kernel: %s\n", e.what());
    return 1;
  }
}
