#include "weights_tools/onnx/onnx_tensors.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "weights_tools/array.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/limits.hpp"

namespace bs::onnx_import {
namespace {

using TP = onnx::TensorProto;

size_t elem_size(int type) {
  switch (type) {
    case TP::FLOAT: case TP::INT32: return 4;
    case TP::FLOAT16: return 2;
    case TP::DOUBLE: case TP::INT64: return 8;
    default: return 0;
  }
}

const char* type_name(int type) {
  switch (type) {
    case TP::FLOAT: return "float32";
    case TP::FLOAT16: return "float16";
    case TP::DOUBLE: return "float64";
    case TP::INT32: return "int32";
    case TP::INT64: return "int64";
    case TP::UINT8: return "uint8";
    case TP::INT8: return "int8";
    case TP::BFLOAT16: return "bfloat16";
    default: return "another type";
  }
}

// The bytes of an external-data tensor: location (relative, inside the model's folder), offset and length.
std::vector<uint8_t> external_bytes(const TP& t, const std::string& base_dir, uint64_t want, const std::string& where) {
  std::string location;
  uint64_t offset = 0, length = want;
  for (const auto& e : t.external_data()) {
    auto number = [&](const std::string& v) {
      if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
        fail(where, "external data " + e.key() + " '" + v.substr(0, 40) + "' is not a whole number");
      return std::stoull(v);
    };
    if (e.key() == "location") location = e.value();
    else if (e.key() == "offset") offset = number(e.value());
    else if (e.key() == "length") length = number(e.value());
  }
  if (location.empty()) fail(where, "external data without a location");
  const std::filesystem::path rel(location);
  bool inside = !rel.is_absolute() && !rel.has_root_name() && !rel.has_root_directory();
  for (const auto& part : rel)
    if (part == "..") inside = false;
  if (!inside) fail(where, "external data '" + location.substr(0, 128) + "' must be a relative path inside the model's folder");
  if (length != want) fail(where, "external data holds " + std::to_string(length) + " bytes, the tensor's shape needs " + std::to_string(want));
  const std::string path = (std::filesystem::path(base_dir) / rel).string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "external data file of " + where + " not found (or not a regular file)");
  const uint64_t have = std::filesystem::file_size(path, ec);
  check_available(checked_add(offset, length, where, "external data"), have, path, where);
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> bytes(length);
  f.seekg(static_cast<std::streamoff>(offset));
  if (!f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(length))) fail(path, "cannot read " + where);
  return bytes;
}

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // little-endian files on a little-endian host
  return v;
}

}  // namespace

int64_t Values::size() const { return integer ? static_cast<int64_t>(ints.size()) : static_cast<int64_t>(floats.size()); }

Values decode(const TP& t, const std::string& base_dir, const std::string& where) {
  Values v;
  v.dims.assign(t.dims().begin(), t.dims().end());
  const int type = t.data_type();
  const size_t es = elem_size(type);
  if (!es) fail(where, std::string("holds ") + type_name(type) + " values; float32, float16, float64, int32 and int64 are supported");
  const uint64_t n = checked_elements(v.dims, where);
  const uint64_t bytes = checked_tensor_bytes(v.dims, es, where);
  v.integer = type == TP::INT32 || type == TP::INT64;
  v.half = type == TP::FLOAT16;
  auto from_bytes = [&](const uint8_t* p) {
    if (v.integer) v.ints.resize(n);
    else v.floats.resize(n);
    for (uint64_t i = 0; i < n; ++i, p += es) {
      switch (type) {
        case TP::FLOAT: v.floats[i] = load<float>(p); break;
        case TP::FLOAT16: v.floats[i] = half_to_float(load<uint16_t>(p)); break;
        case TP::DOUBLE: v.floats[i] = static_cast<float>(load<double>(p)); break;
        case TP::INT32: v.ints[i] = load<int32_t>(p); break;
        default: v.ints[i] = load<int64_t>(p); break;
      }
    }
  };
  if (t.data_location() == TP::EXTERNAL) {
    const std::vector<uint8_t> b = external_bytes(t, base_dir, bytes, where);
    from_bytes(b.data());
    return v;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != bytes)
      fail(where, "raw_data holds " + std::to_string(t.raw_data().size()) + " bytes, the shape " + shape_str(v.dims) + " of " +
                      type_name(type) + " needs " + std::to_string(bytes));
    from_bytes(reinterpret_cast<const uint8_t*>(t.raw_data().data()));
    return v;
  }
  auto count = [&](int have, const char* field) {
    if (static_cast<uint64_t>(have) != n)
      fail(where, std::string(field) + " holds " + std::to_string(have) + " values, the shape " + shape_str(v.dims) + " needs " + std::to_string(n));
  };
  switch (type) {
    case TP::FLOAT:
      count(t.float_data_size(), "float_data");
      v.floats.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TP::FLOAT16:  // the bits of each value in the low 16 bits of an int32_data entry
      count(t.int32_data_size(), "int32_data");
      for (int32_t bits : t.int32_data()) v.floats.push_back(half_to_float(static_cast<uint16_t>(bits)));
      break;
    case TP::DOUBLE:
      count(t.double_data_size(), "double_data");
      for (double d : t.double_data()) v.floats.push_back(static_cast<float>(d));
      break;
    case TP::INT32:
      count(t.int32_data_size(), "int32_data");
      v.ints.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    default:
      count(t.int64_data_size(), "int64_data");
      v.ints.assign(t.int64_data().begin(), t.int64_data().end());
      break;
  }
  return v;
}

}  // namespace bs::onnx_import
