// The structures gpudict knows. The CLI builds one subcommand per entry and
// its options from `options`; it holds no structure-specific code.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"

namespace gpudict {

// A default as --help shows it: the shortest text of `x` ("0.5", not "0.500000").
std::string shortest_text(double x);
// A flag's default as --help shows it: "on" or "off".
inline const char* on_off(bool on) { return on ? "on" : "off"; }

// How option values are read, shared by StructureConfig's getters and the
// command line's checks: an unsigned integer (decimal, 0x hex, 0 octal), a
// number; and the message for a value outside its choices ("'x' is not a or
// b", "'x' is not one of a, b, c").
bool parse_uint_text(const std::string& s, uint64_t& v);
bool parse_number_text(const std::string& s, double& v);
std::string not_a_choice(const std::string& value, const std::vector<std::string>& choices);

// One structure-specific command-line option (`--NAME VALUE`).
struct OptionSpec {
  std::string name;           // without dashes
  std::string help;
  std::string default_value;  // as text; empty: no default
  std::string type = "TEXT";  // what --help shows for the value: UINT, FLOAT with its range, {the,choices}
};

// What a structure is created with: its options as text (name -> value, every
// OptionSpec present, defaults filled in), the device and the key type.
struct StructureConfig {
  std::map<std::string, std::string> options;
  int device = 0;
  KeyType key_type = KeyType::U32;
  KeyType value_type = KeyType::U32;

  // Typed access; throw InputError naming the option when the text is invalid.
  uint64_t get_u64(const std::string& name) const;
  double get_double(const std::string& name) const;
  // A two-way choice: true for `first` (e.g. "on"), false for `second`.
  bool get_choice(const std::string& name, const char* first, const char* second) const;
  // A choice among several: the index of the value in `choices`
  // ("--NAME: 'x' is not one of a, b, c" otherwise).
  size_t get_one_of(const std::string& name, std::initializer_list<const char*> choices) const;
  const std::string& get(const std::string& name) const;
};

struct StructureInfo {
  std::string name;      // subcommand name
  std::string summary;   // one line for `gpudict --help`
  std::string details;   // paragraph for `gpudict NAME --help`
  Capabilities caps;     // what the structure supports (also for the CPU backend)
  std::vector<OptionSpec> options;
  // Null for structures named but not built yet (later issues).
  std::function<std::unique_ptr<Dictionary>(const StructureConfig&)> make_gpu;
  // Checks the options (InputError naming the option); runs for every
  // backend, so the CPU reference refuses what the GPU structure would.
  std::function<void(const StructureConfig&)> validate_options;
  // Capabilities that depend on the options (the slab hash's --mode); null:
  // `caps` for every configuration. Both backends use what it returns.
  std::function<Capabilities(const StructureConfig&)> caps_for;

  Capabilities caps_with(const StructureConfig& cfg) const { return caps_for ? caps_for(cfg) : caps; }
};

// Every structure, in the order `gpudict --help` lists them.
const std::vector<StructureInfo>& structures();
const StructureInfo* find_structure(const std::string& name);
// "sorted-array, lsm" : the structures whose caps support `t`.
std::string structures_supporting(OpType t);

}  // namespace gpudict
