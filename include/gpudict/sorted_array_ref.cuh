// gpudict: the GPU sorted array's queries for your own kernels (CUDA code).
#pragma once

#include "core/sorted_array/sorted_array_ref.cuh"
