// The tuning table (kernels/plan/tuning.hpp), the registry's menus (kernels/plan/registry.hpp) and the run flags
// (app/cli/run_flags.hpp): everything auto's choice and the variant flags rest on that runs without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "app/cli/run_flags.hpp"
#include "app/commands/variants.hpp"
#include "cli_util.hpp"
#include "kernels/plan/plan.hpp"
#include "kernels/plan/registry.hpp"
#include "kernels/plan/tuning.hpp"
#include "test_util.hpp"

using namespace bs;
using bs::test::expect_flag_error;
using bs::test::flags;

namespace {

TuningTable sample_table() {
  TuningTable t;
  t.device = {"NVIDIA H100 80GB HBM3", "9.0", 132, "580"};
  t.commit = "0123456789abcdef0123456789abcdef01234567";
  t.date = "2026-11-22T00:00:00Z";
  t.command = "batchscope tune --model m";
  t.model = "m";
  for (int b : {1, 16, 256}) {
    TuningEntry e;
    e.kind = "conv";
    e.layer = "conv1";
    e.signature = "conv in(3,227,227) m96 k11x11 s4x4 p0x0 g1 +relu";
    e.batch = b;
    e.best = b == 1 ? 14 : b == 16 ? 12 : 13;
    e.times_ms = {{12, 1.5}, {13, 1.25}, {14, 1.0}};
    e.unsupported = {{7, "v7 is compiled for stride 1"}};
    if (b == 16) {  // measured with errors (the other entries as tables written before tune measured them)
      e.errors = {{12, 3.0e-7}, {13, 2.5e-7}, {14, 4.0e-6}};
      e.error_budget = 1e-6;
    }
    t.entries.push_back(e);
  }
  TuningEntry f;
  f.kind = "fc";
  f.layer = "fc6";
  f.signature = "fc in9216 out4096 +relu";
  f.batch = 4;
  f.best = 5;
  f.times_ms = {{5, 0.06}};
  t.entries.push_back(f);
  return t;
}

TEST(Tuning, WriteThenReadGivesTheSameTable) {
  test::TempDir d;
  const TuningTable t = sample_table();
  write_tuning(d / "t.json", t);
  const TuningTable r = read_tuning(d / "t.json", "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.device.name, t.device.name);
  EXPECT_EQ(r.device.sm_count, 132);
  EXPECT_EQ(r.commit, t.commit);
  ASSERT_EQ(r.entries.size(), t.entries.size());
  EXPECT_EQ(r.entries[0].times_ms, t.entries[0].times_ms);
  EXPECT_EQ(r.entries[0].unsupported, t.entries[0].unsupported);
  EXPECT_EQ(r.entries[3].best, 5);
  EXPECT_EQ(r.entries[1].errors, t.entries[1].errors);
  EXPECT_EQ(r.entries[1].error_budget, 1e-6);
  EXPECT_TRUE(r.entries[0].errors.empty());
  EXPECT_EQ(r.entries[0].error_budget, 0.0);
  EXPECT_EQ(tuning_json(r), tuning_json(t));
}

// tune chooses the fastest version within the error budget; none within it: the most accurate; no errors measured
// (a table from before): the fastest.
TEST(Tuning, TheBestIsTheFastestWithinTheErrorBudget) {
  TuningEntry e;
  e.times_ms = {{13, 1.0}, {25, 0.5}, {34, 0.8}};
  EXPECT_EQ(choose_best(e, 1e-6), 25);
  e.errors = {{13, 2e-7}, {25, 5e-6}, {34, 8e-7}};
  EXPECT_EQ(choose_best(e, 1e-6), 34);
  EXPECT_EQ(choose_best(e, 1e-5), 25);
  EXPECT_EQ(choose_best(e, 1e-7), 13);  // none within: the most accurate
  e.errors[34] = NAN;                  // a NaN output is never within a budget
  EXPECT_EQ(choose_best(e, 1e-6), 13);
  EXPECT_EQ(choose_best(TuningEntry{}, 1e-6), 0);
  EXPECT_EQ(layer_error_budget(Precision::fp32), 1e-6);
  EXPECT_EQ(layer_error_budget(Precision::tf32), 2e-3);
  EXPECT_EQ(layer_error_budget(Precision::fp16), 2e-3);
  EXPECT_EQ(layer_error_budget(Precision::bf16), 1.6e-2);
}

TEST(Tuning, LookupTakesTheBatchOrTheNearestInLog2) {
  const TuningTable t = sample_table();
  const std::string sig = "conv in(3,227,227) m96 k11x11 s4x4 p0x0 g1 +relu";
  EXPECT_EQ(t.lookup("conv", sig, 1), 14);
  EXPECT_EQ(t.lookup("conv", sig, 16), 12);
  EXPECT_EQ(t.lookup("conv", sig, 2), 14);     // log2 distance 1 to batch 1, 3 to 16
  EXPECT_EQ(t.lookup("conv", sig, 4), 12);     // 2 from 1 and 2 from 16: a tie goes to the larger batch
  EXPECT_EQ(t.lookup("conv", sig, 64), 13);    // 2 from 16 and 2 from 256
  EXPECT_EQ(t.lookup("conv", sig, 100), 13);   // closer to 256 (1.36) than to 16 (2.64)
  EXPECT_EQ(t.lookup("conv", sig, 5000), 13);
  EXPECT_FALSE(t.lookup("conv", sig + " +max_pool2x2", 1).has_value());  // another segment
  EXPECT_FALSE(t.lookup("fc", sig, 1).has_value());
  EXPECT_EQ(t.lookup("fc", "fc in9216 out4096 +relu", 1024), 5);
}

// A table whose sizes were measured over different version lists (merged by hand, or sizes tuned before a version
// existed) names the entries that never measured a version another size chose; the shipped tables have none (the H100
// table's FP32 batch 4, 64 and 256 convolution entries, measured before v34-v36, made auto run v13/v14 at 256 images,
// 20 % slower per image than at 128 or 512: experiments/end-to-end.md).
TEST(Tuning, StaleEntriesNameWhatTheyNeverMeasured) {
  TuningTable t = sample_table();
  EXPECT_TRUE(stale_entries(t).empty());  // every conv entry measured v12-v14 (v7 unsupported)
  t.entries[0].best = 7;                  // batch 1 now chooses v7, which the others list as unsupported: still comparable
  EXPECT_TRUE(stale_entries(t).empty());
  t.entries[0].best = 36;                 // a version only batch 1 measured
  t.entries[0].times_ms[36] = 0.5;
  const std::vector<std::string> s = stale_entries(t);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], "conv 'conv in(3,227,227) m96 k11x11 s4x4 p0x0 g1 +relu' at batch 16 never measured v36, the choice at batch 1");
  EXPECT_NE(s[1].find("at batch 256 never measured v36"), std::string::npos) << s[1];
  for (const auto& f : std::filesystem::directory_iterator(test::source_dir() + "/experiments/tuning")) {
    const TuningTable shipped = read_tuning(f.path().string(), "");
    ASSERT_FALSE(shipped.entries.empty()) << f.path();
    const std::vector<std::string> stale = stale_entries(shipped);
    EXPECT_TRUE(stale.empty()) << f.path() << ": " << stale.size() << " stale entries, the first: " << stale[0];
  }
}

