// gpudict: the GPU B-Tree as a container (host code).
#pragma once

#include "core/btree/btree_map.hpp"
