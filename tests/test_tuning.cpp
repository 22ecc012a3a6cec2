// The tuning table (kernels/plan/tuning.hpp), the kernel menus (kernels/plan/menus.hpp) and the backend flags
// (app/cli/backend_flags.hpp): everything auto's choice and the variant flags rest on that runs without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "app/exec/input_precision.hpp"

#include <cstdlib>

#include "app/cli/backend_flags.hpp"
#include "kernels/plan/menus.hpp"
#include "kernels/plan/tuning.hpp"
#include "test_util.hpp"

using namespace bs;

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
  EXPECT_EQ(tuning_json(r), tuning_json(t));
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
      {replace("\"best\": 14", "\"best\": 99"), "best version 99 is not on the conv menu"},
      {replace("\"best\": 5", "\"best\": 14"), "best version 14 is not on the fc menu"},
      {replace("\"batch\": 16", "\"batch\": -16"), "batch must be positive"},
      {replace("\"kind\": \"fc\"", "\"kind\": \"lrn\""), "kind 'lrn', expected conv or fc"},
      {replace("\"signature\": \"fc in9216 out4096 +relu\",", ""), "corrupt tuning table"},
      {replace("\"best\": 5", "\"best\": \"five\""), "corrupt tuning table"},
      {replace("\"12\": 1.5", "\"twelve\": 1.5"), "corrupt tuning table: a version key is not a number"},
  };
  for (const Case& c : cases) {
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
  EXPECT_EQ(parse_conv_variant("13"), 13);
  EXPECT_EQ(parse_conv_variant("v13"), 13);
  EXPECT_EQ(parse_conv_variant("gemm-3xtf32"), 13);
  EXPECT_EQ(parse_conv_variant("gemm-3xtf32-64"), 14);
  EXPECT_EQ(parse_conv_variant("auto"), kAutoVariant);
  EXPECT_EQ(parse_fc_variant("stream"), 5);
  EXPECT_EQ(parse_fc_variant("v8"), 8);
  EXPECT_EQ(parse_conv_variant("gemm-tf32"), 16);
  EXPECT_EQ(parse_fc_variant("gemm-tf32-64"), 11);
  test::expect_error_at([] { parse_conv_variant("37"); }, "--conv-variant", "unknown variant '37' (choose auto or one of: 1 direct");
  test::expect_error_at([] { parse_fc_variant("gemm"); }, "--fc-variant", "11 gemm-tf32-64, 12 gemm-half, 13 gemm-half-64)");
}

TEST(Precision, NamesTolerancesAndWhichVersionsEachAllows) {
  EXPECT_NO_THROW(check_precision("fp32"));
  EXPECT_NO_THROW(check_precision("tf32"));
  EXPECT_NO_THROW(check_precision("fp16"));
  EXPECT_NO_THROW(check_precision("bf16"));
  test::expect_error_at([] { check_precision("fp64"); }, "--precision", "unknown precision 'fp64'");
  EXPECT_NO_THROW(check_input_precision("fp32", "tf32"));
  EXPECT_NO_THROW(check_input_precision("fp16", "fp16"));
  EXPECT_NO_THROW(check_input_precision("bf16", "bf16"));
  test::expect_error_at([] { check_input_precision("fp16", "bf16"); }, "--input-precision", "fp16 needs --precision fp16");
  test::expect_error_at([] { check_input_precision("half", "fp16"); }, "--input-precision", "unknown precision 'half'");
  for (const char* p : {"fp32", "tf32", "fp16", "bf16"}) EXPECT_NO_THROW(check_input_precision("u8", p)) << p;
  EXPECT_DOUBLE_EQ(precision_tolerance("fp32"), 1e-4);
  EXPECT_DOUBLE_EQ(precision_tolerance("tf32"), 5e-3);
  EXPECT_DOUBLE_EQ(precision_tolerance("fp16"), 1e-2);
  EXPECT_DOUBLE_EQ(precision_tolerance("bf16"), 5e-2);
  EXPECT_EQ(allowed_variants(true, "fp16"), "v19, v20, v21, v22");
  EXPECT_EQ(allowed_variants(true, "bf16"), "v19, v20, v21, v22");
  EXPECT_EQ(allowed_variants(false, "bf16"), "v12, v13");
  // Every version computes in exactly one precision; tf32 runs the TF32 engine versions and, for fc, the
  // memory-bound stream kernel.
  EXPECT_EQ(allowed_variants(true, "tf32"), "v16, v17, v18, v23, v24, v25, v26, v27, v28, v29, v30, v31, v32, v33");
  EXPECT_EQ(allowed_variants(false, "tf32"), "v5, v10, v11");
  EXPECT_EQ(allowed_variants(true, "fp32"), "v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15, v34, v35, v36");
  for (const MenuEntry& e : conv_menu())
    EXPECT_TRUE(std::string(e.precision) == "fp32" || std::string(e.precision) == "tf32" || std::string(e.precision) == "fp16/bf16");
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
  EXPECT_EQ(tuning_signature(m, 0, "tf32"), "fc in4 out2 @tf32");
  EXPECT_EQ(tuning_signature(m, 0, "fp16"), "fc in4 out2 @fp16");
}

