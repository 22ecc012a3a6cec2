#include "kernels/plan/menus.hpp"

#include <cstdio>

#include "weights_tools/error.hpp"

namespace bs {
namespace {

int parse_version(const std::string& text, const std::vector<MenuEntry>& menu, const std::string& flag) {
  if (text == "auto" || text == "0") return kAutoVariant;
  const std::string t = !text.empty() && (text[0] == 'v' || text[0] == 'V') ? text.substr(1) : text;
  std::string all;
  for (const MenuEntry& v : menu) {
    if (t == std::to_string(v.number) || text == v.name) return v.number;
    all += ", " + std::to_string(v.number) + " " + v.name;
  }
  fail(flag, "unknown variant '" + text + "' (choose auto or one of:" + all.substr(1) + ")");
}

const MenuEntry& entry(const std::vector<MenuEntry>& menu, int number, const char* what) {
  for (const MenuEntry& e : menu)
    if (e.number == number) return e;
  fail(what, "no version " + std::to_string(number));
}

}  // namespace

const std::vector<MenuEntry>& conv_menu() {
  static const std::vector<MenuEntry> v = {
      {1, "direct", "one thread per output, weights in global memory", "any"},
      {2, "smem-tile", "16x16 output tile per block, input tile staged in shared memory", "any (input tile <= 96 rows)"},
      {3, "constant", "weights in __constant__ memory, chunks of filters when over 64 KiB", "any"},
      {4, "texture", "weights through a texture object (read-only cache)", "any (weights < 2^27)"},
      {5, "unroll-gemm", "im2col kernel + tiled shared-memory SGEMM", "any"},
      {6, "implicit-gemm", "unroll fused into a register-tiled SGEMM (64x64 tiles, 4x4 per thread)", "any"},
      {7, "specialised", "compile-time shapes, weights as constant-memory FFMA operands", "ECE 408 conv1, conv2"},
      {8, "fused", "v7 + bias + activation + 2x2 max pool in one kernel", "ECE 408 conv1, conv2"},
      {9, "tiled-spec", "compile-time shapes, weights in shared memory, PX x MQ register tile per thread", "ECE 408 conv1, conv2"},
      {10, "tiled-fused", "v9 + bias + activation + 2x2 max pool in one kernel", "ECE 408 conv1, conv2"},
      {11, "tc-3xtf32", "v10, with conv2's shape on tensor cores: 3xTF32 implicit GEMM (FP32-accurate)", "ECE 408 conv1, conv2"},
      {12, "gemm-fma", "GEMM engine: implicit GEMM, 128x128x32 tiles, 8x8 FP32 FFMA outputs per thread, 3-stage cp.async, "
                       "split-K, bias + activation fused", "any"},
      {13, "gemm-3xtf32", "GEMM engine on the tensor cores, 3xTF32 (FP32-accurate: the tensor cores' partial sums promoted to "
                          "FP32 every two k-tiles), 128x64x32 tiles, 4 stages, split-K, bias + activation fused", "any"},
      {14, "gemm-3xtf32-64", "v13 with 64x64x32 tiles: more blocks for small layers and batches", "any"},
      {15, "gemm-3xtf32-128", "v13 with 128x128x32 tiles, one block per SM (slower than v13: kept as a measured point)", "any"},
      {16, "gemm-tf32", "GEMM engine on the tensor cores, one TF32 product (--precision tf32), 128x128x32 tiles, 4 stages, "
                        "split-K, bias + activation fused", "any", "tf32"},
      {17, "gemm-tf32-128x64", "v16 with 128x64x32 tiles (two blocks per SM)", "any", "tf32"},
      {18, "gemm-tf32-64", "v16 with 64x64x32 tiles: more blocks for small layers and batches", "any", "tf32"},
      {19, "gemm-half", "GEMM engine on FP16/BF16 tensor cores (--precision fp16 or bf16): NHWC 16-bit activations, "
                        "channel pairs gathered as 32-bit words, 128 pixels x 128 filters x 64 k tiles, FP32 accumulation, "
                        "split-K, bias + activation fused", "any (groups: an even channel count per group)", "fp16/bf16"},
      {20, "gemm-half-128x64", "v19 with 128 pixels x 64 filters per block (two blocks per SM)", "any (as v19)", "fp16/bf16"},
      {21, "gemm-half-64", "v19 with 64x64 tiles: more blocks for small layers and batches", "any (as v19)", "fp16/bf16"},
      {22, "spec-half", "compile-time shapes on FP16/BF16 tensor cores, m16n8k16 tiles that fit them: conv1 reads the FP32 "
                        "input itself (first layer) and fuses activation + 2x2 max pool, conv2 fuses the activation",
       "ECE 408 conv1, conv2", "fp16/bf16"},
      {23, "wgmma-tf32", "the GEMM engine's Hopper mainloop (--precision tf32): wgmma from 128-byte-swizzled shared memory, "
                         "128 pixels x 128 filters x 32 k per block, 5 cp.async stages, A gathered from NCHW 4 bytes at a time, split-K, "
                         "bias + activation fused",
       "any (compute capability 9.0, sm_90a build)", "tf32"},
      {24, "wgmma-tf32-192", "v23 with 128 pixels x 192 filters, 4 stages", "any (as v23)", "tf32"},
      {25, "wgmma-tf32-96", "v23 with 128 pixels x 96 filters", "any (as v23)", "tf32"},
      {26, "wgmma-nhwc", "v23 reading an NHWC copy of its input (a transpose pass into the workspace; channels padded to 4 "
                         "with one group) in 16-byte copies of 4 channels", "any (as v23; groups: a multiple of 4 channels each)", "tf32"},
      {27, "wgmma-nhwc-192", "v26 with 128 pixels x 192 filters, 4 stages", "any (as v26)", "tf32"},
      {28, "wgmma-nhwc-96", "v26 with 128 pixels x 96 filters", "any (as v26)", "tf32"},
      {29, "wgmma-nhwc-256", "v26 with 256 pixels x 128 filters per block (two 64-row wgmmas per warpgroup: half the weight "
                             "reads per product), 4 stages", "any (as v26)", "tf32"},
      {30, "wgmma-nhwc-256x96", "v29 with 256 pixels x 96 filters", "any (as v26)", "tf32"},
      {31, "wgmma-nhwc-4wg", "v26 with 256 pixels x 128 filters on four warpgroups (512 threads: more warps to issue the "
                             "loaders from)", "any (as v26)", "tf32"},
      {32, "wgmma-nhwc-3wg", "v26 with 192 pixels x 128 filters on three warpgroups", "any (as v26)", "tf32"},
      {33, "wgmma-nhwc-4wg-96", "v31 with 256 pixels x 96 filters", "any (as v26)", "tf32"},
      {34, "wgmma-3xtf32", "FP32-accurate on the wgmma mainloop: v26's NHWC loaders with the input copy and the weights "
                           "split into two TF32 parts, three products per product (3xTF32), 192 pixels x 96 filters on three "
                           "warpgroups, 3 stages", "any (as v26)"},
      {35, "wgmma-3xtf32-128", "v34 with 128 x 128 tiles on two warpgroups", "any (as v26)"},
      {36, "wgmma-3xtf32-64", "v34 with 192 pixels x 64 filters", "any (as v26)"},
  };
  return v;
}

const std::vector<MenuEntry>& fc_menu() {
  static const std::vector<MenuEntry> v = {
      {1, "naive", "one thread per output, dot product over the inputs", "any"},
      {2, "tiled", "tiled shared-memory SGEMM, split-K when the grid would be small", "any"},
      {3, "texture", "one warp per output, weights through a texture object", "any"},
      {4, "warp", "one warp per output row for up to 8 images, 16-byte read-only loads", "any"},
      {5, "stream", "weight streaming for small batches: each weight read once, 4 16-byte loads in flight per lane, "
                    "bias + activation fused", "any"},
      {6, "gemm-fma", "GEMM engine, 128x128x32 tiles, FP32 FFMA, split-K, bias + activation fused", "any"},
      {7, "gemm-3xtf32", "GEMM engine on the tensor cores, 3xTF32 (FP32-accurate), 128x128x32 tiles", "any"},
      {8, "gemm-3xtf32-64", "v7 with 64x64x32 tiles, for mid-sized batches", "any"},
      {9, "gemm-3xtf32-128x64", "v7 with 128x64x32 tiles (warp 32x32), 4 stages, two blocks per SM", "any"},
      {10, "gemm-tf32", "GEMM engine on the tensor cores, one TF32 product (--precision tf32), 128x128x32 tiles", "any", "tf32"},
      {11, "gemm-tf32-64", "v10 with 64x64x32 tiles, for mid-sized batches", "any", "tf32"},
      {12, "gemm-half", "GEMM engine on FP16/BF16 tensor cores (--precision fp16 or bf16), weights permuted to the NHWC "
                        "flattening once, 128x128 tiles, split-K, bias + activation fused", "any", "fp16/bf16"},
      {13, "gemm-half-64", "v12 with 64x64 tiles, for small and mid-sized batches", "any", "fp16/bf16"},
  };
  return v;
}

const MenuEntry& conv_entry(int number) { return entry(conv_menu(), number, "--conv-variant"); }
const MenuEntry& fc_entry(int number) { return entry(fc_menu(), number, "--fc-variant"); }
int parse_conv_variant(const std::string& text, const std::string& flag) { return parse_version(text, conv_menu(), flag); }
int parse_fc_variant(const std::string& text, const std::string& flag) { return parse_version(text, fc_menu(), flag); }

const std::vector<Policy>& cudnn_algo_policies() {
  static const std::vector<Policy> v = {
      {"fastest", "cuDNN's fastest FP32 (FMA-math) algorithm, FFT and Winograd included (their rounding differs: up to "
                  "8e-4 relative measured on AlexNet conv2)"},
      {"exact", "only the GEMM and direct algorithms, which agree with cpu-ref to FP32 rounding"},
  };
  return v;
}

const std::vector<Policy>& precision_menu() {
  static const std::vector<Policy> v = {
      {"fp32", "FP32 storage and FP32-accurate arithmetic (3xTF32 on the tensor cores counts as FP32: held to 1e-5 per "
               "layer, 1e-4 end to end); every backend"},
      {"tf32", "FP32 storage, convolution and fully connected products in TF32 on the tensor cores (operands rounded to "
               "10 mantissa bits), FP32 accumulation: 2e-3 per layer, 5e-3 end to end; cuda (v16-v18, fc v10-v11; fc v5 "
               "stays the memory-bound path at <= 4 images) and cudnn (tensor-op math, cuBLAS TF32)"},
      {"fp16", "FP16 storage between layers (NHWC, converted on the device after the FP32 input copy, or on the host "
               "before it with --input-precision fp16; weights converted once), products on the FP16 tensor cores with FP32 accumulation, the other layers computed in FP32 from "
               "FP16; an activation beyond 65504 is reported as an overflow (cuda: naming the layer); cuda (conv "
               "v19-v22, fc v12-v13) and cudnn (packed NHWC half tensors, tensor-op math, cublasGemmEx with FP32 "
               "compute)"},
      {"bf16", "as fp16 with bfloat16 (8 exponent bits: FP32's range, 8 significant bits); cuda (conv v19-v22, fc "
               "v12-v13) and cudnn"},
  };
  return v;
}

void check_precision(const std::string& precision, const std::string& flag) {
  if (precision == "fp32" || precision == "tf32" || precision == "fp16" || precision == "bf16") return;
  fail(flag, "unknown precision '" + precision + "' (expected fp32, tf32, fp16 or bf16)");
}

void check_input_precision(const std::string& input, const std::string& precision) {
  if (input == "fp32" || input == "u8") return;  // u8: widened to FP32 on the device, whatever the layers compute in
  if (input != "fp16" && input != "bf16")
    fail("--input-precision", "unknown precision '" + input + "' (expected fp32, u8, fp16 or bf16)");
  if (input != precision)
    fail("--input-precision", input + " needs --precision " + input + " (the input is copied as the type the first layer computes in; "
                                      "found --precision " + precision + ")");
}

bool is_half_precision(const std::string& precision) { return precision == "fp16" || precision == "bf16"; }

// End to end (relative L2 of the logits against cpu-ref). fp32: FP32 rounding through a network stays near 1e-6;
// 1e-4 leaves room for cuDNN's Winograd/FFT. tf32: operands rounded to 11 significant bits, relative error up to
// 2^-11 each and about 2.8e-4 RMS per product; a dot product of many terms of mixed sign keeps that RMS relative
// error (4e-4 per layer measured in the test table, held to 2e-3), and eight layers in a row add up to about
// 1e-3 (sqrt(8) x 4e-4); 5e-3 leaves a factor of 4 to 5 (experiments/precision-tf32.md has the measured values).
// fp16: every activation and weight rounded to 11 significant bits (relative 2^-11 = 4.9e-4 at most, 2.8e-4 RMS)
// at every layer boundary as well as in the products, so about twice tf32's error per layer; 1e-2 end to end.
// bf16: 8 significant bits, 8x fp16's rounding; 5e-2. experiments/precision-half.md has the measured values.
double precision_tolerance(const std::string& precision) {
  if (precision == "tf32") return 5e-3;
  if (precision == "fp16") return 1e-2;
  if (precision == "bf16") return 5e-2;
  return 1e-4;
}

bool variant_allowed(const MenuEntry& e, bool conv, const std::string& precision) {
  if (std::string(e.precision) == "fp16/bf16") return is_half_precision(precision);
  return precision == e.precision || (precision == "tf32" && !conv && e.number == 5);
}

void check_variant_precision(int number, bool conv, const std::string& precision, const std::string& flag) {
  if (number == kAutoVariant) return;
  const MenuEntry& e = conv ? conv_entry(number) : fc_entry(number);
  if (!variant_allowed(e, conv, precision))
    fail(flag, "v" + std::to_string(number) + " computes in " + e.precision + "; with --precision " + precision +
                   " choose auto or one of " + allowed_variants(conv, precision));
}

std::string allowed_variants(bool conv, const std::string& precision) {
  std::string s;
  for (const MenuEntry& e : conv ? conv_menu() : fc_menu())
    if (variant_allowed(e, conv, precision)) s += (s.empty() ? "v" : ", v") + std::to_string(e.number);
  return s;
}

const char* conv_auto_heuristic() {
  return "v11 where it is compiled for the shape (ECE 408); else v14 when v13's 128x64 tiles would give fewer blocks than "
         "the GPU has multiprocessors or its 64-row tiles waste fewer filter rows (192 per group), else v13";
}
const char* fc_auto_heuristic() {
  return "v5 (stream) up to 4 images, v8 up to 256, else v7";
}
const char* conv_auto_heuristic_tf32() {
  return "v33 (wgmma) where it runs (compute capability 9.0) and its 256 x 96 tiles fill two waves of the GPU; else v18 where "
         "the fp32 heuristic would take v14, else v17 (v16's 128x128 tiles were 1.2-1.7x slower on the H100)";
}
const char* fc_auto_heuristic_tf32() {
  return "v5 (stream, memory-bound) up to 4 images, v11 up to 256, else v10";
}
const char* conv_auto_heuristic_half() {
  return "v22 where it is compiled for the shape (ECE 408); else v21 when v20's tiles would give fewer blocks than two waves "
         "of the GPU, else v20";
}
const char* fc_auto_heuristic_half() { return "v13 up to 256 images, else v12"; }

std::string menus_text() {
  std::string s;
  auto line = [&](const std::string& a, const std::string& b, const std::string& c) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "  %-5s %-16s ", a.c_str(), b.c_str());
    s += buf + c + "\n";
  };
  auto menu = [&](const char* title, const std::vector<MenuEntry>& m, const char* heuristic) {
    s += title;
    for (const MenuEntry& e : m)
      line("v" + std::to_string(e.number), e.name, std::string(e.summary) + " [" + e.shapes + "; " + e.precision + "]");
    line("auto", "(default)", std::string("per layer and batch size: the tuning table's choice (batchscope tune), else ") + heuristic);
    s += "\n";
  };
  menu("Convolution, --conv-variant (backend cuda)\n", conv_menu(),
       (std::string(conv_auto_heuristic()) + "; with --precision tf32: " + conv_auto_heuristic_tf32() + "; with fp16 or bf16: " +
        conv_auto_heuristic_half()).c_str());
  menu("Fully connected, --fc-variant (backend cuda)\n", fc_menu(),
       (std::string(fc_auto_heuristic()) + "; with --precision tf32: " + fc_auto_heuristic_tf32() + "; with fp16 or bf16: " +
        fc_auto_heuristic_half()).c_str());
  s += "cuDNN algorithm policies, --cudnn-algos (backend cudnn)\n";
  for (const Policy& p : cudnn_algo_policies()) line("", p.name, p.summary);
  s += "\nPrecisions, --precision (backends cuda and cudnn; cpu and cpu-ref are the fp32 reference; every result names its "
       "precision)\n";
  for (const Policy& p : precision_menu()) line("", p.name, p.summary);
  s += "\nOther layers on the cuda backend: one kernel each (pooling, LRN, activation, softmax); LRN followed by "
       "pooling runs as one kernel; an activation after a convolution or fully connected layer runs in its epilogue "
       "with conv v8, v10-v22 and fc v5-v13. With fp16 or bf16 they read and write the 16-bit NHWC tensors (LRN and "
       "pooling as two kernels).\n";
  return s;
}

}  // namespace bs
