// gpudict: the slab hash's operations for your own kernels (CUDA code).
#pragma once

#include "core/slabhash/slab_hash_ref.cuh"
