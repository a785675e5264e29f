#include <rodsim/vtp/polydata.h>

#include <rodsim/user_files/bounded_read.h>

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>

namespace rodsim::vtp {

static_assert(std::endian::native == std::endian::little,
              "the appended arrays are the machine's bytes, declared LittleEndian in the file");

const PointArray* PolyLines::find(const std::string& name) const {
  for (const PointArray& a : point_data)
    if (a.name == name) return &a;
  return nullptr;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Writing

// Tuples one per line, values separated by a space (the ASCII layout since the first version).
std::string asciiTuples(const std::vector<double>& values, int components, int digits) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += fmt::format("{:.{}g}", values[i], digits);
    out += (i + 1) % static_cast<std::size_t>(components) == 0 ? '\n' : ' ';
  }
  return out;
}

// Indices on one line, each followed by a space.
std::string asciiIndices(const std::vector<std::int64_t>& values) {
  std::string out;
  for (std::int64_t v : values) out += fmt::format("{} ", v);
  return out;
}

std::string componentsAttribute(int components) {
  return components == 1 ? std::string() : fmt::format(" NumberOfComponents=\"{}\"", components);
}

std::string pieceTag(const PolyLines& f) {
  return fmt::format(
      "<Piece NumberOfPoints=\"{}\" NumberOfVerts=\"0\" NumberOfLines=\"{}\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n",
      f.numPoints(), f.offsets.size());
}

std::string pointDataTag(const PolyLines& f) {
  std::string tag = "<PointData";
  if (!f.scalars.empty()) tag += fmt::format(" Scalars=\"{}\"", f.scalars);
  if (!f.vectors.empty()) tag += fmt::format(" Vectors=\"{}\"", f.vectors);
  return tag + ">\n";
}

std::string writeAscii(const PolyLines& f) {
  std::string text =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
      "<PolyData>\n" +
      pieceTag(f);
  text += "<Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n";
  text += asciiTuples(f.points, 3, 9);
  text += "</DataArray></Points>\n";
  text += pointDataTag(f);
  for (const PointArray& a : f.point_data) {
    text += fmt::format("<DataArray type=\"Float64\" Name=\"{}\"{} format=\"ascii\">\n", a.name, componentsAttribute(a.components));
    text += asciiTuples(a.values, a.components, a.ascii_digits);
    text += "</DataArray>\n";
  }
  text += "</PointData>\n<Lines>\n";
  text += "<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n" + asciiIndices(f.connectivity) + "\n</DataArray>\n";
  text += "<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n" + asciiIndices(f.offsets) + "\n</DataArray>\n";
  text += "</Lines>\n</Piece>\n</PolyData>\n</VTKFile>\n";
  return text;
}

// VTK's default uncompressed block size; any size reads back, this one matches what VTK writes.
constexpr std::size_t kBlockSize = 32768;

void appendUInt64(std::string& out, std::uint64_t v) {
  char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  out.append(bytes, sizeof v);
}

// Appends one array in vtkZLibDataCompressor layout to `data`.
void appendCompressed(std::string& data, const void* raw, std::size_t size) {
  const auto* bytes = static_cast<const Bytef*>(raw);
  const std::size_t blocks = (size + kBlockSize - 1) / kBlockSize;
  std::vector<std::string> compressed(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t n = std::min(kBlockSize, size - b * kBlockSize);
    uLongf length = compressBound(static_cast<uLong>(n));
    compressed[b].resize(length);
    if (compress2(reinterpret_cast<Bytef*>(compressed[b].data()), &length, bytes + b * kBlockSize,
                  static_cast<uLong>(n), Z_DEFAULT_COMPRESSION) != Z_OK)
      throw std::runtime_error("zlib could not compress a VTK array");  // only on out of memory
    compressed[b].resize(length);
  }
  appendUInt64(data, blocks);
  appendUInt64(data, kBlockSize);
  appendUInt64(data, size % kBlockSize);
  for (const std::string& c : compressed) appendUInt64(data, c.size());
  for (const std::string& c : compressed) data += c;
}

