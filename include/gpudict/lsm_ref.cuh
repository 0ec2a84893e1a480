// gpudict: the LSM's point queries for your own kernels (CUDA code).
#pragma once

#include "core/lsm/lsm_ref.cuh"
