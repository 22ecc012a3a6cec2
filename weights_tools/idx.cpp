#include "weights_tools/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "weights_tools/array.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/limits.hpp"

namespace bs {
namespace {

// The bytes of an IDX image, plain or gzipped (one or more gzip members), read front to back.
class IdxSource {
 public:
  IdxSource(const uint8_t* data, size_t size, const std::string& where) : data_(data), size_(size), where_(where) {
    gz_ = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    if (gz_) {
      zs_.next_in = const_cast<Bytef*>(data);
      zs_.avail_in = static_cast<uInt>(std::min<size_t>(size, UINT32_MAX));
      if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) fail(where, "cannot start gzip decompression");
      open_ = true;
    }
  }
  ~IdxSource() { if (open_) inflateEnd(&zs_); }
  IdxSource(const IdxSource&) = delete;
  IdxSource& operator=(const IdxSource&) = delete;

  // The most bytes this source can still yield: what is left of a plain file, and at most deflate's
  // largest ratio (1032:1) times what is left of a gzipped one.
  uint64_t max_left() const {
    const uint64_t in_left = gz_ ? size_ - consumed_in() : size_ - pos_;
    return gz_ ? checked_mul(in_left, 1032, where_, "the decompressed size") + 1024 : in_left;
  }

  void read(uint8_t* dst, size_t n, const char* what) {
    size_t done = gz_ ? inflate_into(dst, n) : copy_into(dst, n);
    if (done < n) fail(where_, std::string("truncated IDX file: ") + what + " needs " + std::to_string(n) +
                                   " bytes, only " + std::to_string(done) + " left");
  }

 private:
  size_t consumed_in() const { return static_cast<size_t>(zs_.next_in - data_); }
  size_t copy_into(uint8_t* dst, size_t n) {
    const size_t k = std::min(n, size_ - pos_);
    if (k) std::memcpy(dst, data_ + pos_, k);
    pos_ += k;
    return k;
  }
  size_t inflate_into(uint8_t* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      if (ended_) {  // another gzip member follows (concatenated .gz files), or the end
        if (consumed_in() >= size_) break;
        if (inflateReset(&zs_) != Z_OK) fail(where_, "corrupt gzip stream (cannot reset)");
        ended_ = false;
      }
      zs_.avail_in = static_cast<uInt>(std::min<size_t>(size_ - consumed_in(), UINT32_MAX));
      const uInt chunk = static_cast<uInt>(std::min<size_t>(n - done, 1u << 30));
      zs_.next_out = dst + done;
      zs_.avail_out = chunk;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      done += chunk - zs_.avail_out;
      if (rc == Z_STREAM_END) { ended_ = true; continue; }
      if (rc == Z_BUF_ERROR && zs_.avail_in == 0) break;  // input exhausted mid-stream: truncated
      if (rc != Z_OK) fail(where_, std::string("corrupt gzip stream (") + (zs_.msg ? zs_.msg : "inflate error " + std::to_string(rc)) + ")");
    }
    return done;
  }

  const uint8_t* data_;
  size_t size_, pos_ = 0;
  const std::string& where_;
  bool gz_ = false, open_ = false, ended_ = false;
  z_stream zs_{};
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

IdxFile parse_idx(const uint8_t* data, size_t size, const std::string& path, int64_t max_items) {
  IdxSource in(data, size, path);
  uint8_t magic[4];
  in.read(magic, 4, "the magic number");
  if (magic[0] != 0 || magic[1] != 0 || type_size(magic[2]) == 0 || magic[3] == 0)
    fail(path, "not an IDX file (wrong magic 0x" + [&] {
      char buf[9];
      std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x", magic[0], magic[1], magic[2], magic[3]);
      return std::string(buf);
    }() + ")");
  if (magic[3] > kMaxNdim) fail(path, "IDX header declares " + std::to_string(magic[3]) + " dimensions (at most " + std::to_string(kMaxNdim) + " are read)");
  IdxFile out;
  out.type = magic[2];
  std::vector<uint8_t> dimbytes(4 * magic[3]);
  in.read(dimbytes.data(), dimbytes.size(), "the dimensions");
  for (int i = 0; i < magic[3]; ++i) out.dims.push_back(be32(&dimbytes[4 * i]));
  if (max_items > 0) {
    if (max_items > out.dims[0])
      fail(path, "holds " + std::to_string(out.dims[0]) + " items, " + std::to_string(max_items) + " requested");
    out.dims[0] = max_items;
  }
  // The declared size against what the file can hold and the tensor limit, before anything is allocated.
  const size_t es = type_size(out.type);
  const uint64_t n = checked_elements(out.dims, path + ": IDX shape " + shape_str(out.dims));
  const uint64_t raw_bytes = checked_mul(n, es, path, "the IDX data size");
  check_tensor_limit(checked_mul(n, sizeof(float), path, "the IDX data size"), path, "IDX shape " + shape_str(out.dims) + " as float32");
  if (raw_bytes > in.max_left())
    fail(path, "truncated IDX file: shape " + shape_str(out.dims) + " needs " + std::to_string(raw_bytes) +
                   " bytes of data, the file cannot hold more than " + std::to_string(in.max_left()));
  std::vector<uint8_t> raw(static_cast<size_t>(raw_bytes));
  in.read(raw.data(), raw.size(), "the data");
  out.values.resize(static_cast<size_t>(n));
  for (uint64_t i = 0; i < n; ++i) {
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

IdxFile read_idx(const std::string& path, int64_t max_items) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, expected an IDX file");
  const std::vector<uint8_t> bytes = read_file(path);
  return parse_idx(bytes.data(), bytes.size(), path, max_items);
}

}  // namespace bs
