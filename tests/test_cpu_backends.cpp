// The cpu backend against cpu-ref on the generated table of layer shapes, fresh random inputs each run,
// relative L2 <= 1e-5; output buffers poisoned and guarded.
#include <gtest/gtest.h>

#include "kernels/exec/backend.hpp"
#include "op_cases.hpp"

using namespace bs;

namespace {

class CpuVsRef : public ::testing::TestWithParam<test::OpCase> {};

TEST_P(CpuVsRef, AgreesWithinRelL2_1e5) {
  const test::OpCase& c = GetParam();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  Model m = test::single_layer_model(c, rng);
  std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * c.batch, rng);
  auto ref = make_backend("cpu-ref");
  ref->load(m);
  BackendOptions two_threads;
  two_threads.threads = 2;
  auto cpu = make_backend("cpu", two_threads);
  ASSERT_TRUE(cpu->supports(m.layers[0]).ok);
  cpu->load(m);
  test::GuardedRun want = test::guarded_forward(*ref, m, in, c.batch);
  test::GuardedRun got = test::guarded_forward(*cpu, m, in, c.batch);
  EXPECT_TRUE(want.guard_intact && got.guard_intact) << "write past the output buffer";
  double err = test::rel_l2(got.out, want.out);
  EXPECT_LE(err, 1e-5) << c.label << " seed " << seed;
}

std::string case_name(const ::testing::TestParamInfo<test::OpCase>& info) {
  std::string s = std::to_string(info.index) + "_" + info.param.label;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Table, CpuVsRef, ::testing::ValuesIn(test::op_cases(false)), case_name);

}  // namespace
