#include "kernels/cuda/engine/tma_map.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace bs::cuda::wg {
namespace {

using EncodeIm2col = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*, const int*,
                                  const int*, cuuint32_t, cuuint32_t, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                 CUtensorMapFloatOOBfill);

template <class F>
F entry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess || q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<F>(fn);
}

std::string result(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return "";
  return std::string(what) + " failed (CUresult " + std::to_string(static_cast<int>(r)) + ")";
}

// The box's upper corner in one dimension: its last origin, (out - 1) s - pad, as an offset from the last row or column.
int upper(int in, int out, int pad, int stride) { return (out - 1) * stride - pad - (in - 1); }

}  // namespace

std::string im2col_limits(const Im2colGeometry& g, int max_offset) {
  const auto corner = [](int v) { return v >= -128 && v <= 127; };
  if (!corner(-g.pw) || !corner(-g.ph) || !corner(upper(g.w, g.ow, g.pw, g.sw)) || !corner(upper(g.h, g.oh, g.ph, g.sh)))
    return "the TMA im2col box's corners (padding, and the window's reach past the input) take -128 .. 127";
  if (g.sh < 1 || g.sw < 1 || g.sh > 8 || g.sw > 8) return "the TMA im2col traversal takes strides of 1 to 8";
  if (max_offset > 255) return "the TMA im2col offsets of a 4-D tensor take windows up to 256 rows and columns";
  if (g.c % 8 != 0) return "the TMA im2col rows take a multiple of 8 channels as stored (16 bytes)";
  if (g.channels > 256 || g.pixels > 1024) return "the TMA im2col box takes up to 256 channels and 1,024 pixels";
  return "";
}

std::string encode_im2col_nhwc16(CUtensorMap* map, const void* base, const Im2colGeometry& g, bool wide) {
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) return "the TMA im2col input is not 16-byte aligned";
  if (std::string lim = im2col_limits(g, 0); !lim.empty()) return lim;
  static const EncodeIm2col encode = entry<EncodeIm2col>("cuTensorMapEncodeIm2col");
  if (!encode) return "the driver has no cuTensorMapEncodeIm2col";
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(g.c), static_cast<cuuint64_t>(g.w), static_cast<cuuint64_t>(g.h), static_cast<cuuint64_t>(g.n)};
  const cuuint64_t row = 2ull * static_cast<cuuint64_t>(g.c);
  const cuuint64_t strides[3] = {row, row * static_cast<cuuint64_t>(g.w), row * static_cast<cuuint64_t>(g.w) * static_cast<cuuint64_t>(g.h)};
  const int lower[2] = {-g.pw, -g.ph}, upper_c[2] = {upper(g.w, g.ow, g.pw, g.sw), upper(g.h, g.oh, g.ph, g.sh)};
  const cuuint32_t elem[4] = {1, static_cast<cuuint32_t>(g.sw), static_cast<cuuint32_t>(g.sh), 1};
  return result(encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, const_cast<void*>(base), dims, strides, lower, upper_c,
                       static_cast<cuuint32_t>(g.channels), static_cast<cuuint32_t>(g.pixels), elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                       wide ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                "cuTensorMapEncodeIm2col");
}

std::string encode_rows16(CUtensorMap* map, const void* base, int groups, int rows, int k, int box_rows) {
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) return "the TMA weights are not 16-byte aligned";
  if (k % 8 != 0) return "the TMA weight rows take a multiple of 8 values";
  if (box_rows < 1 || box_rows > 256) return "the TMA weight box takes 1 to 256 rows";
  static const EncodeTiled encode = entry<EncodeTiled>("cuTensorMapEncodeTiled");
  if (!encode) return "the driver has no cuTensorMapEncodeTiled";
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(groups)};
  const cuuint64_t strides[2] = {2ull * static_cast<cuuint64_t>(k), 2ull * static_cast<cuuint64_t>(k) * static_cast<cuuint64_t>(rows)};
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(box_rows), 1}, elem[3] = {1, 1, 1};
  return result(encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 3, const_cast<void*>(base), dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                       CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                "cuTensorMapEncodeTiled");
}

}  // namespace bs::cuda::wg
