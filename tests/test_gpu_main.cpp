// test_gpu's main: where no GPU backend can be made, one line saying why and CTest's skip code (77), instead of
// thousands of tests each skipping on its own (CTest runs the suite as one test; gtest_filter still narrows it
// on a GPU machine, as experiments/gpu_check.sh does).
#include <gtest/gtest.h>

#include <iostream>

#include "gpu_util.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::string missing = bs::test::gpu_missing();
  if (!missing.empty() && !::testing::GTEST_FLAG(list_tests)) {
    std::cout << "SKIPPED: every GPU test: " << missing << "\n";
    return 77;
  }
  return RUN_ALL_TESTS();
}
