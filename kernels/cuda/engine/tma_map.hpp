// Tensor maps for the TMA-fed wgmma convolutions (gemm_wgmma_tma.cuh): the driver's cuTensorMapEncodeIm2col and
// cuTensorMapEncodeTiled, reached through the runtime's driver entry points (no link against libcuda). Host code.
#pragma once
#include <cuda.h>

#include <string>

namespace bs::cuda::wg {

// An NHWC tensor of 16-bit values (n, h, w, c: c the channels stored a pixel) read as im2col boxes of `channels`
// channels x `pixels` output pixels of a convolution (pads ph, pw; strides sh, sw; the output oh x ow), in the 32-byte
// swizzle (16 channels) or the 128-byte one (wide: 64 channels). The box's origin is the window's top-left input position; a tap's (kx dw, ky dh) go as the instruction's
// offsets. Returns "" or what was wrong.
struct Im2colGeometry {
  int n, h, w, c, oh, ow, ph, pw, sh, sw, channels, pixels;
};
std::string encode_im2col_nhwc16(CUtensorMap* map, const void* base, const Im2colGeometry& g, bool wide);
// Whether the geometry is one encode_im2col_nhwc16 takes (the corners' 8-bit range for 4-D maps, strides up to 8, the
// rows' bytes in multiples of 16), and the taps' offsets (up to max_offset) their 8 bits: "" or the reason.
std::string im2col_limits(const Im2colGeometry& g, int max_offset);

// A (g, rows, k) tensor of 16-bit values, k contiguous (k and rows x k in multiples of 8 values), read as boxes of
// 64 x box_rows x 1 in the 128-byte swizzle; rows past `rows` in a box read as zeros. Returns "" or what was wrong.
std::string encode_rows16(CUtensorMap* map, const void* base, int groups, int rows, int k, int box_rows);

}  // namespace bs::cuda::wg
