#include "weights_tools/idx.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "weights_tools/error.hpp"

namespace bs {
namespace {

// gzread reads plain files too, so one path serves .gz and raw IDX files.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, expected an IDX file");
    f_ = gzopen(path.c_str(), "rb");
    if (!f_) fail(path, std::string("cannot open (") + std::strerror(errno) + ")");
  }
  ~GzReader() { if (f_) gzclose(f_); }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  void read(void* dst, size_t n, const char* what) {
    size_t done = 0;
    while (done < n) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
      int got = gzread(f_, static_cast<char*>(dst) + done, chunk);
      if (got < 0) {
        int code = 0;
        const char* msg = gzerror(f_, &code);
        fail(path_, std::string("corrupt gzip stream (") + msg + ")");
      }
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    int code = 0;
    const char* msg = gzerror(f_, &code);
    if (code != Z_OK && code != Z_STREAM_END) fail(path_, std::string("corrupt gzip stream (") + msg + ")");
    if (done < n) fail(path_, std::string("truncated IDX file: ") + what + " needs " + std::to_string(n) +
                                  " bytes, only " + std::to_string(done) + " left");
  }

 private:
  std::string path_;
  gzFile f_ = nullptr;
};

size_t type_size(uint8_t t) {
  switch (t) {
    case 0x08: case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C: case 0x0D: return 4;
    case 0x0E: return 8;
    default: return 0;
  }
}

uint32_t be32(const uint8_t* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; }

}  // namespace

IdxFile read_idx(const std::string& path, int64_t max_items) {
  GzReader in(path);
  uint8_t magic[4];
  in.read(magic, 4, "the magic number");
  if (magic[0] != 0 || magic[1] != 0 || type_size(magic[2]) == 0 || magic[3] == 0)
    fail(path, "not an IDX file (wrong magic 0x" + [&] {
      char buf[9];
      std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x", magic[0], magic[1], magic[2], magic[3]);
      return std::string(buf);
    }() + ")");
  IdxFile out;
  out.type = magic[2];
  std::vector<uint8_t> dimbytes(4 * magic[3]);
  in.read(dimbytes.data(), dimbytes.size(), "the dimensions");
  int64_t per_item = 1;
  for (int i = 0; i < magic[3]; ++i) {
    out.dims.push_back(be32(&dimbytes[4 * i]));
    if (i > 0) per_item *= out.dims.back();
  }
  if (max_items > 0) {
    if (max_items > out.dims[0])
      fail(path, "holds " + std::to_string(out.dims[0]) + " items, " + std::to_string(max_items) + " requested");
    out.dims[0] = max_items;
  }
  const size_t es = type_size(out.type);
  const int64_t n = out.dims[0] * per_item;
  std::vector<uint8_t> raw(static_cast<size_t>(n) * es);
  in.read(raw.data(), raw.size(), "the data");
  out.values.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = &raw[i * es];
    switch (out.type) {
      case 0x08: out.values[i] = p[0]; break;
      case 0x09: out.values[i] = static_cast<int8_t>(p[0]); break;
      case 0x0B: out.values[i] = static_cast<int16_t>(uint16_t{p[0]} << 8 | p[1]); break;
      case 0x0C: out.values[i] = static_cast<float>(static_cast<int32_t>(be32(p))); break;
      case 0x0D: { uint32_t b = be32(p); float f; std::memcpy(&f, &b, 4); out.values[i] = f; break; }
      case 0x0E: {
        uint64_t b = uint64_t{be32(p)} << 32 | be32(p + 4);
        double d; std::memcpy(&d, &b, 8); out.values[i] = static_cast<float>(d); break;
      }
    }
  }
  return out;
}

}  // namespace bs
