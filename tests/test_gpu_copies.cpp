// --copies kernel on the GPU: the input and output moved by kernels over the bus (cuda::bus_copy), inside the layers'
// graph with --cuda-graph. The outputs must be those of the copy engines' pass to the bit (the same layers read the
// same bytes) on both GPU backends, in every precision and input type, eager and from a replayed graph that must read
// the host buffer's new contents each pass; pageable buffers are refused in one line; and a sweep books the copy
// kernels as htod / dtoh, not as kernels outside layers.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "app/commands/sweep.hpp"
#include "app/exec/input_precision.hpp"
#include "cli_util.hpp"
#include "gpu_util.hpp"
#include "kernels/profile/profile.hpp"
#include "test_util.hpp"

using namespace bs;
using bs::test::cupti_missing;
using bs::test::gpu_missing;

namespace {

// One backend's pinned input and output for batches of up to `images`, reused pass after pass.
struct Buffers {
  test::PinnedHost<unsigned char> in, out;
  Buffers(const Model& m, int images)
      : in(static_cast<size_t>(m.input.size()) * images * sizeof(float)),
        out(static_cast<size_t>(m.layers.back().out.size()) * images * sizeof(float)) {}
  // Copies `values` in the input type into the pinned input, runs, and returns the output.
  std::vector<float> run(Backend& b, const Model& m, const std::vector<float>& values, int n, InputPrecision input) {
    if (input == InputPrecision::fp32) {
      std::memcpy(in.p, values.data(), values.size() * sizeof(float));
    } else {
      const std::vector<uint8_t> bytes = to_input_precision(values.data(), values.size(), input);
      std::memcpy(in.p, bytes.data(), bytes.size());
    }
    b.forward(reinterpret_cast<const float*>(in.p), n, m.layers.size(), reinterpret_cast<float*>(out.p), nullptr);
    const float* o = reinterpret_cast<const float*>(out.p);
    return std::vector<float>(o, o + static_cast<size_t>(m.layers.back().out.size()) * n);
  }
};

TEST(GpuCopies, KernelCopiesGiveTheCopyEnginesOutputs) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  std::vector<Model> models;
  models.push_back(load_model(test::data_file("models/ece408")));
  models.push_back(test::conv_chain("c3", {3, 20, 22}, 8, true, Act::relu, true, rng));
  std::uniform_int_distribution<int> pixel(0, 255);
  for (const Model& m : models)
    for (const char* backend : {"cuda", "cudnn"})
      for (const char* precision : {"fp32", "tf32", "fp16", "bf16"})
        for (const char* input : {"fp32", "u8", "16-bit"})
          for (bool graph : {false, true}) {
            BackendOptions o;
            o.precision = parse_enum<Precision>(precision, "--precision");
            if (std::string(input) == "16-bit" && !is_half(o.precision)) continue;  // 16-bit input needs the same precision
            o.input_precision = parse_enum<InputPrecision>(std::string(input) == "16-bit" ? precision : input, "--input-precision");
            o.pinned_host = true;
            o.cuda_graph = graph;
            o.guard_check = true;
            auto engine = test::open_backend(m, backend, o);
            o.copies = Copies::kernel;
            auto kernel = test::open_backend(m, backend, o);
            Buffers be(m, 9), bk(m, 9);
            // Sizes in turn, 9 three times: eager + capture, then replays that must read the buffer's new contents.
            for (int n : {9, 1, 9, 9}) {
              std::vector<float> in(static_cast<size_t>(m.input.size()) * n);
              for (float& v : in) v = static_cast<float>(pixel(rng));  // whole numbers: exact in every input type
              const std::vector<float> want = be.run(*engine, m, in, n, o.input_precision);
              const std::vector<float> got = bk.run(*kernel, m, in, n, o.input_precision);
              const std::string what = m.name + " " + backend + " " + precision + " input " + name_of(o.input_precision) +
                                       (graph ? " graph" : "") + " batch " + std::to_string(n) + " seed " + std::to_string(seed);
              if (std::string(backend) == "cuda") {
                EXPECT_EQ(got, want) << what;
              }
              // cudnn: two instances may search their algorithms differently; both within tolerance of cpu-ref.
              EXPECT_LE(test::rel_l2(got, test::cpu_ref_output(m, in, n)), precision_tolerance(o.precision)) << what;
            }
          }
}

TEST(GpuCopies, PageableBuffersAreRefused) {
  SKIP_WITHOUT_GPU();
  const Model m = load_model(test::data_file("models/ece408"));
  BackendOptions o;
  o.pinned_host = true;
  o.copies = Copies::kernel;
  auto b = test::open_backend(m, "cuda", o);
  std::vector<float> in(m.input.size()), out(m.layers.back().out.size());
  test::expect_error_at([&] { b->forward(in.data(), 1, m.layers.size(), out.data(), nullptr); }, "cuda",
                        "--copies kernel needs the input and the output in pinned host memory");
  Buffers pinned(m, 1);  // one side pinned is not enough
  test::expect_error_at([&] { b->forward(reinterpret_cast<const float*>(pinned.in.p), 1, m.layers.size(), out.data(), nullptr); }, "cuda",
                        "one of them is pageable");
}

// A sweep with --copies kernel: the results name it, the check passes, the copy kernels are the htod and dtoh columns
// (nothing is left as a kernel outside layers), and the categories still add up to the profiled passes' total.
TEST(GpuCopies, SweepsBookTheCopyKernelsAsCopies) {
  SKIP_WITHOUT_CUPTI();
  for (bool graph : {false, true}) {
    test::TempDir d;
    std::vector<std::string> args = {"--model", test::data_file("models/ece408"), "--backend", "cuda", "--batches", "1,64", "--reps", "5",
                                     "--host-memory", "pinned", "--copies", "kernel", "--out", d / "r.csv"};
    if (graph) args.push_back("--cuda-graph");
    ASSERT_EQ(run_sweep(test::parse_args<SweepOptions>(args, false)->o), 0) << graph;
    for (int batch : {1, 64}) {
      auto row = test::warm_row(d / "r.csv", batch);
      const std::string what = std::string(graph ? "graph" : "eager") + " batch " + std::to_string(batch);
      ASSERT_FALSE(row.empty()) << what;
      EXPECT_EQ(row["transfers"], graph ? "resident+graph+kernel-copies" : "resident+kernel-copies") << what;
      EXPECT_EQ(row["check"], "ok") << what;
      EXPECT_GT(std::stod(row["htod_ms"]), 0.0) << what;
      EXPECT_GT(std::stod(row["dtoh_ms"]), 0.0) << what;
      EXPECT_EQ(std::stod(row["other_kernel_ms"]), 0.0) << what;
      double sum = 0;
      for (const std::string& c : breakdown_categories()) sum += std::stod(row[c + "_ms"]);
      const double total = std::stod(row["breakdown_ms_median"]);
      EXPECT_NEAR(sum, total, 0.1 * total) << what;
    }
  }
}

}  // namespace