std::string writeAppended(const PolyLines& f) {
  std::string data;  // the <AppendedData> bytes; each array's offset is counted from its start
  auto array = [&](const char* type, const std::string& name, int components, const void* raw, std::size_t size) {
    const std::string tag = fmt::format("<DataArray type=\"{}\"{}{} format=\"appended\" offset=\"{}\"/>", type,
                                        name.empty() ? "" : fmt::format(" Name=\"{}\"", name),
                                        componentsAttribute(components), data.size());
    appendCompressed(data, raw, size);
    return tag;
  };
  std::string text =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\" "
      "compressor=\"vtkZLibDataCompressor\">\n"
      "<PolyData>\n" +
      pieceTag(f);
  text += "<Points>" + array("Float64", "", 3, f.points.data(), f.points.size() * sizeof(double)) + "</Points>\n";
  text += pointDataTag(f);
  for (const PointArray& a : f.point_data)
    text += array("Float64", a.name, a.components, a.values.data(), a.values.size() * sizeof(double)) + "\n";
  text += "</PointData>\n<Lines>\n";
  text += array("Int64", "connectivity", 1, f.connectivity.data(), f.connectivity.size() * sizeof(std::int64_t)) + "\n";
  text += array("Int64", "offsets", 1, f.offsets.data(), f.offsets.size() * sizeof(std::int64_t)) + "\n";
  text += "</Lines>\n</Piece>\n</PolyData>\n<AppendedData encoding=\"raw\">\n_";
  text += data;
  text += "\n</AppendedData>\n</VTKFile>\n";
  return text;
}

// ---------------------------------------------------------------------------------------------
// Reading

// The value of attribute `name` in an XML start tag, empty when absent.
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const auto at = tag.find(key);
  if (at == std::string::npos) return {};
  const auto begin = at + key.size();
  const auto end = tag.find('"', begin);
  if (end == std::string::npos) throw FormatError(fmt::format("unterminated attribute {} in {}", name, tag));
  return tag.substr(begin, end - begin);
}

std::size_t typeSize(const std::string& type) {
  if (type == "Float64" || type == "Int64" || type == "UInt64") return 8;
  if (type == "Float32" || type == "Int32" || type == "UInt32") return 4;
  throw FormatError(fmt::format("DataArray type '{}' is not supported (Float32/64, Int32/64, UInt32/64)", type));
}

double valueAt(const std::string& type, const char* p) {
  auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  if (type == "Float64") return load(double{});
  if (type == "Float32") return load(float{});
  if (type == "Int64") return load(std::int64_t{});
  if (type == "Int32") return load(std::int32_t{});
  if (type == "UInt64") return load(std::uint64_t{});
  return load(std::uint32_t{});
}

struct Appended {
  const std::string* text = nullptr;
  std::size_t base = std::string::npos;  // first byte after the '_' marker
  std::size_t header_size = 4;           // header_type UInt32 (VTK's default) or UInt64
  bool zlib = false;

  std::uint64_t headerWord(std::size_t at) const {
    if (at + header_size > text->size()) throw FormatError("appended data truncated (array header)");
    if (header_size == 8) {
      std::uint64_t v;
      std::memcpy(&v, text->data() + at, 8);
      return v;
    }
    std::uint32_t v;
    std::memcpy(&v, text->data() + at, 4);
    return v;
  }

  // The size in bytes of the array at `offset` (inflated, when compressed) as its header declares,
  // after checking the header against the file; nothing is allocated.
  std::uint64_t declaredSize(std::size_t offset) const {
    if (base == std::string::npos) throw FormatError("a DataArray is appended but the file has no <AppendedData>");
    const std::size_t at = base + offset;
    if (!zlib) {
      const std::uint64_t size = headerWord(at);
      if (size > text->size() - at - header_size) throw FormatError("appended data truncated");
      return size;
    }
    const std::uint64_t blocks = headerWord(at), block_size = headerWord(at + header_size),
                        last_size = headerWord(at + 2 * header_size);
    // The header comes from the file: bound it before it sizes a buffer (every block takes at least
    // a byte of the file, and inflates to at most block_size).
    if (blocks > text->size() || last_size > block_size || block_size > (std::uint64_t(1) << 30) ||
        at + (3 + blocks) * header_size > text->size())
      throw FormatError("a compressed DataArray's header is inconsistent with the file");
    return blocks == 0 ? 0 : (blocks - 1) * block_size + (last_size != 0 ? last_size : block_size);
  }

  // The uncompressed bytes of the array at `offset`.
  std::string bytes(std::size_t offset) const {
    const std::uint64_t size = declaredSize(offset);
    std::size_t at = base + offset;
    if (!zlib) return text->substr(at + header_size, size);
    const std::uint64_t blocks = headerWord(at), block_size = headerWord(at + header_size),
                        last_size = headerWord(at + 2 * header_size);
    std::size_t next = at + (3 + blocks) * header_size;
    std::string out;
    out.reserve(size);
    for (std::uint64_t b = 0; b < blocks; ++b) {
      const std::uint64_t compressed = headerWord(at + (3 + b) * header_size);
      const std::uint64_t expected = (b + 1 == blocks && last_size != 0) ? last_size : block_size;
      if (compressed > text->size() - next) throw FormatError("appended data truncated (compressed block)");
      // Inflated in place, at the end of `out` (at most its declared size).
      const std::size_t start = out.size();
      out.resize(start + expected);
      uLongf length = static_cast<uLongf>(expected);
      if (uncompress(reinterpret_cast<Bytef*>(out.data() + start), &length,
                     reinterpret_cast<const Bytef*>(text->data() + next), static_cast<uLong>(compressed)) != Z_OK ||
          length != expected)
        throw FormatError("a compressed block does not inflate to its declared size");
      next += compressed;
    }
    return out;
  }
};

