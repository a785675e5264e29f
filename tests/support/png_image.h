// Reads an 8-bit RGB or RGBA PNG (what POV-Ray writes) into pixels, with zlib and nothing else,
// so tests can look at rendered images.
#pragma once

#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace rodsim::test {

struct PngImage {
  int width = 0, height = 0;
  std::vector<std::array<int, 3>> rgb;  // row after row, top row first
  const std::array<int, 3>& at(int x, int y) const { return rgb.at(static_cast<std::size_t>(y) * width + x); }
};

inline PngImage readPng(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string data = ss.str();
  if (data.size() < 8 || data.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) throw std::runtime_error(file.string() + ": not a PNG");
  auto be32 = [&](std::size_t at) {
    return (std::uint32_t(std::uint8_t(data[at])) << 24) | (std::uint32_t(std::uint8_t(data[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(data[at + 2])) << 8) | std::uint32_t(std::uint8_t(data[at + 3]));
  };
  PngImage image;
  int channels = 0;
  std::string idat;
  for (std::size_t at = 8; at + 8 <= data.size();) {
    const std::uint32_t length = be32(at);
    const std::string type = data.substr(at + 4, 4);
    if (type == "IHDR") {
      image.width = static_cast<int>(be32(at + 8));
      image.height = static_cast<int>(be32(at + 12));
      const int depth = std::uint8_t(data[at + 16]), colour = std::uint8_t(data[at + 17]), interlace = std::uint8_t(data[at + 20]);
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
        throw std::runtime_error(file.string() + ": only 8-bit RGB(A), non-interlaced PNGs are read here");
      channels = colour == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat += data.substr(at + 8, length);
    }
    at += 12 + length;
  }
  const std::size_t stride = static_cast<std::size_t>(image.width) * channels;
  std::vector<unsigned char> raw((stride + 1) * image.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK || raw_size != raw.size())
    throw std::runtime_error(file.string() + ": the image data does not inflate to width x height");
  // Undo the per-row filters (PNG specification, section 9).
  std::vector<unsigned char> pixels(stride * image.height), zero(stride, 0);
  for (int y = 0; y < image.height; ++y) {
    const unsigned char filter = raw[y * (stride + 1)];
    const unsigned char* in_row = &raw[y * (stride + 1) + 1];
    unsigned char* row = &pixels[y * stride];
    const unsigned char* up = y ? &pixels[(y - 1) * stride] : zero.data();
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<std::size_t>(channels) ? row[i - channels] : 0, b = up[i],
                c = i >= static_cast<std::size_t>(channels) ? up[i - channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 0: predictor = 0; break;
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          predictor = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default: throw std::runtime_error(file.string() + ": unknown PNG row filter");
      }
      row[i] = static_cast<unsigned char>(in_row[i] + predictor);
    }
  }
  for (std::size_t p = 0; p < pixels.size(); p += channels) image.rgb.push_back({pixels[p], pixels[p + 1], pixels[p + 2]});
  return image;
}

}  // namespace rodsim::test