TEST(Tuning, RefusesATableFromAnotherDevice) {
  test::TempDir d;
  write_tuning(d / "t.json", sample_table());
  test::expect_error_at([&] { read_tuning(d / "t.json", "NVIDIA H200"); }, d / "t.json",
                        "tuning table measured on 'NVIDIA H100 80GB HBM3', this device is 'NVIDIA H200'");
  EXPECT_NO_THROW(read_tuning(d / "t.json", ""));  // no device to compare with: the reader alone
}

TEST(Tuning, RefusesCorruptFilesWithOneLineNamingThem) {
  test::TempDir d;
  const std::string good = tuning_json(sample_table());
  struct Case {
    std::string text, needle;
  };
  auto replace = [&](std::string from, std::string to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  const std::vector<Case> cases = {
      {good.substr(0, good.size() / 2), "not a batchscope tuning table (not JSON"},
      {"", "not a batchscope tuning table (not JSON"},
      {"[1, 2, 3]", "not a batchscope tuning table (no \"format\""},
      {replace("\"batchscope-tuning\"", "\"batchscope-model\""), "not a batchscope tuning table"},
      {replace("\"version\": 1", "\"version\": 2"), "tuning table version 2; this batchscope reads version 1"},
      {replace("\"best\": 14", "\"best\": -3"), "best version -3 is not on the conv menu"},
      {replace("\"batch\": 16", "\"batch\": -16"), "batch must be positive"},
      {replace("\"kind\": \"fc\"", "\"kind\": \"lrn\""), "kind 'lrn', expected conv or fc"},
      {replace("\"signature\": \"fc in9216 out4096 +relu\",", ""), "corrupt tuning table"},
      {replace("\"best\": 5", "\"best\": \"five\""), "corrupt tuning table"},
      {replace("\"12\": 1.5", "\"twelve\": 1.5"), "corrupt tuning table: a version key is not a number"},
      {replace("\"error_budget\": 1e-06", "\"error_budget\": -1"), "error_budget must not be negative"},
      {replace("\"12\": 3e-07", "\"12\": \"small\""), "corrupt tuning table"},
  };
  std::vector<Case> all = cases;
  if (!registry().menu(LayerKind::conv, BackendKind::cuda).empty()) {  // builds with the cuda backend know its menus
    all.push_back({replace("\"best\": 14", "\"best\": 99"), "best version 99 is not on the conv menu"});
    all.push_back({replace("\"best\": 5", "\"best\": 99"), "best version 99 is not on the fc menu"});
    all.push_back({replace("\"best\": 5", "\"best\": 15"), "best version 15 reads 8-bit weights, but the signature is not one of "
                                                             "--weights int8 (no ' w8')"});
  }
  for (const Case& c : all) {
    test::write_text(d / "bad.json", c.text);
    test::expect_error_at([&] { read_tuning(d / "bad.json", "NVIDIA H100 80GB HBM3"); }, d / "bad.json", c.needle);
  }
  test::expect_error_at([&] { read_tuning(d / "missing.json", ""); }, d / "missing.json", "cannot open");
}

// The signature names the layer's shape and what a variant may fuse into it.
TEST(Tuning, SignaturesNameShapeAndFusibleFollowers) {
  Model m;
  m.name = "sig";
  m.input = {3, 31, 31};
  ConvParams c1;
  c1.filters = 8; c1.kh = c1.kw = 3; c1.ph = c1.pw = 1; c1.groups = 1;
  c1.weight.resize(8 * 3 * 9);
  ConvParams c2 = c1;
  c2.filters = 4; c2.sh = c2.sw = 2; c2.groups = 2;
  c2.weight.resize(4 * 4 * 9);
  PoolParams p2; p2.kh = p2.kw = p2.sh = p2.sw = 2;
  PoolParams p3; p3.kh = p3.kw = 3; p3.sh = p3.sw = 2;
  FcParams f; f.outputs = 5;
  m.layers = {{"c1", c1, {}, {}}, {"r1", ActParams{Act::relu}, {}, {}}, {"p1", p2, {}, {}}, {"c2", c2, {}, {}},
              {"t2", ActParams{Act::tanh}, {}, {}}, {"p2", p3, {}, {}}, {"flat", FlattenParams{}, {}, {}}, {"fc", f, {}, {}}};
  infer_shapes(m, "sig");
  f.weight.resize(static_cast<size_t>(5) * m.layers[7].in.size());
  m.layers[7].op = f;
  EXPECT_EQ(tuning_signature(m, 0), "conv in(3,31,31) m8 k3x3 s1x1 p1x1 g1 +relu +max_pool2x2");
  EXPECT_EQ(tuning_signature(m, 3), "conv in(8,15,15) m4 k3x3 s2x2 p1x1 g2 +tanh");  // a 3x3 pool is not fused
  EXPECT_EQ(tuning_signature(m, 7), "fc in36 out5");
  test::expect_error_at([&] { tuning_signature(m, 1); }, "layer 'r1'", "only convolution and fully connected layers");
  // A dilated convolution of the same input, filters, kernel, stride and padding is another problem: versions that refuse
  // dilation may be the best for the undilated one. Asymmetric padding names its bottom and right too.
  ConvParams d = std::get<ConvParams>(m.layers[0].op);
  d.dh = 2; d.dw = 3; d.pb = 2; d.pr = 0;
  m.layers[0].op = d;
  infer_shapes(m, "sig");
  EXPECT_EQ(tuning_signature(m, 0), "conv in(3,31,31) m8 k3x3 s1x1 p1x1+2x0 g1 d2x3 +relu +max_pool2x2");
}

TEST(Tuning, DefaultPathFollowsTheEnvironmentAndNamesTheDevice) {
  setenv("BATCHSCOPE_TUNING_DIR", "/tmp/tuning-here", 1);
  EXPECT_EQ(default_tuning_path("NVIDIA H100 80GB HBM3"), "/tmp/tuning-here/tuning-nvidia-h100-80gb-hbm3.json");
  unsetenv("BATCHSCOPE_TUNING_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(default_tuning_path("NVIDIA H200"), "/tmp/xdg/batchscope/tuning-nvidia-h200.json");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_tuning_path("  Odd/Name!  "), "/home/u/.cache/batchscope/tuning-odd-name.json");
}

TEST(Menus, VersionsParseByNumberOrNameAndUnknownOnesListTheMenu) {
  SKIP_WITHOUT_CUDA_MENUS();
  EXPECT_EQ(parse_conv_variant("13"), 13);
  EXPECT_EQ(parse_conv_variant("v13"), 13);
  EXPECT_EQ(parse_conv_variant("gemm-3xtf32"), 13);
  EXPECT_EQ(parse_conv_variant("gemm-3xtf32-64"), 14);
  EXPECT_EQ(parse_conv_variant("auto"), kAutoVariant);
  EXPECT_EQ(parse_fc_variant("stream"), 5);
  EXPECT_EQ(parse_fc_variant("v8"), 8);
  EXPECT_EQ(parse_conv_variant("gemm-tf32"), 16);
  EXPECT_EQ(parse_fc_variant("gemm-tf32-64"), 11);
  EXPECT_EQ(parse_conv_variant("direct-half"), 37);
  EXPECT_EQ(parse_conv_variant("s2d-half"), 38);
  test::expect_error_at([] { parse_conv_variant("99"); }, "--conv-variant", "unknown variant '99' (choose auto or one of: 1 direct");
  test::expect_error_at([] { parse_fc_variant("gemm"); }, "--fc-variant", "14 stream-half, 15 stream-int8, 16 wgmma-half, 17 stream-mma-half, 18 wgmma-3xf16, 19 wgmma-f16s, 20 stream-mma-3xtf32)");
}

TEST(Precision, NamesTolerancesAndWhichVersionsEachAllows) {
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"}) EXPECT_EQ(name_of(parse_enum<Precision>(p, "--precision")), p);
  test::expect_error_at([] { parse_enum<Precision>("fp64", "--precision"); }, "--precision",
                        "unknown precision 'fp64' (expected fp32, tf32, fp16 or bf16)");
  EXPECT_NO_THROW(check_input_precision(InputPrecision::fp32, Precision::tf32));
  EXPECT_NO_THROW(check_input_precision(InputPrecision::fp16, Precision::fp16));
  EXPECT_NO_THROW(check_input_precision(InputPrecision::bf16, Precision::bf16));
  test::expect_error_at([] { check_input_precision(InputPrecision::fp16, Precision::bf16); }, "--input-precision", "fp16 needs --precision fp16");
  test::expect_error_at([] { parse_enum<InputPrecision>("half", "--input-precision"); }, "--input-precision",
                        "unknown input precision 'half'");
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16})
    EXPECT_NO_THROW(check_input_precision(InputPrecision::u8, p)) << name_of(p);
  EXPECT_DOUBLE_EQ(precision_tolerance(Precision::fp32), 1e-4);
  EXPECT_DOUBLE_EQ(precision_tolerance(Precision::tf32), 5e-3);
  EXPECT_DOUBLE_EQ(precision_tolerance(Precision::fp16), 1e-2);
  EXPECT_DOUBLE_EQ(precision_tolerance(Precision::bf16), 5e-2);
  // The tuning table keeps fp32 signatures as they were and gives tf32 its own.
  Model m;
  m.name = "p";
  m.input = {1, 4, 1};
  FcParams f;
  f.outputs = 2;
  f.weight.resize(8);
  m.layers = {{"fc", f, {}, {}}};
  infer_shapes(m, "p");
  EXPECT_EQ(tuning_signature(m, 0), "fc in4 out2");
  EXPECT_EQ(tuning_signature(m, 0, Precision::tf32), "fc in4 out2 @tf32");
  EXPECT_EQ(tuning_signature(m, 0, Precision::fp16), "fc in4 out2 @fp16");
}