// A whole number in an attribute (offset, NumberOfComponents): FormatError, not std::invalid_argument.
std::uint64_t attributeCount(const std::string& value, const char* what, std::uint64_t max) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n > max)
    throw FormatError(fmt::format("{} '{}' is not a whole number up to {}", what, value, max));
  return n;
}

std::vector<double> decodeArray(const std::string& text, const std::string& tag, std::size_t content_begin,
                                const Appended& appended) {
  const std::string type = attribute(tag, "type"), format = attribute(tag, "format");
  std::vector<double> values;
  if (format == "ascii") {
    const auto end = text.find("</DataArray>", content_begin);
    if (end == std::string::npos) throw FormatError("a DataArray has no </DataArray>");
    const char* p = text.data() + content_begin;
    const char* stop = text.data() + end;
    while (p < stop) {
      while (p < stop && std::isspace(static_cast<unsigned char>(*p))) ++p;
      if (p == stop) break;
      double v = 0;
      const auto [next, ec] = std::from_chars(p, stop, v);
      if (ec != std::errc()) throw FormatError(fmt::format("not a number in ascii DataArray: '{}'", std::string(p, std::min<std::size_t>(stop - p, 20))));
      values.push_back(v);
      p = next;
    }
    return values;
  }
  if (format == "appended") {
    const std::string offset = attribute(tag, "offset");
    if (offset.empty()) throw FormatError("an appended DataArray has no offset");
    const std::string raw = appended.bytes(attributeCount(offset, "the DataArray offset", text.size()));
    const std::size_t size = typeSize(type);
    if (raw.size() % size != 0) throw FormatError("an appended DataArray's size is not a whole number of values");
    values.reserve(raw.size() / size);
    for (std::size_t i = 0; i < raw.size(); i += size) values.push_back(valueAt(type, raw.data() + i));
    return values;
  }
  throw FormatError(fmt::format("DataArray format '{}' is not supported (ascii, appended)", format));
}

std::vector<std::int64_t> asIndices(const std::vector<double>& v) { return {v.begin(), v.end()}; }

}  // namespace

std::string writePolyLines(const PolyLines& frame, Encoding encoding) {
  return encoding == Encoding::Ascii ? writeAscii(frame) : writeAppended(frame);
}

