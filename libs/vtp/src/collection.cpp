#include <rodsim/vtp/collection.h>

#include <fmt/format.h>

#include <cstdlib>

namespace rodsim::vtp {

namespace {

// The value of attribute `name` in one line of XML, "" when absent.
std::string attributeInLine(const std::string& line, const std::string& name) {
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
    text += fmt::format("<DataSet timestep=\"{:.10g}\" group=\"\" part=\"0\" file=\"{}\"/>\n", f.time, f.file);
  text += "</Collection>\n</VTKFile>\n";
  return text;
}

std::vector<CollectionEntry> readCollectionFile(const std::filesystem::path& pvd) {
  const std::string text = readBoundedFile(pvd, kMaxCollectionBytes, "ParaView collection (.pvd)");
  const std::filesystem::path folder = pvd.parent_path();
  std::vector<CollectionEntry> frames;
  int line_number = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    ++line_number;
    if (end - begin > kMaxCollectionLine)
      throw FormatError(fmt::format("{}:{}: a line longer than {} bytes", pvd.string(), line_number, kMaxCollectionLine));
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    if (line.find("<DataSet") == std::string::npos) continue;
    if (frames.size() == kMaxCollectionEntries)
      throw FormatError(fmt::format("{}:{}: more than {} DataSets (frames), the most a run writes", pvd.string(), line_number,
                                    kMaxCollectionEntries));
    const std::string time = attributeInLine(line, "timestep"), file = attributeInLine(line, "file");
    char* stop = nullptr;
    const double t = std::strtod(time.c_str(), &stop);
    if (time.empty() || file.empty() || stop != time.c_str() + time.size())
      throw FormatError(fmt::format("{}:{}: a DataSet needs a numeric timestep and a file", pvd.string(), line_number));
    frames.push_back({t, (folder / file).string()});
  }
  return frames;
}

}  // namespace rodsim::vtp
