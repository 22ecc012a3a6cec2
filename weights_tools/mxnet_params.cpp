#include "weights_tools/mxnet_params.hpp"

#include <cstring>

#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/limits.hpp"

namespace bs {
namespace {

constexpr uint64_t kListMagic = 0x112;
constexpr uint32_t kV1 = 0xF993FAC8, kV2 = 0xF993FAC9, kV3 = 0xF993FACA;

class Cursor {
 public:
  Cursor(const std::vector<uint8_t>& b, const std::string& where) : b_(b), where_(where) {}
  template <class T>
  T get(const char* what) {
    T v;
    need(sizeof(T), what);
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  void need(size_t n, const std::string& what) {
    if (b_.size() - pos_ < n)
      fail(where_, "truncated .params file: " + what + " needs " + std::to_string(n) + " bytes at offset " +
                       std::to_string(pos_) + ", " + std::to_string(b_.size() - pos_) + " left");
  }
  const uint8_t* take(size_t n, const std::string& what) {
    need(n, what);
    const uint8_t* p = b_.data() + pos_;
    pos_ += n;
    return p;
  }
  size_t pos() const { return pos_; }
  bool at_end() const { return pos_ == b_.size(); }

 private:
  const std::vector<uint8_t>& b_;
  const std::string& where_;
  size_t pos_ = 0;
};

Array read_ndarray(Cursor& c, const std::string& where, size_t index) {
  const std::string what = "array " + std::to_string(index);
  uint32_t head = c.get<uint32_t>("an NDArray header");
  std::vector<int64_t> shape;
  if (head == kV1 || head == kV2 || head == kV3) {
    if (head != kV1) {
      int32_t stype = c.get<int32_t>("the storage type");
      if (stype != 0) fail(where, what + ": sparse storage type " + std::to_string(stype) + " is not supported");
    }
    int32_t ndim = c.get<int32_t>("the number of dimensions");
    if (ndim < 0 || ndim > kMaxNdim) fail(where, what + ": corrupt number of dimensions " + std::to_string(ndim));
    for (int i = 0; i < ndim; ++i) {
      int64_t d = c.get<int64_t>("a dimension");
      if (d < 0 || d > kMaxDimension) fail(where, what + ": corrupt dimension " + std::to_string(d));
      shape.push_back(d);
    }
    if (ndim == 0) return Array{DType::f32, {0}, {}};  // MXNet's "none" array: no elements (shape () would be a scalar)
  } else {  // legacy layout: the word just read is ndim, dimensions are uint32
    if (head > static_cast<uint32_t>(kMaxNdim)) fail(where, what + ": not an NDArray (header 0x" + [&] {
      char buf[9]; std::snprintf(buf, sizeof buf, "%08x", head); return std::string(buf); }() + ")");
    for (uint32_t i = 0; i < head; ++i) shape.push_back(c.get<uint32_t>("a dimension"));
    if (head == 0) return Array{DType::f32, {0}, {}};  // MXNet's "none" array: no elements (shape () would be a scalar)
  }
  c.get<int32_t>("the device type");
  c.get<int32_t>("the device id");
  int32_t flag = c.get<int32_t>("the type flag");
  Array a;
  a.shape = shape;
  switch (flag) {
    case 0: a.dtype = DType::f32; break;
    case 1: a.dtype = DType::f64; break;
    case 2: a.dtype = DType::f16; break;
    case 3: a.dtype = DType::u8; break;
    case 4: a.dtype = DType::i32; break;
    case 6: a.dtype = DType::i64; break;
    default: fail(where, what + ": unsupported dtype (MXNet type flag " + std::to_string(flag) + ")");
  }
  const size_t n = checked_tensor_bytes(shape, dtype_size(a.dtype), where + ": " + what + " " + shape_str(shape));
  const uint8_t* p = c.take(n, what + " data " + shape_str(shape));
  a.bytes.assign(p, p + n);
  return a;
}

}  // namespace

std::vector<NamedArray> read_mxnet_params(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  return parse_mxnet_params(bytes, path);
}

std::vector<NamedArray> parse_mxnet_params(const std::vector<uint8_t>& bytes, const std::string& path) {
  Cursor c(bytes, path);
  if (bytes.size() < 8) fail(path, "not an MXNet .params file (too short for the magic)");
  uint64_t magic = c.get<uint64_t>("the magic");
  if (magic != kListMagic) fail(path, "not an MXNet .params file (wrong magic)");
  c.get<uint64_t>("the reserved word");
  uint64_t count = c.get<uint64_t>("the array count");
  // Every array takes at least 4 bytes of header: a count the file cannot hold is refused before reserving.
  if (count > 1000000 || count > bytes.size() / 4) fail(path, "corrupt .params file: " + std::to_string(count) + " arrays in " + std::to_string(bytes.size()) + " bytes");
  std::vector<Array> arrays;
  for (uint64_t i = 0; i < count; ++i) arrays.push_back(read_ndarray(c, path, i));
  uint64_t nnames = c.get<uint64_t>("the name count");
  if (nnames != count && nnames != 0)
    fail(path, "corrupt .params file: " + std::to_string(count) + " arrays but " + std::to_string(nnames) + " names");
  std::vector<NamedArray> out;
  for (uint64_t i = 0; i < count; ++i) {
    std::string name = "array" + std::to_string(i);
    if (nnames) {
      uint64_t len = c.get<uint64_t>("a name length");
      if (len > 4096) fail(path, "corrupt .params file: name length " + std::to_string(len));
      const uint8_t* p = c.take(len, "a name");
      name.assign(reinterpret_cast<const char*>(p), len);
    }
    out.push_back({name, std::move(arrays[i])});
  }
  if (!c.at_end()) fail(path, "corrupt .params file: " + std::to_string(bytes.size() - c.pos()) + " bytes after the names");
  return out;
}

}  // namespace bs
