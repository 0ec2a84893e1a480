// What a container offers, as constants a program can test at compile time
// (static_assert, if constexpr): each container's `capabilities` member.
#pragma once

namespace gpudict {

struct container_capabilities {
  bool ordered;             // count, range and successor bulk calls
  bool snapshots;           // snapshot() (container_snapshot.hpp)
  bool later_update_wins;   // of several updates of one key in one call, the later wins (else any one may)
  bool ref_updates;         // the device ref inserts and erases (else it is read-only)
  bool ref_successor;       // the device ref serves successor
  unsigned ref_min_lanes;   // lanes that serve one device ref operation: from ref_min_lanes
  unsigned ref_max_lanes;   // to ref_max_lanes (1: one thread per operation)
};

}  // namespace gpudict
