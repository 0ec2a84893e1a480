// gpudict: the slab hash as a container (host code).
#pragma once

#include "core/slabhash/slab_hash_map.hpp"