// fc v16 runs the layer as a 1x1 convolution over its input as stored, on conv v39-v47's layout: K-major words, then the
// k table. Worked out by hand for AlexNet's fc6 (stored (256, 6, 6): K = 9216 values, 4608 words, a multiple of the
// 64-word k step) and for a 40 x 3 x 3 input (360 values, 180 words, padded to 192), with their refusals.
TEST(FcWgmma, PlansTheLayerAsAOneByOneConvolution) {
  SKIP_WITHOUT_CUDA_MENUS();
  const Impl& v16 = registry().version(LayerKind::fc, 16, "--fc-variant");
  FcParams f;
  f.outputs = 4096;
  const Layer fc6{"fc6", f, {9216, 1, 1}, {4096, 1, 1}};
  EXPECT_EQ(v16.prepared_floats(fc6, {256, 6, 6}, Precision::fp16), 4096u * 4608 + 4608 / 2);
  f.outputs = 301;
  const Layer small{"fc", f, {40, 3, 3}, {301, 1, 1}};
  EXPECT_EQ(v16.prepared_floats(small, {40, 3, 3}, Precision::bf16), 301u * 192 + 192 / 2);
  f.outputs = 37;
  const Layer odd{"fc", f, {123, 1, 1}, {37, 1, 1}};
  const Support s = v16.check(odd);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("a multiple of 8 values (this one has 123)"), std::string::npos) << s.reason;
  BackendOptions o;  // what the backend answers before a plan, with --fc-variant 16
  o.precision = Precision::fp16;
  o.fc_variant = 16;
  EXPECT_EQ(layer_support(BackendKind::cuda, o, odd).reason, s.reason);
}

