#include "cli/provenance.hpp"

#include <unistd.h>

#include <array>
#include <ctime>

#include "core/common/device_info.hpp"
#include "gpudict_commit.h"  // generated at build time (CMakeLists.txt)

namespace gpudict {

namespace {

std::string shell_quote(const std::string& a) {
  if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
                        std::string::npos)
    return a;
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

}  // namespace

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + shell_quote(argv[i]);
  return s;
}

Provenance collect_provenance(const std::string& command, bool gpu, int device) {
  Provenance p;
  p.version = GPUDICT_VERSION;
  p.commit = GPUDICT_COMMIT;
  p.command = command;
  p.host = host_name();
  p.date = utc_now();
  p.driver = driver_version_string();
  p.runtime = runtime_version_string();
  DeviceDescription d;
  if (gpu && describe_device(device, d)) p.gpu = d;
  return p;
}

}  // namespace gpudict
