// gpudict: the multiversion GPU B-Tree as a container, with snapshots (host code).
#pragma once

#include "core/mvbtree/mvbtree_map.hpp"