TEST(Precision, EachVersionRunsInItsOwnPrecisions) {
  SKIP_WITHOUT_CUDA_MENUS();
  EXPECT_EQ(allowed_versions(LayerKind::conv, Precision::fp16), "v19, v20, v21, v22, v37, v38, v39, v40, v41, v42, v43, v44, v45, v46, v47, v48, v58, v60, v61, v65, v66, v67, v68, v69, v70, v71, v72, v73");
  EXPECT_EQ(allowed_versions(LayerKind::conv, Precision::bf16), "v19, v20, v21, v22, v37, v38, v39, v40, v41, v42, v43, v44, v45, v46, v47, v48, v58, v60, v61, v65, v66, v67, v68, v69, v70, v71, v72, v73");
  EXPECT_EQ(allowed_versions(LayerKind::fc, Precision::bf16), "v12, v13, v14, v16, v17");
  // Every version computes in exactly one precision; tf32 runs the TF32 engine versions and, for fc, the
  // memory-bound stream kernel.
  EXPECT_EQ(allowed_versions(LayerKind::conv, Precision::tf32), "v16, v17, v18, v23, v24, v25, v26, v27, v28, v29, v30, v31, v32, v33, v50, v54, v55, v56");
  EXPECT_EQ(allowed_versions(LayerKind::fc, Precision::tf32), "v5, v10, v11, v19");
  EXPECT_EQ(allowed_versions(LayerKind::conv, Precision::fp32), "v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15, v34, v35, v36, v49, v51, v52, v53, v57, v59, v62, v63, v64");
  for (const Impl* i : registry().menu(LayerKind::conv, BackendKind::cuda))
    EXPECT_TRUE(i->math == "fp32" || i->math == "tf32" || i->math == "fp16/bf16") << i->label();
}

