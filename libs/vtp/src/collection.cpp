#include <rodsim/vtp/collection.h>

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

namespace rodsim::vtp {

namespace {

// The value of attribute `name` in one line of XML, "" when absent.
std::string attribute(const std::string& line, const std::string& name) {
  const std::string key = name + "=\"";
  const auto at = line.find(key);
  if (at == std::string::npos) return {};
  const auto begin = at + key.size();
  const auto end = line.find('"', begin);
  return end == std::string::npos ? std::string() : line.substr(begin, end - begin);
}

}  // namespace

std::string writeCollection(const std::vector<CollectionEntry>& frames) {
  std::string text =
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n<Collection>\n";
  for (const CollectionEntry& f : frames)
    text += fmt::format("<DataSet timestep=\"{:.10g}\" group=\"\" part=\"0\" file=\"{}\"/>\n", f.time, f.file.string());
  text += "</Collection>\n</VTKFile>\n";
  return text;
}

std::vector<CollectionEntry> readCollectionFile(const std::filesystem::path& pvd) {
  std::ifstream in(pvd);
  if (!in) throw FormatError(fmt::format("{}: cannot be read", pvd.string()));
  std::vector<CollectionEntry> frames;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.find("<DataSet") == std::string::npos) continue;
    const std::string time = attribute(line, "timestep"), file = attribute(line, "file");
    char* end = nullptr;
    const double t = std::strtod(time.c_str(), &end);
    if (time.empty() || file.empty() || end != time.c_str() + time.size())
      throw FormatError(fmt::format("{}:{}: a DataSet needs a numeric timestep and a file", pvd.string(), line_number));
    frames.push_back({t, pvd.parent_path() / file});
  }
  return frames;
}

}  // namespace rodsim::vtp
