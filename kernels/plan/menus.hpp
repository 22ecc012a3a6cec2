// The kernel menus as data: every build can print them (`batchscope variants`) and parse a version flag
// (--conv-variant, --fc-variant), GPU or not. Version numbers and names appear in CSVs and reports, so
// results and code stay matched; the kernels themselves are in kernels/cuda/ (conv.hpp, ops.hpp).
#pragma once
#include <string>
#include <vector>

namespace bs {

struct MenuEntry {
  int number;
  const char* name;
  const char* summary;
  const char* shapes;  // what it runs: "any", or the shapes it is compiled for
  const char* precision = "fp32";  // the arithmetic: "fp32" (FP32-accurate), "tf32" (one TF32 product) or "fp16/bf16"
};
const std::vector<MenuEntry>& conv_menu();
const std::vector<MenuEntry>& fc_menu();
const MenuEntry& conv_entry(int number);  // number must be on the menu
const MenuEntry& fc_entry(int number);

// "auto" (or "0") is the per-layer, per-batch choice: the tuning table's, else the heuristic.
constexpr int kAutoVariant = 0;
// Accept "13", "v13" or "gemm-3xtf32", and "auto"; anything else is an error naming the flag and the menu.
int parse_conv_variant(const std::string& text, const std::string& flag = "--conv-variant");
int parse_fc_variant(const std::string& text, const std::string& flag = "--fc-variant");

struct Policy {
  const char* name;
  const char* summary;
};
const std::vector<Policy>& cudnn_algo_policies();  // --cudnn-algos
const std::vector<Policy>& precision_menu();        // --precision

// The precisions batchscope runs, and what a result in each must agree with cpu-ref to (relative L2 of the
// logits, end to end; per layer the test table holds tf32 to 2e-3). Unknown or unimplemented names are an Error
// naming the flag.
void check_precision(const std::string& precision, const std::string& flag = "--precision");
double precision_tolerance(const std::string& precision);
bool is_half_precision(const std::string& precision);  // fp16 or bf16: 16-bit storage between layers
// --input-precision: fp32 (the default: the input is copied as FP32 and converted on the device), u8 (with any
// precision: the host holds raw 8-bit pixel values, a quarter of the copy, widened to FP32 on the device inside the
// first layer's time), or the run's own 16-bit precision (the host holds the input as 16-bit values: half the copy).
// Fails naming the flag otherwise.
void check_input_precision(const std::string& input, const std::string& precision);
// Whether version `e` may run in a run of `precision`: its own precision, and under tf32 also fc v5 (the
// memory-bound weight-streaming kernel for small batches, FP32 and as fast).
bool variant_allowed(const MenuEntry& e, bool conv, const std::string& precision);
// The versions of a menu that `precision` allows, as "v16, v17, v18".
std::string allowed_variants(bool conv, const std::string& precision);
// Throws "<flag>: vN computes in fp32; with --precision tf32 choose auto or one of ..." unless `precision` allows
// version `number` (auto always passes).
void check_variant_precision(int number, bool conv, const std::string& precision, const std::string& flag);

// The conv and fc heuristics auto falls back to without a tuning table, in words (the README quotes them).
const char* conv_auto_heuristic();
const char* fc_auto_heuristic();
const char* conv_auto_heuristic_tf32();
const char* fc_auto_heuristic_tf32();
const char* conv_auto_heuristic_half();
const char* fc_auto_heuristic_half();

// Every menu, one line per version: what `batchscope variants` prints.
std::string menus_text();

}  // namespace bs