TEST(Precision, FlagsRefuseTheCpuBackendsAndVersionsOfTheOtherPrecision) {
  SKIP_WITHOUT_CUDA_MENUS();
  expect_flag_error({"--precision", "tf32"}, BackendKind::cpu, "--precision", "the cpu backend computes in fp32 only");
  EXPECT_NO_THROW(flags({"--precision", "tf32"})->f.validate(BackendKind::cudnn));
  EXPECT_NO_THROW(flags({"--precision", "tf32"})->f.validate(BackendKind::cuda));
  expect_flag_error({"--precision", "tf32", "--conv-variant", "13"}, BackendKind::cuda, "--conv-variant",
                    "13 computes in fp32; with --precision tf32 choose auto or one of v16, v17, v18");
  EXPECT_NO_THROW(flags({"--precision", "tf32", "--conv-variant", "gemm-tf32-64"})->f.validate(BackendKind::cuda));
  expect_flag_error({"--precision", "tf32", "--fc-variant", "7"}, BackendKind::cuda, "--fc-variant", "one of v5, v10, v11");
  EXPECT_NO_THROW(flags({"--precision", "tf32", "--fc-variant", "stream"})->f.validate(BackendKind::cuda));
  expect_flag_error({"--precision", "fp16", "--conv-variant", "17"}, BackendKind::cuda, "--conv-variant",
                    "17 computes in tf32; with --precision fp16 choose auto or one of v19, v20, v21, v22");
  EXPECT_NO_THROW(flags({"--precision", "fp16", "--conv-variant", "gemm-half-64", "--fc-variant", "12"})->f.validate(BackendKind::cuda));
  expect_flag_error({"--conv-variant", "gemm-half-64"}, BackendKind::cuda, "--conv-variant", "21 computes in fp16/bf16; with --precision fp32");
  for (const char* p : {"fp16", "bf16"}) {  // both GPU backends run the 16-bit precisions; the cpu ones refuse them
    EXPECT_NO_THROW(flags({"--precision", p})->f.validate(BackendKind::cudnn)) << p;
    EXPECT_NO_THROW(flags({"--precision", p})->f.validate(BackendKind::cuda)) << p;
    expect_flag_error({"--precision", p}, BackendKind::cpu_ref, "--precision", "the cpu-ref backend computes in fp32 only");
  }
  test::expect_error_at([&] { flags({"--precision", "half"}); }, "--precision", "unknown precision 'half'");
  EXPECT_EQ(flags({"--precision", "bf16"})->f.options(BackendKind::cuda).precision, Precision::bf16);
}

TEST(Precision, TheCpuBackendsAreTheFp32Reference) {
  BackendOptions o;
  o.precision = Precision::tf32;
  test::expect_error_at([&] { make_backend(BackendKind::cpu, o); }, "--precision", "the cpu backend computes in fp32 only");
  test::expect_error_at([&] { make_backend(BackendKind::cpu_ref, o); }, "--precision", "the cpu-ref backend computes in fp32 only");
  o.precision = Precision::bf16;
  test::expect_error_at([&] { make_backend("cpu", o); }, "--precision", "the cpu backend computes in fp32 only");
  test::expect_error_at([&] { make_backend("tpu", o); }, "--backend", "unknown backend 'tpu'");
}

TEST(Menus, DilatedConvolutionsRunOnTheGemmEnginesAndAutoPicksOne) {
  SKIP_WITHOUT_CUDA_MENUS();
  Layer l;
  l.name = "d";
  ConvParams c;
  c.filters = 6; c.kh = c.kw = 3; c.dh = 2; c.dw = 3;
  l.op = c;
  l.in = {4, 13, 15};
  l.out = {6, 9, 9};
  BackendOptions o;
  EXPECT_TRUE(layer_support(BackendKind::cpu_ref, o, l).ok);
  EXPECT_TRUE(layer_support(BackendKind::cpu, o, l).ok);
  // The GEMM engines (their k tables hold each tap's dilated offsets) take it; every other version refuses it by name.
  std::set<int> dilating;
  for (const Impl* i : registry().menu(LayerKind::conv, BackendKind::cuda)) {
    const Support s = i->check(l);
    if (i->dilation) {
      dilating.insert(i->number);
      // no GPU here (v39-v47 and the cluster versions v48-v50 say so); v39-v47 read 8 channels at a time, this layer has 4
      EXPECT_TRUE(s.ok || s.reason.find("needs wgmma") != std::string::npos ||
                  s.reason.find("split-K in thread-block clusters") != std::string::npos || s.reason.find("reads 8 channels (16 bytes) at a time") != std::string::npos)
          << i->label() << ": " << s.reason;
    } else {
      EXPECT_NE(s.reason.find("runs undilated convolutions only (this layer's dilation is 2x3)"), std::string::npos) << i->label();
    }
  }
  for (int v : {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23, 26, 29, 33, 34, 36, 39, 43}) EXPECT_TRUE(dilating.count(v)) << "v" << v;
  for (int v : {1, 2, 5, 11, 22}) EXPECT_FALSE(dilating.count(v)) << "v" << v;
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16}) {
    o.precision = p;
    EXPECT_TRUE(layer_support(BackendKind::cudnn, o, l).ok) << name_of(p);
    EXPECT_TRUE(layer_support(BackendKind::cuda, o, l).ok) << name_of(p);  // auto: the test harness's probe before a plan
    for (int n : {1, 64, 1024}) {
      const Impl* h = heuristic_version(l, n, p, 132);
      ASSERT_TRUE(h) << name_of(p);
      EXPECT_TRUE(h->dilation && h->check(l).ok) << name_of(p) << " n" << n << ": " << h->label();
    }
  }
  o.precision = Precision::fp32;
  o.conv_variant = 11;
  EXPECT_NE(layer_support(BackendKind::cuda, o, l).reason.find("runs undilated convolutions only"), std::string::npos);
}

