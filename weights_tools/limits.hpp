// Overflow-safe size arithmetic and the limits every reader enforces before it allocates anything.
//
// A file declares sizes (a shape, a header length, a member's uncompressed size, a string length); batchscope
// computes what they imply with these checked helpers, compares the result with what the file can actually hold,
// and only then allocates. One tensor read from a file may not exceed max_tensor_bytes() (16 GiB unless
// --max-tensor-bytes or BATCHSCOPE_MAX_TENSOR_BYTES raises or lowers it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bs {

constexpr uint64_t kDefaultMaxTensorBytes = uint64_t{16} << 30;
constexpr int64_t kMaxDimension = int64_t{1} << 40;  // any one dimension of a tensor read from a file
constexpr int kMaxNdim = 32;                         // NumPy's limit is 64; no weight file needs more than 8
constexpr int kMaxJsonDepth = 64;                    // model.json, MXNet symbols, tuning tables

// The limit in force: set_max_tensor_bytes() if called, else $BATCHSCOPE_MAX_TENSOR_BYTES, else 16 GiB.
uint64_t max_tensor_bytes();
void set_max_tensor_bytes(uint64_t bytes);

// "123", "512K", "64M", "16G", "1T" (binary multiples; "16GiB"/"16GB" also read as 16 GiB). Throws naming `flag`.
uint64_t parse_byte_size(const std::string& text, const std::string& flag);
std::string byte_size_str(uint64_t bytes);  // "16 GiB", "1.5 MiB", "999 bytes"

// a * b and a + b, or an Error "<where>: <what> overflows 64 bits".
uint64_t checked_mul(uint64_t a, uint64_t b, const std::string& where, const std::string& what);
uint64_t checked_add(uint64_t a, uint64_t b, const std::string& where, const std::string& what);

// The element count of `shape`; negative dimensions, dimensions above kMaxDimension, more than kMaxNdim
// dimensions and products that overflow are Errors naming `where`.
uint64_t checked_elements(const std::vector<int64_t>& shape, const std::string& where);

// Bytes of a tensor of `shape` with `elem_size`-byte elements: checked_elements, times elem_size, at most
// max_tensor_bytes() (else an Error that says how to raise the limit).
uint64_t checked_tensor_bytes(const std::vector<int64_t>& shape, uint64_t elem_size, const std::string& where);

// Enforces the tensor limit on a byte count computed elsewhere.
void check_tensor_limit(uint64_t bytes, const std::string& where, const std::string& what);

// Throws "<where>: truncated: <what> needs N bytes, only M left" unless need <= have.
void check_available(uint64_t need, uint64_t have, const std::string& where, const std::string& what);

}  // namespace bs