TEST(Precision, FlagsRefuseTheCpuBackendsAndVersionsOfTheOtherPrecision) {
  BackendFlags f;
  f.precision = "tf32";
  test::expect_error_at([&] { f.validate("cpu"); }, "--precision", "the cpu backend computes in fp32 only");
  EXPECT_NO_THROW(f.validate("cudnn"));
  EXPECT_NO_THROW(f.validate("cuda"));
  f.conv_variant = "13";
  test::expect_error_at([&] { f.validate("cuda"); }, "--conv-variant", "13 computes in fp32; with --precision tf32 choose auto or one of v16, v17, v18");
  f.conv_variant = "gemm-tf32-64";
  EXPECT_NO_THROW(f.validate("cuda"));
  f.fc_variant = "7";
  test::expect_error_at([&] { f.validate("cuda"); }, "--fc-variant", "one of v5, v10, v11");
  f.fc_variant = "stream";
  EXPECT_NO_THROW(f.validate("cuda"));
  f = {};
  f.precision = "fp16";
  f.conv_variant = "17";
  test::expect_error_at([&] { f.validate("cuda"); }, "--conv-variant", "17 computes in tf32; with --precision fp16 choose auto or one of v19, v20, v21, v22");
  f.conv_variant = "gemm-half-64";
  f.fc_variant = "12";
  EXPECT_NO_THROW(f.validate("cuda"));
  f.precision = "fp32";
  test::expect_error_at([&] { f.validate("cuda"); }, "--conv-variant", "21 computes in fp16/bf16; with --precision fp32");
  f = {};
  for (const char* p : {"fp16", "bf16"}) {  // both GPU backends run the 16-bit precisions; the cpu ones refuse them
    f.precision = p;
    EXPECT_NO_THROW(f.validate("cudnn")) << p;
    EXPECT_NO_THROW(f.validate("cuda")) << p;
    test::expect_error_at([&] { f.validate("cpu-ref"); }, "--precision", "the cpu-ref backend computes in fp32 only");
  }
  f.precision = "half";
  test::expect_error_at([&] { f.validate("cuda"); }, "--precision", "unknown precision 'half'");
  EXPECT_EQ(f.options().precision, "half");  // validate() is what refuses; options() copies
}

TEST(Precision, TheCpuBackendsAreTheFp32Reference) {
  BackendOptions o;
  o.precision = "tf32";
  test::expect_error_at([&] { make_backend("cpu", o); }, "--precision", "the cpu backend computes in fp32 only");
  test::expect_error_at([&] { make_backend("cpu-ref", o); }, "--precision", "the cpu-ref backend computes in fp32 only");
  o.precision = "bf16";
  test::expect_error_at([&] { make_backend("cpu", o); }, "--precision", "the cpu backend computes in fp32 only");
}