// The cudnn backend's own kernels for what cuDNN cannot do (a ceil-mode or asymmetrically padded pool, leaky ReLU) take
// any channel count in every precision: FP32 NCHW, and the 16-bit packed NHWC of an odd count one value at a time.
TEST(Menus, CudnnFallbacksTakeOddChannelCountsInEveryPrecision) {
  SKIP_WITHOUT_CUDA_MENUS();
  Layer pool;
  pool.name = "p";
  PoolParams pp;
  pp.kh = pp.kw = 3; pp.sh = pp.sw = 2; pp.ph = 1; pp.pw = 0; pp.pb = 0; pp.pr = 1;
  pool.op = pp;
  Layer leaky;
  leaky.name = "a";
  leaky.op = ActParams{Act::leaky_relu, 0.1f};
  Layer lrn;  // cuDNN's own call, for contrast: a window it refuses is refused with its reason
  lrn.name = "n";
  LrnParams lp;
  lp.size = 17;
  lrn.op = lp;
  for (Layer* l : {&pool, &leaky, &lrn}) {
    l->in = {3, 11, 12};
    l->out = l == &pool ? Shape{3, 5, 6} : l->in;
  }
  BackendOptions o;
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16}) {
    o.precision = p;
    for (const Layer* l : {&pool, &leaky})
      EXPECT_TRUE(layer_support(BackendKind::cudnn, o, *l).ok) << l->name << " " << name_of(p) << ": " << layer_support(BackendKind::cudnn, o, *l).reason;
    EXPECT_NE(layer_support(BackendKind::cudnn, o, lrn).reason.find("cuDNN LRN supports window sizes 1 to 16"), std::string::npos);
  }
}

TEST(Menus, TheListingHasEveryVersionAndPolicy) {
  SKIP_WITHOUT_CUDA_MENUS();
  const std::string text = menus_text();
  for (LayerKind op : {LayerKind::conv, LayerKind::fc}) {
    const std::vector<const Impl*> menu = registry().menu(op, BackendKind::cuda);
    for (const Impl* i : menu) {
      EXPECT_NE(text.find("v" + std::to_string(i->number) + " "), std::string::npos) << i->name;
      EXPECT_NE(text.find(i->name), std::string::npos);
      EXPECT_TRUE(i->hooks) << i->label() << " has no launcher";
      EXPECT_TRUE(i->op == LayerKind::conv ? static_cast<bool>(i->supports) : true) << i->label() << " says nothing of shapes";
    }
    // numbers are unique and in order, so that CSVs name one version each
    for (size_t k = 0; k < menu.size(); ++k) EXPECT_EQ(menu[k]->number, static_cast<int>(k) + 1);
    EXPECT_NE(text.find(heuristic_text(op)), std::string::npos);
  }
  for (const Impl* p : registry().of(LayerKind::conv, BackendKind::cudnn)) EXPECT_NE(text.find(p->name), std::string::npos);
  // Every layer kind has an implementation on every backend of this build.
  for (BackendKind b : backend_kinds())
    for (LayerKind k : {LayerKind::conv, LayerKind::act, LayerKind::pool, LayerKind::lrn, LayerKind::flatten, LayerKind::fc, LayerKind::softmax})
      EXPECT_FALSE(registry().of(k, b).empty()) << kind_name(k) << " on " << name_of(b);
}

// ECE 408's conv2 in FP32: v57 once its 4-image sets number the SMs (525 images on 132), v11 below. conv1's shape runs
// v10's kernel under either number.
TEST(Heuristic, EceConv2RunsV57FromOneSetPerSm) {
  SKIP_WITHOUT_CUDA_MENUS();
  Layer c2;
  ConvParams p;
  p.filters = 16;
  p.kh = p.kw = 5;
  c2.op = p;
  c2.in = {6, 22, 22};
  c2.out = {16, 18, 18};
  const bool v57 = registry().find(LayerKind::conv, BackendKind::cuda, 57)->check(c2).ok;
  for (int n : {1, 256, 524}) EXPECT_EQ(heuristic_version(c2, n, Precision::fp32, 132)->number, 11) << n;
  for (int n : {525, 1024, 10000}) EXPECT_EQ(heuristic_version(c2, n, Precision::fp32, 132)->number, v57 ? 57 : 11) << n;
  EXPECT_EQ(heuristic_version(c2, 1024, Precision::fp32, 264)->number, 11);  // 264 SMs: 256 sets are under one each
  c2.in = {6, 22, 23};  // another shape: neither is compiled for it
  c2.out = {16, 18, 19};
  EXPECT_NE(heuristic_version(c2, 10000, Precision::fp32, 132)->number, 57);
  EXPECT_NE(heuristic_version(c2, 10000, Precision::fp32, 132)->number, 11);
}

