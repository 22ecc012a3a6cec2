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
const std::vector<Policy>& precision_menu();        // --precision (fp32 only, so far)

// The conv and fc heuristics auto falls back to without a tuning table, in words (the README quotes them).
const char* conv_auto_heuristic();
const char* fc_auto_heuristic();

// Every menu, one line per version: what `batchscope variants` prints.
std::string menus_text();

}  // namespace bs
