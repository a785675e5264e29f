// Reading a file a user points at, bounded before any byte is read (README.md).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rodsim::user_files {

// "FILE: why": not a regular file, larger than allowed, or unreadable.
class BoundedReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The bytes of `file`, a regular file (not a device, FIFO or directory) of at most `max_bytes`;
// `what` names it in the messages ("the scene file", "VTK frame"). At most `max_bytes` + 1 bytes
// are read, so a file that grows while it is read is bounded too.
std::string readBoundedFile(const std::string& file, std::uint64_t max_bytes, const std::string& what);

}  // namespace rodsim::user_files