// --weights int8: the cuda backend only; v15 (8-bit rows) only with it, and auto's choice for a few images in every
// precision; tables keep the choice under signatures of their own.
TEST(Int8Weights, FlagsHeuristicSignaturesAndPlan) {
  SKIP_WITHOUT_CUDA_MENUS();
  test::expect_error_at([&] { flags({"--weights", "int4"}); }, "--weights", "unknown weight format 'int4' (expected native or int8)");
  expect_flag_error({"--weights", "int8"}, BackendKind::cpu, "--weights",
                    "int8 runs on --backend cuda only (the cpu backend computes with the model's weights as they are)");
  expect_flag_error({"--weights", "int8"}, BackendKind::cudnn, "--weights", "int8 runs on --backend cuda only (the cudnn backend");
  EXPECT_NO_THROW(flags({"--weights", "native"})->f.validate(BackendKind::cudnn));
  EXPECT_EQ(flags({"--weights", "int8"})->f.options(BackendKind::cuda).weights, WeightFormat::int8);
  expect_flag_error({"--fc-variant", "15"}, BackendKind::cuda, "--fc-variant", "v15 reads weights quantised to 8 bits: it runs with --weights int8 only");
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"})
    EXPECT_NO_THROW(flags({"--fc-variant", "stream-int8", "--weights", "int8", "--precision", p})->f.validate(BackendKind::cuda)) << p;
  // Other versions read the same quantised values in the precision's type: int8 allows every version.
  EXPECT_NO_THROW(flags({"--fc-variant", "13", "--weights", "int8", "--precision", "fp16"})->f.validate(BackendKind::cuda));
  EXPECT_EQ(allowed_versions(LayerKind::fc, Precision::fp32, WeightFormat::int8), "v1, v2, v3, v4, v5, v6, v7, v8, v9, v15, v18, v20");
  {  // FP32's fully connected choice by batch: v5 streams at 1-4 images, v20 at 5-16 (16-byte rows only), v8 beyond
    Layer fc6;
    FcParams f6;
    f6.outputs = 4096;
    fc6.op = f6;
    fc6.in = {9216, 1, 1};
    fc6.out = {4096, 1, 1};
    for (int n : {1, 4}) EXPECT_EQ(heuristic_version(fc6, n, Precision::fp32, 132)->number, 5) << n;
    for (int n : {5, 8, 16}) EXPECT_EQ(heuristic_version(fc6, n, Precision::fp32, 132)->number, 20) << n;
    for (int n : {17, 64}) EXPECT_EQ(heuristic_version(fc6, n, Precision::fp32, 132)->number, 8) << n;
    fc6.in = {9215, 1, 1};  // rows not a multiple of 4 values
    EXPECT_EQ(heuristic_version(fc6, 8, Precision::fp32, 132)->number, 8);
    EXPECT_EQ(heuristic_version(fc6, 8, Precision::tf32, 132)->number, 11);  // v20 is FP32's only
    // tf32: v19 (wgmma, compute capability 9.0) where it runs and images x inputs x outputs exceeds 2^31, else v11 up
    // to 256 images and v10 beyond: fc6 (9216 x 4096) from 57 images, fc8 (4096 x 1000) from 525
    const bool v19 = registry().find(LayerKind::fc, BackendKind::cuda, 19)->check(fc6).ok;
    fc6.in = {9216, 1, 1};
    EXPECT_EQ(heuristic_version(fc6, 56, Precision::tf32, 132)->number, 11);
    for (int n : {57, 128, 256}) EXPECT_EQ(heuristic_version(fc6, n, Precision::tf32, 132)->number, v19 ? 19 : 11) << n;
    Layer fc8 = fc6;
    std::get<FcParams>(fc8.op).outputs = 1000;
    fc8.in = {4096, 1, 1};
    fc8.out = {1000, 1, 1};
    for (int n : {128, 256}) EXPECT_EQ(heuristic_version(fc8, n, Precision::tf32, 132)->number, 11) << n;
    EXPECT_EQ(heuristic_version(fc8, 524, Precision::tf32, 132)->number, 10);
    EXPECT_EQ(heuristic_version(fc8, 525, Precision::tf32, 132)->number, v19 ? 19 : 10);
  }
  Model m;
  m.name = "q";
  m.input = {2, 3, 3};
  FcParams f;
  f.outputs = 5;
  m.layers = {{"flat", FlattenParams{}, {}, {}}, {"fc", f, {}, {}}, {"r", ActParams{Act::relu}, {}, {}}};
  infer_shapes(m, "q");
  std::get<FcParams>(m.layers[1].op).weight.resize(5 * 18);
  EXPECT_EQ(tuning_signature(m, 1, Precision::fp16, WeightFormat::int8), "fc in18 out5 +relu @fp16 w8");
  EXPECT_EQ(tuning_signature(m, 1, Precision::fp32, WeightFormat::int8), "fc in18 out5 +relu w8");
  const Layer& fc = m.layers[1];
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16}) {
    for (int n : {1, 4, kInt8StreamImages}) EXPECT_EQ(heuristic_version(fc, n, p, 132, WeightFormat::int8)->number, 15) << name_of(p) << n;
    EXPECT_EQ(heuristic_version(fc, kInt8StreamImages + 1, p, 132, WeightFormat::int8)->number,
              heuristic_version(fc, kInt8StreamImages + 1, p, 132)->number) << name_of(p);
    EXPECT_NE(heuristic_version(fc, 1, p, 132)->number, 15) << name_of(p);
  }
  BackendOptions o;
  o.weights = WeightFormat::int8;
  o.precision = Precision::fp16;
  const Planner pl(m, BackendKind::cuda, o, DeviceSpec{"test GPU", 132, 9, 0, size_t{1} << 34, size_t{1} << 34});
  const Pass& one = pl.pass(1);
  EXPECT_EQ(one.steps[1].impl->number, 15);
  EXPECT_NE(one.steps[1].describe.find("v15 stream-int8 (fc+relu)"), std::string::npos) << one.steps[1].describe;
  // (O, Kp) bytes, Kp = 2 channels x 9 rounded up to 32 (16-bit NHWC: K = 18, padded to 16s), then 5 scales.
  EXPECT_EQ(one.steps[1].prepared_floats, (5u * 32 + 4 * 5) / 4);
  EXPECT_EQ(plan_json(pl.plan(1), m)["weights"], "int8");
  EXPECT_NE(plan_table(pl.plan(1), m).find("weights int8 (per output channel, quantised at load)"), std::string::npos);
  BackendOptions forced;
  forced.fc_variant = 15;
  test::expect_error_at([&] { Planner(m, BackendKind::cuda, forced, DeviceSpec{}); }, "--fc-variant", "runs with --weights int8 only");
}

