// gpudict's host containers and errors in one include (host code; the
// device refs are in their own .cuh headers, e.g. <gpudict/btree_ref.cuh>).
#pragma once

#include "gpudict/btree_map.hpp"
#include "gpudict/errors.hpp"
#include "gpudict/graph_map.hpp"
#include "gpudict/lsm_map.hpp"
#include "gpudict/mvbtree_map.hpp"
#include "gpudict/slab_hash_map.hpp"
#include "gpudict/sorted_array_map.hpp"
