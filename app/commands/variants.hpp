// `batchscope variants`: every implementation in the registry, one line per version with what it runs, on any machine.
#pragma once
#include <string>

namespace bs {

std::string menus_text();  // what `batchscope variants` prints (the tests read it too)
int run_variants();

}  // namespace bs
