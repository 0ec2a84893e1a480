// gpudict: the dynamic graph's reads for your own kernels (CUDA code).
#pragma once

#include "core/graph/graph_ref.cuh"
