#include "weights_tools/limits.hpp"

#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "weights_tools/error.hpp"

namespace bs {
namespace {

std::atomic<uint64_t> g_limit{0};  // 0: not set by a flag

uint64_t limit_from_env() {
  const char* v = std::getenv("BATCHSCOPE_MAX_TENSOR_BYTES");
  if (!v || !*v) return kDefaultMaxTensorBytes;
  return parse_byte_size(v, "BATCHSCOPE_MAX_TENSOR_BYTES");
}

}  // namespace

uint64_t max_tensor_bytes() {
  const uint64_t set = g_limit.load();
  if (set) return set;
  static const uint64_t env = limit_from_env();
  return env;
}

void set_max_tensor_bytes(uint64_t bytes) { g_limit.store(bytes ? bytes : 1); }

uint64_t parse_byte_size(const std::string& text, const std::string& flag) {
  // A flag's value is a usage mistake (exit 2); the environment variable's, a failure like a bad file's.
  const bool is_flag = flag.rfind("--", 0) == 0;
  auto bad = [&] {
    const std::string what = "expected a byte count such as 1073741824, 512M or 16G, found '" + text + "'";
    if (is_flag) usage_fail(flag, what);
    fail(flag, what);
  };
  size_t i = 0;
  uint64_t v = 0;
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) bad();
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (v > (UINT64_MAX - d) / 10) fail(flag, "'" + text + "' is too large");
    v = v * 10 + d;
    ++i;
  }
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.back() == 'B') unit.pop_back();        // "16GB" = "16G"
  if (unit.size() == 2 && unit.back() == 'I') unit.pop_back();        // "16GIB" = "16G"
  int shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K") shift = 10;
  else if (unit == "M") shift = 20;
  else if (unit == "G") shift = 30;
  else if (unit == "T") shift = 40;
  else bad();
  if (v == 0) fail(flag, "must be at least 1 byte, found '" + text + "'");
  if (shift && v > (UINT64_MAX >> shift)) fail(flag, "'" + text + "' is too large");
  return v << shift;
}

std::string byte_size_str(uint64_t b) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (b < 1024) return std::to_string(b) + " bytes";
  double v = static_cast<double>(b);
  int u = -1;
  while (v >= 1024 && u < 5) { v /= 1024; ++u; }
  char buf[32];
  if (v == static_cast<double>(static_cast<uint64_t>(v))) std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

uint64_t checked_mul(uint64_t a, uint64_t b, const std::string& where, const std::string& what) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(where, what + " overflows 64 bits (" + std::to_string(a) + " x " + std::to_string(b) + ")");
  return r;
}

uint64_t checked_add(uint64_t a, uint64_t b, const std::string& where, const std::string& what) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(where, what + " overflows 64 bits (" + std::to_string(a) + " + " + std::to_string(b) + ")");
  return r;
}

uint64_t checked_elements(const std::vector<int64_t>& shape, const std::string& where) {
  if (shape.size() > static_cast<size_t>(kMaxNdim))
    fail(where, std::to_string(shape.size()) + " dimensions (at most " + std::to_string(kMaxNdim) + " are read)");
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(where, "negative dimension " + std::to_string(d));
    if (d > kMaxDimension) fail(where, "dimension " + std::to_string(d) + " is above the limit of 2^40");
  }
  // The product of the non-zero dimensions must fit too: code that walks strides multiplies them even when
  // another dimension is 0 (the fuzzer found (0, 2^40, ...) overflowing a Fortran-order stride).
  bool empty = false;
  for (int64_t d : shape) {
    if (d == 0) { empty = true; continue; }
    uint64_t r;
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &r) || r > static_cast<uint64_t>(INT64_MAX))
      fail(where, "shape's element count overflows 64 bits");
    n = r;
  }
  return empty ? 0 : n;
}

void check_tensor_limit(uint64_t bytes, const std::string& where, const std::string& what) {
  const uint64_t lim = max_tensor_bytes();
  if (bytes > lim)
    fail(where, what + " would take " + byte_size_str(bytes) + " (" + std::to_string(bytes) + " bytes), above the limit of " +
                    byte_size_str(lim) + " per tensor (raise it with --max-tensor-bytes or BATCHSCOPE_MAX_TENSOR_BYTES)");
}

uint64_t checked_tensor_bytes(const std::vector<int64_t>& shape, uint64_t elem_size, const std::string& where) {
  const uint64_t n = checked_elements(shape, where);
  uint64_t bytes;
  if (__builtin_mul_overflow(n, elem_size, &bytes)) fail(where, "shape's byte count overflows 64 bits");
  check_tensor_limit(bytes, where, "a tensor of " + std::to_string(n) + " elements");
  return bytes;
}

void check_available(uint64_t need, uint64_t have, const std::string& where, const std::string& what) {
  if (need > have)
    fail(where, "truncated: " + what + " needs " + std::to_string(need) + " bytes, only " + std::to_string(have) + " left");
}

}  // namespace bs
