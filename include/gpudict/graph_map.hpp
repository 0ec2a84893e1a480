// gpudict: the dynamic graph (a slab hash table per vertex) as a container (host code).
#pragma once

#include "core/graph/graph_map.hpp"
