// gpudict: the GPU LSM as a container (host code).
#pragma once

#include "core/lsm/lsm_map.hpp"
