// A Dictionary that forwards every call to one the test owns: the replay
// engine owns (and destroys) what its factory returns, so a test that wants
// to check a structure after the engine ran a workload on it hands the
// engine one of these instead.
#pragma once

#include <string>

#include "workloads/dictionary.hpp"

namespace gpudict::testing {

class BorrowedDictionary final : public Dictionary {
 public:
  explicit BorrowedDictionary(Dictionary& d) : d_(d) {}
  const Capabilities& caps() const override { return d_.caps(); }
  Params parameters() const override { return d_.parameters(); }
  KeyType key_type() const override { return d_.key_type(); }
  KeyType value_type() const override { return d_.value_type(); }
  uint64_t device_bytes_needed(const WorkloadBounds& b) const override { return d_.device_bytes_needed(b); }
  void build(const KeyValues& kv, DeviceTime& t) override { d_.build(kv, t); }
  void execute(const Batch& b, BatchResults& r, DeviceTime& t) override { d_.execute(b, r, t); }
  void snapshot(const std::string& n, DeviceTime& t) override { d_.snapshot(n, t); }
  void drop_snapshot(const std::string& n) override { d_.drop_snapshot(n); }
  void cleanup(DeviceTime& t) override { d_.cleanup(t); }
  Stats stats() const override { return d_.stats(); }

 private:
  Dictionary& d_;
};

}  // namespace gpudict::testing
