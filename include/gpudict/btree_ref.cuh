// gpudict: the GPU B-Tree's operations for your own kernels (CUDA code).
#pragma once

#include "core/btree/btree_ref.cuh"
