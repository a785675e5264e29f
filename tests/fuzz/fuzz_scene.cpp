// libFuzzer target: arbitrary bytes as a scene file (and as --set values), through validation
// and, when the scene is valid and small, the construction and binding of every component, so
// each plugin's parameter checks are fuzzed too. Any crash, hang or sanitizer report is a bug;
// InputError is the expected answer to bad input.
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/world.h>

#include <cstdint>
#include <string>
#include <string_view>

using namespace rodsim::kernel;

namespace {

const TypeRegistry& registry() {
  static TypeRegistry r = [] {
    TypeRegistry reg;
    loadPlugins(reg, {});
    return reg;
  }();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Bytes after a NUL are --set assignments, one per line: both input paths get fuzzed.
  std::vector<std::string> overrides;
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    std::string_view rest = text.substr(nul + 1);
    text = text.substr(0, nul);
    while (!rest.empty() && overrides.size() < 8) {
      auto end = rest.find('\n');
      overrides.emplace_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    }
  }
  try {
    Scene scene = parseScene(text, "fuzz.toml", overrides, registry());
    long long nodes = 0;
    for (const auto& r : scene.rods)
      if (r.params.has("nodes")) nodes += r.params.integer("nodes");
    if (nodes <= 2000) KernelWorld world(scene, registry());  // plugins' own checks (bind)
  } catch (const InputError&) {
  }
  return 0;
}
