// The ParaView collection of a run's frames (vtk/<name>.pvd): one <DataSet timestep file> per
// frame. The kernel writes it after every frame (atomically), `rodsim render` and `rodsim compare`
// read it, so its layout lives here beside the frames'.
#pragma once

#include <rodsim/vtp/polydata.h>  // FormatError

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace rodsim::vtp {

struct CollectionEntry {
  double time = 0;
  // As written: relative to the .pvd's folder; read back: resolved against it. A string, not a
  // path (a path also keeps its parsed components: a .pvd of 1e6 frames held 250 MB).
  std::string file;
};

// The .pvd text of `frames` (times with 10 significant digits).
std::string writeCollection(const std::vector<CollectionEntry>& frames);

// The frames of a .pvd file, files resolved against its folder. Throws FormatError naming the
// file and line of a DataSet without a timestep or a file, or with a timestep that is no number.
// Bounded (issue 43): the .pvd must be a regular file of at most kMaxCollectionBytes, with lines of
// at most kMaxCollectionLine bytes and at most kMaxCollectionEntries DataSets (the kernel writes at
// most 1e6 frames); the frames themselves are only listed, never read here.
std::vector<CollectionEntry> readCollectionFile(const std::filesystem::path& pvd);
inline constexpr std::uint64_t kMaxCollectionBytes = std::uint64_t(128) << 20;
inline constexpr std::size_t kMaxCollectionLine = 8192;
inline constexpr std::size_t kMaxCollectionEntries = 1'000'000;

}  // namespace rodsim::vtp
