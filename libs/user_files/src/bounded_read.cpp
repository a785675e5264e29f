#include <rodsim/user_files/bounded_read.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rodsim::user_files {

std::string readBoundedFile(const std::string& file, std::uint64_t max_bytes, const std::string& what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked before any read, so
  // /dev/zero, /dev/urandom, a FIFO or a directory is refused at once instead of read forever.
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw BoundedReadError(fmt::format("{}: cannot open the {}: {}", file, what, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw BoundedReadError(
        fmt::format("{}: not a regular file (a device, FIFO or directory); the {} must be a file", file, what));
  }
  const auto too_big = [&] {
    ::close(fd);
    return BoundedReadError(fmt::format("{}: larger than {} MiB, the most a {} may hold", file, max_bytes >> 20, what));
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) throw too_big();
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw BoundedReadError(fmt::format("{}: cannot read the {}: {}", file, what, std::strerror(err)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) throw too_big();  // it grew while it was read
  }
  ::close(fd);
  return text;
}

}  // namespace rodsim::user_files
