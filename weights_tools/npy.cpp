#include "weights_tools/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/limits.hpp"

namespace bs {
namespace {

const char kMagic[] = "\x93NUMPY";

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct Header {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  bool has_descr = false, has_fortran = false, has_shape = false;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& s, const std::string& where) : s_(s), where_(where) {}

  Header parse() {
    Header h;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      std::string key = quoted();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"') bad("structured dtypes are not supported (descr is not a string)");
        h.descr = quoted();
        h.has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran = boolean();
        h.has_fortran = true;
      } else if (key == "shape") {
        h.shape = tuple();
        h.has_shape = true;
      } else {
        bad("unknown header key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',') ++pos_;
    }
    if (!h.has_descr || !h.has_fortran || !h.has_shape)
      bad("header lacks one of 'descr', 'fortran_order', 'shape'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) { fail(where_, "corrupt .npy header: " + what); }
  char peek() { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() { while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_; }
  void expect(char c) {
    skip_ws();
    if (peek() != c) bad(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
    ++pos_;
  }
  std::string quoted() {
    skip_ws();
    char q = peek();
    if (q != '\'' && q != '"') bad("expected a quoted string at offset " + std::to_string(pos_));
    size_t end = s_.find(q, pos_ + 1);
    if (end == std::string::npos) bad("unterminated string");
    std::string out = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.compare(pos_, 4, "True") == 0) { pos_ += 4; return true; }
    if (s_.compare(pos_, 5, "False") == 0) { pos_ += 5; return false; }
    bad("fortran_order is neither True nor False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') { ++pos_; break; }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) bad("shape holds a non-integer");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        v = v * 10 + (peek() - '0');
        if (v > (int64_t{1} << 40)) bad("shape dimension too large");
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 longs
      dims.push_back(v);
      skip_ws();
      if (peek() == ',') ++pos_;
    }
    return dims;
  }

  const std::string& s_;
  const std::string& where_;
  size_t pos_ = 0;
};

struct Descr {
  DType dtype;
  bool big_endian;
};

Descr parse_descr(const std::string& d, const std::string& where) {
  if (d.size() < 3) fail(where, "unsupported dtype '" + d + "'");
  char order = d[0];
  std::string code = d.substr(1);
  Descr out{DType::f32, order == '>'};
  if (order != '<' && order != '>' && order != '|' && order != '=')
    fail(where, "unsupported dtype '" + d + "' (unknown byte order)");
  if (code == "f4") out.dtype = DType::f32;
  else if (code == "f8") out.dtype = DType::f64;
  else if (code == "f2") out.dtype = DType::f16;
  else if (code == "i4") out.dtype = DType::i32;
  else if (code == "i8") out.dtype = DType::i64;
  else if (code == "u1") out.dtype = DType::u8;
  else
    fail(where, "unsupported dtype '" + d + "' (supported: float32, float64, float16, int32, int64, uint8)");
  return out;
}

}  // namespace

NpyHeader parse_npy_header(const uint8_t* data, size_t size, const std::string& where) {
  if (size < 10 || std::memcmp(data, kMagic, 6) != 0) fail(where, "not a .npy file (wrong magic)");
  int major = data[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = data[8] | static_cast<size_t>(data[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) fail(where, "truncated .npy header");
    header_len = data[8] | static_cast<size_t>(data[9]) << 8 | static_cast<size_t>(data[10]) << 16 |
                 static_cast<size_t>(data[11]) << 24;
    header_start = 12;
  } else {
    fail(where, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(data[7]));
  }
  if (header_start + header_len > size) fail(where, "truncated .npy header");
  std::string header(reinterpret_cast<const char*>(data + header_start), header_len);
  Header h = HeaderParser(header, where).parse();
  return {h.descr, h.fortran, h.shape, header_start + header_len};
}

size_t npy_header_end(const uint8_t* data, size_t size) {
  if (size < 12 || std::memcmp(data, kMagic, 6) != 0) return 0;
  if (data[6] == 1) return 10 + (data[8] | static_cast<size_t>(data[9]) << 8);
  if (data[6] == 2 || data[6] == 3)
    return 12 + (data[8] | static_cast<size_t>(data[9]) << 8 | static_cast<size_t>(data[10]) << 16 | static_cast<size_t>(data[11]) << 24);
  return 0;
}

size_t npy_descr_size(const std::string& descr, const std::string& where) {
  return dtype_size(parse_descr(descr, where).dtype);
}

Array parse_npy(const uint8_t* data, size_t size, const std::string& where) {
  const NpyHeader h = parse_npy_header(data, size, where);
  if (h.descr == "|O")
    fail(where, "holds Python objects (dtype '|O', a pickle); load it with the command made for it, e.g. import-bvlc");
  Descr d = parse_descr(h.descr, where);

  Array a;
  a.dtype = d.dtype;
  a.shape = h.shape;
  const size_t es = dtype_size(a.dtype);
  const size_t nbytes = checked_tensor_bytes(a.shape, es, where);  // before anything is allocated
  const size_t data_start = h.data_offset;
  if (size - data_start < nbytes)
    fail(where, "truncated .npy data: shape " + shape_str(a.shape) + " " + dtype_name(a.dtype) + " needs " +
                    std::to_string(nbytes) + " bytes, file has " + std::to_string(size - data_start));
  if (size - data_start > nbytes)
    fail(where, "corrupt .npy: " + std::to_string(size - data_start - nbytes) + " bytes after the data");
  a.bytes.assign(data + data_start, data + data_start + nbytes);
  if (d.big_endian && es > 1)
    for (size_t i = 0; i < nbytes; i += es) std::reverse(a.bytes.begin() + i, a.bytes.begin() + i + es);
  if (h.fortran && a.shape.size() > 1) a.bytes = fortran_to_c_order(a.bytes, a.shape, es);
  return a;
}

Array read_npy(const std::string& path) {
  std::vector<uint8_t> bytes = read_file(path);
  return parse_npy(bytes.data(), bytes.size(), path);
}

std::vector<uint8_t> encode_npy(const Array& a, int version) {
  static const char* codes[] = {"<f4", "<f8", "<f2", "<i4", "<i8", "|u1"};
  const std::string shape = shape_str(a.shape);  // NumPy's repr: "(3,)", "(2, 3)", "()"
  std::string dict = std::string("{'descr': '") + codes[static_cast<int>(a.dtype)] +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  if (version == 0) version = dict.size() + 11 < 65536 ? 1 : 2;
  const size_t prefix = version == 1 ? 10 : 12;
  size_t total = prefix + dict.size() + 1;
  size_t pad = (64 - total % 64) % 64;  // data starts on a 64-byte boundary, as NumPy writes it
  dict.append(pad, ' ');
  dict += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(static_cast<uint8_t>(version));
  out.push_back(0);
  const size_t hl = dict.size();
  out.push_back(hl & 0xff);
  out.push_back((hl >> 8) & 0xff);
  if (version != 1) {
    out.push_back((hl >> 16) & 0xff);
    out.push_back((hl >> 24) & 0xff);
  }
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), a.bytes.begin(), a.bytes.end());
  return out;
}

void write_npy(const std::string& path, const Array& a) {
  std::vector<uint8_t> bytes = encode_npy(a);
  atomic_write_bytes(path, bytes.data(), bytes.size());
}

std::vector<float> read_npy_float(const std::string& path, const std::vector<int64_t>& expected) {
  Array a = read_npy(path);
  if (!expected.empty() && a.shape != expected)
    fail(path, "shape " + shape_str(expected) + " expected, file has " + shape_str(a.shape));
  return a.to_float();
}

}  // namespace bs