PolyLines readPolyLines(const std::string& text) {
  const auto file_tag_at = text.find("<VTKFile");
  if (file_tag_at == std::string::npos) throw FormatError("not a VTK XML file (no <VTKFile>)");
  const std::string file_tag = text.substr(file_tag_at, text.find('>', file_tag_at) - file_tag_at);
  if (attribute(file_tag, "type") != "PolyData") throw FormatError("not a PolyData file");
  if (const std::string order = attribute(file_tag, "byte_order"); !order.empty() && order != "LittleEndian")
    throw FormatError("byte_order " + order + " is not supported");
  Appended appended;
  appended.text = &text;
  appended.header_size = attribute(file_tag, "header_type") == "UInt64" ? 8 : 4;
  const std::string compressor = attribute(file_tag, "compressor");
  if (!compressor.empty() && compressor != "vtkZLibDataCompressor")
    throw FormatError("compressor " + compressor + " is not supported (vtkZLibDataCompressor)");
  appended.zlib = !compressor.empty();
  // Tags are only looked for before the appended section: its bytes may contain anything.
  std::size_t xml_end = text.find("<AppendedData");
  if (xml_end != std::string::npos) {
    const std::string tag = text.substr(xml_end, text.find('>', xml_end) - xml_end);
    if (attribute(tag, "encoding") != "raw") throw FormatError("only raw AppendedData is supported (not base64)");
    const auto marker = text.find('_', xml_end);
    if (marker == std::string::npos) throw FormatError("<AppendedData> without its '_' marker");
    appended.base = marker + 1;
  } else {
    xml_end = text.size();
  }

  // Before any array is decoded: what the appended arrays declare, together, is bounded by what
  // such a file can hold (arrays may point at the same data: each counts), so a small file whose
  // arrays share one block that inflates to 1 GiB is refused before anything is allocated.
  const std::uint64_t limit = std::min<std::uint64_t>(kMaxInflatedBytes, kMaxInflateRatio * text.size());
  std::uint64_t declared = 0;
  for (std::size_t at = text.find("<DataArray", file_tag_at); at < xml_end; at = text.find("<DataArray", at + 1)) {
    const auto close = text.find('>', at);
    if (close == std::string::npos || close > xml_end) break;  // the loop below reports it
    const std::string tag = text.substr(at, close - at + 1);
    if (attribute(tag, "format") != "appended" || attribute(tag, "offset").empty()) continue;
    declared += appended.declaredSize(attributeCount(attribute(tag, "offset"), "the DataArray offset", text.size()));
    if (declared > limit)
      throw FormatError(fmt::format("the appended arrays declare more than {} bytes{} (at most {} times the file's {} bytes, "
                                    "and at most {} MiB)", limit, appended.zlib ? " inflated" : "", kMaxInflateRatio,
                                    text.size(), kMaxInflatedBytes >> 20));
  }

  PolyLines frame;
  std::string section;  // the enclosing Points / PointData / Lines / ... element
  for (std::size_t at = text.find('<', file_tag_at + 1); at < xml_end; at = text.find('<', at + 1)) {
    const auto close = text.find('>', at);
    if (close == std::string::npos || close > xml_end) throw FormatError("unterminated tag");
    const std::string tag = text.substr(at, close - at + 1);
    auto is = [&](const char* name) {
      const std::size_t n = std::strlen(name);
      return tag.compare(1, n, name) == 0 && (tag[n + 1] == ' ' || tag[n + 1] == '>' || tag[n + 1] == '/');
    };
    if (tag[1] == '/') {
      if (tag.compare(2, section.size(), section) == 0) section.clear();
      continue;
    }
    if (is("PointData")) {
      frame.scalars = attribute(tag, "Scalars");
      frame.vectors = attribute(tag, "Vectors");
    }
    for (const char* s : {"Points", "PointData", "CellData", "Lines", "Verts", "Polys", "Strips", "FieldData"})
      if (is(s) && tag[tag.size() - 2] != '/') section = s;
    if (!is("DataArray")) continue;
    std::vector<double> values = decodeArray(text, tag, close + 1, appended);
    const std::string name = attribute(tag, "Name");
    const std::string components = attribute(tag, "NumberOfComponents");
    if (section == "Points") {
      frame.points = std::move(values);
    } else if (section == "PointData") {
      PointArray a;
      a.name = name;
      a.components = components.empty() ? 1 : static_cast<int>(attributeCount(components, "NumberOfComponents", 1 << 20));
      if (a.components == 0) throw FormatError("NumberOfComponents is 0");
      a.values = std::move(values);
      frame.point_data.push_back(std::move(a));
    } else if (section == "Lines" && name == "connectivity") {
      frame.connectivity = asIndices(values);
    } else if (section == "Lines" && name == "offsets") {
      frame.offsets = asIndices(values);
    }
  }
  if (frame.points.size() % 3 != 0) throw FormatError("the Points array is not a list of 3-vectors");
  for (const PointArray& a : frame.point_data)
    if (a.values.size() != frame.numPoints() * static_cast<std::size_t>(a.components))
      throw FormatError(fmt::format("point array '{}' has {} values for {} points", a.name, a.values.size(), frame.numPoints()));
  std::int64_t previous = 0;
  for (std::int64_t end : frame.offsets) {
    if (end < previous || end > static_cast<std::int64_t>(frame.connectivity.size()))
      throw FormatError("the Lines offsets do not fit the connectivity");
    previous = end;
  }
  for (std::int64_t p : frame.connectivity)
    if (p < 0 || p >= static_cast<std::int64_t>(frame.numPoints())) throw FormatError("a line refers to a point that does not exist");
  return frame;
}

std::string readBoundedFile(const std::filesystem::path& file, std::uint64_t max_bytes, const std::string& what) {
  try {
    return user_files::readBoundedFile(file.string(), max_bytes, what);
  } catch (const user_files::BoundedReadError& e) {
    throw FormatError(e.what());
  }
}

PolyLines readPolyLinesFile(const std::filesystem::path& file) {
  const std::string text = readBoundedFile(file, kMaxFrameBytes, "VTK frame");
  try {
    return readPolyLines(text);
  } catch (const FormatError& e) {
    throw FormatError(fmt::format("{}: {}", file.string(), e.what()));
  }
}

}  // namespace rodsim::vtp