TEST(Menus, TheListingHasEveryVersionAndPolicy) {
  const std::string text = menus_text();
  for (const MenuEntry& e : conv_menu()) EXPECT_NE(text.find("v" + std::to_string(e.number) + " "), std::string::npos) << e.name;
  for (const MenuEntry& e : conv_menu()) EXPECT_NE(text.find(e.name), std::string::npos);
  for (const MenuEntry& e : fc_menu()) EXPECT_NE(text.find(e.name), std::string::npos);
  for (const Policy& p : cudnn_algo_policies()) EXPECT_NE(text.find(p.name), std::string::npos);
  EXPECT_NE(text.find(conv_auto_heuristic()), std::string::npos);
  EXPECT_NE(text.find(fc_auto_heuristic()), std::string::npos);
  // numbers are unique and in order, so that CSVs name one version each
  for (const auto* menu : {&conv_menu(), &fc_menu()})
    for (size_t i = 0; i < menu->size(); ++i) EXPECT_EQ((*menu)[i].number, static_cast<int>(i) + 1);
}

TEST(BackendFlagsTest, AFlagTheBackendDoesNotUseIsAnError) {
  BackendFlags f;
  EXPECT_NO_THROW(f.validate("cpu"));
  f.conv_variant = "99";
  test::expect_error_at([&] { f.validate("cpu"); }, "--conv-variant", "the cpu backend does not use it (it applies to --backend cuda)");
  test::expect_error_at([&] { f.validate("cuda"); }, "--conv-variant", "unknown variant '99'");
  f.conv_variant = "13";
  EXPECT_NO_THROW(f.validate("cuda"));
  test::expect_error_at([&] { f.validate("cudnn"); }, "--conv-variant", "the cudnn backend does not use it");
  f = {};
  f.fc_variant = "stream";
  test::expect_error_at([&] { f.validate("cpu-ref"); }, "--fc-variant", "does not use it");
  f = {};
  f.tuning = "t.json";
  test::expect_error_at([&] { f.validate("cudnn"); }, "--tuning", "the cudnn backend does not use it (it applies to --backend cuda)");
  f = {};
  f.cudnn_algos = "exact";
  test::expect_error_at([&] { f.validate("cuda"); }, "--cudnn-algos", "(it applies to --backend cudnn)");
  EXPECT_NO_THROW(f.validate("cudnn"));
  EXPECT_EQ(f.options().cudnn_algos, "exact");
  f.cudnn_algos = "fast";
  test::expect_error_at([&] { f.validate("cudnn"); }, "--cudnn-algos", "expected fastest or exact, found 'fast'");
  f = {};
  EXPECT_EQ(f.options().cudnn_algos, "fastest");
  f.threads = 2;
  test::expect_error_at([&] { f.validate("cuda"); }, "--threads", "(it applies to --backend cpu and cpu-ref)");
  EXPECT_NO_THROW(f.validate("cpu"));
}

}  // namespace

