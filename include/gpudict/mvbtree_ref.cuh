// gpudict: the multiversion GPU B-Tree's queries for your own kernels (CUDA code).
#pragma once

#include "core/mvbtree/mvbtree_ref.cuh"
