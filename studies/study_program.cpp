#include "study_program.h"

#include <rodsim/kernel/scene.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;

namespace rodsim::studies {

void execStudyProgram(const std::string& program, const std::string& verb, const std::vector<std::string>& args,
                      const std::string& executable) {
  std::vector<std::string> candidates;
  if (const char* dir = std::getenv("RODSIM_LIBEXEC_DIR")) candidates.push_back((fs::path(dir) / program).string());
  candidates.push_back((fs::path(executable).parent_path().parent_path() / "libexec" / "rodsim" / program).string());
  std::string looked;
  for (const auto& path : candidates) {
    looked += (looked.empty() ? "" : ", ") + path;
    if (::access(path.c_str(), X_OK) != 0) continue;
    std::vector<std::string> words{path, "--rodsim", executable};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    ::execv(path.c_str(), argv.data());
    throw kernel::InputError(fmt::format("rodsim {}: cannot start {}: {}", verb, path, std::strerror(errno)));
  }
  throw kernel::InputError(fmt::format("rodsim {}: its program {} is missing (looked for {}); rebuild or reinstall rodsim",
                                       verb, program, looked));
}

}  // namespace rodsim::studies