// The planner on the cpu backends (the GPU's plans are tested on a GPU, test_gpu_engine.cpp): every layer named with
// what runs it and why; the activation after a convolution or fully connected layer fused into it on cpu, never on
// cpu-ref (the oracle runs every layer as written); the same pass for the same batch.
TEST(Planner, CpuFusesActivationsIntoTheLayerBeforeAndCpuRefNothing) {
  Model m;
  m.name = "p";
  m.input = {1, 6, 6};
  ConvParams c;
  c.filters = 6; c.kh = c.kw = 3;
  c.weight.resize(6 * 9);
  FcParams f;
  f.outputs = 3;
  m.layers = {{"c", c, {}, {}}, {"t", ActParams{Act::tanh}, {}, {}}, {"flat", FlattenParams{}, {}, {}}, {"f", f, {}, {}},
              {"r", ActParams{Act::relu}, {}, {}}, {"s", SoftmaxParams{}, {}, {}}};
  infer_shapes(m, "p");
  std::get<FcParams>(m.layers[3].op).weight.resize(3 * 96);
  const Planner cpu(m, BackendKind::cpu, {}, {});
  const Pass& p = cpu.pass(4);
  EXPECT_EQ(&p, &cpu.pass(4));
  EXPECT_EQ(p.steps[0].describe, "direct (register-blocked) (conv+tanh)");
  EXPECT_EQ(p.steps[0].absorbs, 1u);
  EXPECT_EQ(p.steps[1].fused_into, 0);
  EXPECT_EQ(p.steps[1].describe, "fused into c");
  EXPECT_EQ(p.steps[3].describe, "sgemm (fc+relu)");
  EXPECT_EQ(p.steps[4].fused_into, 3);
  EXPECT_TRUE(p.steps[5].runs());
  const Planner ref(m, BackendKind::cpu_ref, {}, {});
  for (const PlanStep& st : ref.pass(4).steps) {
    EXPECT_TRUE(st.runs());
    EXPECT_EQ(st.describe, "reference loops");
  }
  const Plan whole = cpu.plan(4);
  EXPECT_EQ(whole.chunks, std::vector<int>{4});
  const nlohmann::json j = plan_json(whole, m);
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["passes"][0]["layers"][1]["fused_into"], "c");
  // Why: the convolution's path is the first of two that runs it (a rule); the flatten has one path.
  EXPECT_EQ(p.steps[0].why, Why::heuristic);
  EXPECT_EQ(p.steps[2].why, Why::only);
  // The table: no device columns on the CPU, and each column starts where its heading does.
  const std::string table = plan_table(whole, m);
  EXPECT_NE(table.find("fused into c"), std::string::npos);
  EXPECT_EQ(table.find("workspace"), std::string::npos);
  std::vector<std::string> lines;
  for (size_t a = 0, b; (b = table.find('\n', a)) != std::string::npos; a = b + 1) lines.push_back(table.substr(a, b - a));
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1].find("why"), lines[2].find("heuristic")) << table;
  EXPECT_EQ(lines[1].find("in -> out"), lines[2].find("(1, 6, 6) -> (6, 4, 4)")) << table;
  test::expect_error_at([&] { cpu.pass(0); }, "--batch", "batch sizes must be positive, found 0");
}

TEST(Planner, OverlappedChunksDoubleUpToAQuarterOfTheBatch) {
  EXPECT_EQ(overlapped_chunks(1024, 0), (std::vector<int>{64, 128, 256, 256, 256, 64}));
  EXPECT_EQ(overlapped_chunks(10, 4), (std::vector<int>{4, 4, 2}));
  EXPECT_EQ(overlapped_chunks(20, 0), (std::vector<int>{16, 4}));
}

}  // namespace
