// gpudict: the GPU sorted array as a container (host code).
#pragma once

#include "core/sorted_array/sorted_array_map.hpp"
