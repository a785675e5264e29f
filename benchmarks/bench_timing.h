// What the benchmarks time with: process CPU time (other processes on a shared machine disturb it
// less than wall time) and the median and spread of timed blocks.
#pragma once

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <time.h>

namespace rodsim::bench_timing {

inline double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
inline double minOf(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
inline double maxOf(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// The machine a figure was measured on, for the first line of a benchmark's output: the CPU model and
// which of the plugins' vector clones runs (target_clones "arch=x86-64-v4", "arch=x86-64-v3",
// "default": the resolver takes the first the CPU supports). The Cosserat step cost 3.1-3.7x more per
// element on a Zen 3 VM (AVX2) than on a Zen 5 VM (AVX-512) (benchmarks/README.md): a figure means
// little without the machine.
inline std::string machine() {
  // "model name" alone can be as vague as "AMD EPYC" on a VM: the family and model number tell
  // the generation (AMD family 25 is Zen 3 and 4, 26 Zen 5).
  std::string model = "unknown CPU", family, number;
  std::ifstream cpuinfo("/proc/cpuinfo");
  auto value = [](const std::string& line) { return line.substr(line.find(':') + 2); };
  for (std::string line; std::getline(cpuinfo, line) && !line.empty();) {
    if (line.rfind("model name", 0) == 0) model = value(line);
    else if (line.rfind("cpu family", 0) == 0) family = value(line);
    else if (line.rfind("model\t", 0) == 0) number = value(line);
  }
  if (!family.empty()) model += " (family " + family + ", model " + number + ")";
  const char* clones = "generic x86-64";
  // The plugins' clone guard (e.g. COSSERAT_SIMD_CLONES): clang and ASan builds have no clones.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4"))
    clones = "AVX-512 (x86-64-v4)";
  else if (__builtin_cpu_supports("x86-64-v3"))
    clones = "AVX2 (x86-64-v3)";
#endif
  return model + "; vector clones: " + clones;
}

}  // namespace rodsim::bench_timing
