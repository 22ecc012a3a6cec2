// The run flags (app/cli/run_flags.hpp): each refuses, naming itself, what the resolved backend or mode does not use;
// --copies kernel and where it applies, and what the plan says of it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_util.hpp"
#include "kernels/plan/plan.hpp"

using namespace bs;
using bs::test::expect_flag_error;
using bs::test::flags;

namespace {

TEST(RunFlagsTest, AFlagTheBackendDoesNotUseIsAnError) {
  SKIP_WITHOUT_CUDA_MENUS();
  EXPECT_NO_THROW(flags({})->f.validate(BackendKind::cpu));
  test::expect_error_at([&] { flags({"--conv-variant", "99"}); }, "--conv-variant", "unknown variant '99'");
  expect_flag_error({"--conv-variant", "13"}, BackendKind::cpu, "--conv-variant", "the cpu backend does not use it (it applies to --backend cuda)");
  EXPECT_NO_THROW(flags({"--conv-variant", "13"})->f.validate(BackendKind::cuda));
  expect_flag_error({"--conv-variant", "13"}, BackendKind::cudnn, "--conv-variant", "the cudnn backend does not use it");
  expect_flag_error({"--fc-variant", "stream"}, BackendKind::cpu_ref, "--fc-variant", "does not use it");
  expect_flag_error({"--tuning", "t.json"}, BackendKind::cudnn, "--tuning", "the cudnn backend does not use it (it applies to --backend cuda)");
  expect_flag_error({"--cudnn-algos", "exact"}, BackendKind::cuda, "--cudnn-algos", "(it applies to --backend cudnn)");
  EXPECT_NO_THROW(flags({"--cudnn-algos", "exact"})->f.validate(BackendKind::cudnn));
  EXPECT_EQ(flags({"--cudnn-algos", "exact"})->f.options(BackendKind::cudnn).cudnn_algos, CudnnAlgos::exact);
  test::expect_error_at([&] { flags({"--cudnn-algos", "fast"}); }, "--cudnn-algos", "unknown cuDNN algorithm policy 'fast' (expected fastest or exact)");
  EXPECT_EQ(flags({})->f.options(BackendKind::cudnn).cudnn_algos, CudnnAlgos::fastest);
  expect_flag_error({"--threads", "2"}, BackendKind::cuda, "--threads", "(it applies to --backend cpu and cpu-ref)");
  EXPECT_NO_THROW(flags({"--threads", "2"})->f.validate(BackendKind::cpu));
  test::expect_error_at([&] { flags({"--threads", "0"}); }, "--threads", "must be at least 1, found 0");
  expect_flag_error({"--transfers", "overlapped"}, BackendKind::cpu, "--transfers", "applies to GPU backends only");
  expect_flag_error({"--chunk", "8"}, BackendKind::cuda, "--chunk", "applies to --transfers overlapped only");
  expect_flag_error({"--transfers", "per-layer", "--cuda-graph"}, BackendKind::cuda, "--cuda-graph", "needs --transfers resident or overlapped");
  expect_flag_error({"--transfers", "per-layer", "--precision", "fp16"}, BackendKind::cuda, "--transfers", "per-layer transfers move FP32");
  expect_flag_error({"--input-precision", "bf16"}, BackendKind::cuda, "--input-precision", "bf16 needs --precision bf16");
}

// --copies kernel: GPU backends, resident transfers, pinned host buffers; the default is the copy engines.
TEST(RunFlagsTest, CopiesKernelNeedsAResidentPassOverPinnedHostMemory) {
  SKIP_WITHOUT_CUDA_MENUS();
  EXPECT_EQ(flags({})->f.options(BackendKind::cuda).copies, Copies::engine);
  test::expect_error_at([&] { flags({"--copies", "zero"}); }, "--copies", "unknown copy mode 'zero' (expected engine or kernel)");
  expect_flag_error({"--copies", "kernel"}, BackendKind::cpu, "--copies", "applies to GPU backends only");
  expect_flag_error({"--copies", "kernel"}, BackendKind::cuda, "--copies", "kernel needs --host-memory pinned");
  expect_flag_error({"--copies", "kernel", "--host-memory", "pinned", "--transfers", "overlapped"}, BackendKind::cuda, "--copies",
                    "kernel needs --transfers resident (overlapped makes its own copies)");
  expect_flag_error({"--copies", "kernel", "--host-memory", "pinned", "--transfers", "per-layer"}, BackendKind::cudnn, "--copies",
                    "kernel needs --transfers resident (per-layer makes its own copies)");
  for (BackendKind b : {BackendKind::cuda, BackendKind::cudnn}) {
    const auto f = flags({"--copies", "kernel", "--host-memory", "pinned", "--cuda-graph"});
    EXPECT_NO_THROW(f->f.validate(b));
    EXPECT_EQ(f->f.options(b).copies, Copies::kernel);
  }
  EXPECT_NO_THROW(flags({"--copies", "engine"})->f.validate(BackendKind::cpu));  // the default, said aloud
  EXPECT_EQ(flags({"--copies", "engine"})->f.options(BackendKind::cpu).copies, Copies::engine);
  // The plan says who copies; the planner refuses what the flags refuse (options from a file or a test).
  Model m;
  m.name = "c";
  m.input = {2, 3, 3};
  FcParams f;
  f.outputs = 5;
  f.weight.resize(5 * 18);
  m.layers = {{"flat", FlattenParams{}, {}, {}}, {"fc", f, {}, {}}};
  infer_shapes(m, "c");
  const DeviceSpec gpu{"test GPU", 132, 9, 0, size_t{1} << 34, size_t{1} << 34};
  BackendOptions o;
  o.copies = Copies::kernel;
  o.pinned_host = true;
  o.cuda_graph = true;
  const Planner pl(m, BackendKind::cuda, o, gpu);
  EXPECT_EQ(plan_json(pl.plan(1), m)["copies"], "kernel");
  EXPECT_NE(plan_table(pl.plan(1), m).find("CUDA graph on, copies by kernels"), std::string::npos) << plan_table(pl.plan(1), m);
  EXPECT_EQ(plan_json(Planner(m, BackendKind::cuda, BackendOptions{}, gpu).plan(1), m)["copies"], "engine");
  o.pinned_host = false;
  test::expect_error_at([&] { Planner(m, BackendKind::cuda, o, gpu); }, "--copies", "kernel needs --host-memory pinned");
}

// ECE 408's two convolutions in fp16 and bf16: v58 (the weights in registers) at every batch, measured faster than v22
// from 1 to 10,000 images (experiments/ece408-gpu.md, "conv v58"); the same shapes with one more column run neither.
TEST(Heuristic, EceHalfRunsV58AtEveryBatch) {
  SKIP_WITHOUT_CUDA_MENUS();
  for (const bool conv1 : {true, false}) {
    Layer l;
    ConvParams p;
    p.filters = conv1 ? 6 : 16;
    p.kh = p.kw = 5;
    l.op = p;
    l.in = conv1 ? Shape{1, 48, 48} : Shape{6, 22, 22};
    l.out = conv1 ? Shape{6, 44, 44} : Shape{16, 18, 18};
    for (const Precision prec : {Precision::fp16, Precision::bf16})
      for (int n : {1, 16, 1024, 10000}) EXPECT_EQ(heuristic_version(l, n, prec, 132)->number, 58) << conv1 << " " << n;
    ++l.in.w;
    ++l.out.w;
    const int v = heuristic_version(l, 10000, Precision::fp16, 132)->number;
    EXPECT_NE(v, 58);
    EXPECT_NE(v, 22);
  }
}

}  // namespace
