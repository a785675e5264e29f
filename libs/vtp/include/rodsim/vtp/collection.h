// The ParaView collection of a run's frames (vtk/<name>.pvd): one <DataSet timestep file> per
// frame. The kernel writes it after every frame (atomically), `rodsim render` and `rodsim compare`
// read it, so its layout lives here beside the frames'.
#pragma once

#include <rodsim/vtp/polydata.h>  // FormatError

#include <filesystem>
#include <string>
#include <vector>

namespace rodsim::vtp {

struct CollectionEntry {
  double time = 0;
  std::filesystem::path file;  // as written: relative to the .pvd's folder
};

// The .pvd text of `frames` (times with 10 significant digits).
std::string writeCollection(const std::vector<CollectionEntry>& frames);

// The frames of a .pvd file, files resolved against its folder. Throws FormatError naming the
// file and line of a DataSet without a timestep or a file, or with a timestep that is no number.
std::vector<CollectionEntry> readCollectionFile(const std::filesystem::path& pvd);

}  // namespace rodsim::vtp
