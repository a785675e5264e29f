// Where an installed rodsim keeps its files, relative to the rodsim executable itself, so that an
// installed tree can be moved and never depends on the source tree it was built from.
#pragma once

#include <filesystem>
#include <string>

namespace rodsim::kernel {

// <prefix>/share/rodsim/<name> for the rodsim executable at <prefix>/bin/rodsim: the scripts the
// programs run (plots). CMake copies them to <build>/share/rodsim in the build tree and installs
// them to <prefix>/share/rodsim.
inline std::filesystem::path sharedFile(const std::string& rodsim_executable, const std::string& name) {
  return std::filesystem::path(rodsim_executable).parent_path().parent_path() / "share" / "rodsim" / name;
}

}  // namespace rodsim::kernel
