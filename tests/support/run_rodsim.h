// Runs the rodsim executable as a user would, capturing its output and exit status.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace rodsim::test {

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr
};

inline CommandResult runCommand(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) r.output += buf.data();
  int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

inline CommandResult runRodsim(const std::string& args) {
  return runCommand(std::string(RODSIM_EXECUTABLE) + " " + args);
}

// A scratch directory under the build tree, emptied on creation.
inline std::filesystem::path scratchDir(const std::string& name) {
  auto dir = std::filesystem::path(RODSIM_BINARY_DIR) / "test-scratch" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::filesystem::path writeText(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file) << text;
  return file;
}

inline std::string readText(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace rodsim::test
