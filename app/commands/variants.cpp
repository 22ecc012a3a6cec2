#include "app/commands/variants.hpp"

#include <iostream>

#include "kernels/exec/backend.hpp"
#include "kernels/plan/menus.hpp"

namespace bs {

int run_variants() {
  std::cout << menus_text();
  std::string built;
  for (const std::string& b : backend_names()) built += (built.empty() ? "" : ", ") + b;
  std::cout << "\nBackends in this build: " << built << "\n";
  return 0;
}

}  // namespace bs