// --input-precision's host conversion against values worked out by hand from the formats (IEEE binary16: 5 exponent
// bits, bias 15, 10 fraction bits; bfloat16: FP32's top 16 bits), rounding to nearest even at every boundary kind.
TEST(InputPrecision, HostConversionRoundsToNearestEven) {
  EXPECT_EQ(fp16_bits(1.0f), 0x3c00);
  EXPECT_EQ(fp16_bits(-2.0f), 0xc000);
  EXPECT_EQ(fp16_bits(0.0f), 0x0000);
  EXPECT_EQ(fp16_bits(-0.0f), 0x8000);
  EXPECT_EQ(fp16_bits(65504.0f), 0x7bff);                  // the largest finite
  EXPECT_EQ(fp16_bits(65519.0f), 0x7bff);                  // below the midpoint 65520: down
  EXPECT_EQ(fp16_bits(65520.0f), 0x7c00);                  // the midpoint, 65504's fraction odd: up, to inf
  EXPECT_EQ(fp16_bits(1.0f / 3.0f), 0x3555);               // 0.333251953125
  EXPECT_EQ(fp16_bits(0.1f), 0x2e66);
  EXPECT_EQ(fp16_bits(1.0f + 1.0f / 2048), 0x3c00);        // a tie: to the even 1.0
  EXPECT_EQ(fp16_bits(1.0f + 3.0f / 2048), 0x3c02);        // a tie: to the even 1 + 2/1024
  EXPECT_EQ(fp16_bits(std::ldexp(1.0f, -14)), 0x0400);     // the smallest normal
  EXPECT_EQ(fp16_bits(std::ldexp(1.0f, -24)), 0x0001);     // the smallest subnormal
  EXPECT_EQ(fp16_bits(std::ldexp(1.0f, -25)), 0x0000);     // half of it: a tie, to even 0
  EXPECT_EQ(fp16_bits(std::ldexp(3.0f, -25)), 0x0002);     // 1.5 steps: a tie, to even 2
  EXPECT_EQ(fp16_bits(std::ldexp(1023.75f, -24)), 0x0400);  // rounds up across into the normals
  EXPECT_EQ(fp16_bits(INFINITY), 0x7c00);
  EXPECT_EQ(fp16_bits(NAN) & 0x7e00, 0x7e00);
  EXPECT_EQ(bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits(1.0f / 3.0f), 0x3eab);               // 0x3eaaaaab: up
  EXPECT_EQ(bf16_bits(-3.0e38f), 0xff62);                  // FP32's range: 0xff61b1e6 rounds up
  EXPECT_EQ(bf16_bits(1.0f + 1.0f / 256), 0x3f80);         // a tie: to even
  EXPECT_EQ(bf16_bits(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_EQ(bf16_bits(NAN) & 0x7fc0, 0x7fc0);
  const std::vector<float> ok = {1.0f, -65504.0f, 0.5f};
  EXPECT_EQ(convert_input(ok.data(), ok.size(), "fp16"), (std::vector<uint16_t>{0x3c00, 0xfbff, 0x3800}));
  EXPECT_EQ(convert_input(ok.data(), ok.size(), "bf16"), (std::vector<uint16_t>{0x3f80, 0xc780, 0x3f00}));
  EXPECT_TRUE(to_input_precision(ok.data(), ok.size(), "fp32").empty());
  const std::vector<float> big = {1.0f, 70000.0f};
  test::expect_error_at([&] { convert_input(big.data(), big.size(), "fp16"); }, "--input-precision",
                        "fp16: input value 70000.000000 (value 1 of the batch) exceeds 65504");
  EXPECT_EQ(convert_input(big.data(), big.size(), "bf16")[1], 0x4789);  // 70000 = 0x4788b800: up
}

// --input-precision u8: whole numbers 0..255 become their bytes; anything else is refused with the value and its
// index, not rounded or clamped. The sizes a host buffer needs, and the results' label.
TEST(InputPrecision, EightBitCarriesWholeNumbersAndRefusesTheRest) {
  const std::vector<float> px = {0.0f, 255.0f, 17.0f, 128.0f, 1.0f};
  EXPECT_EQ(to_input_precision(px.data(), px.size(), "u8"), (std::vector<uint8_t>{0, 255, 17, 128, 1}));
  const std::vector<uint8_t> h = to_input_precision(px.data(), 2, "fp16");  // 2 bytes per value, little-endian words
  EXPECT_EQ(h, (std::vector<uint8_t>{0x00, 0x00, 0xf8, 0x5b}));           // 255 = 0x5bf8
  for (float bad : {255.5f, -1.0f, 256.0f, 0.25f, NAN, INFINITY}) {
    const std::vector<float> v = {3.0f, bad};
    test::expect_error_at([&] { to_input_precision(v.data(), v.size(), "u8"); }, "--input-precision",
                          "(value 1 of the batch) is not a whole number in 0..255");
  }
  EXPECT_EQ(input_value_bytes("fp32"), 4u);
  EXPECT_EQ(input_value_bytes("bf16"), 2u);
  EXPECT_EQ(input_value_bytes("u8"), 1u);
  test::expect_error_at([] { input_value_bytes("int8"); }, "--input-precision", "unknown precision 'int8'");
  EXPECT_EQ(input_buffer_floats(5, "u8"), 2u);  // 5 bytes in 8
  EXPECT_EQ(input_buffer_floats(8, "u8"), 2u);
  EXPECT_EQ(input_buffer_floats(3, "fp16"), 2u);
  EXPECT_EQ(input_buffer_floats(3, "fp32"), 3u);
  EXPECT_EQ(transfers_label("overlapped", true, "u8"), "overlapped+graph+in-u8");
  EXPECT_EQ(transfers_label("resident", false, "fp32"), "resident");
}
