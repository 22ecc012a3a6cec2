// The profiler's arithmetic on synthetic activity records (no GPU needed): categories, the wall-time
// partition, nvprof-style summaries; the sweep's CSV / JSON outputs from a real CPU sweep; and the host conversion of
// its inputs (--input-precision).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/exec/input_precision.hpp"
#include "app/results/latency_stats.hpp"
#include "app/results/results_io.hpp"
#include "app/commands/sweep.hpp"
#include "app/commands/sweep_driver.hpp"
#include "cli_util.hpp"
#include "app/results/trace_export.hpp"
#include "kernels/profile/profile.hpp"
#include "test_util.hpp"
#include "weights_tools/error.hpp"

using namespace bs;

namespace {

Model two_layer_model() {  // conv then fc, enough for kind lookups
  Model m;
  m.name = "synthetic";
  m.input = {1, 4, 4};
  ConvParams c;
  c.filters = 1; c.kh = c.kw = 3;
  m.layers.push_back({"c", c, {}, {}});
  m.layers.push_back({"f", FlattenParams{}, {}, {}});
  FcParams f;
  f.outputs = 2;
  m.layers.push_back({"fc", f, {}, {}});
  infer_shapes(m, "synthetic");
  return m;
}

ProfileRecord rec(RecordType t, const std::string& name, double s, double e, int layer = -1, const std::string& kind = "") {
  return ProfileRecord{.type = t, .name = name, .layer = layer, .start = s, .end = e, .copy_kind = kind};
}

// Each named category of a breakdown holds the hand-computed seconds.
void expect_parts(std::map<std::string, double>& b, std::initializer_list<std::pair<const char*, double>> want) {
  for (auto& [category, seconds] : want) EXPECT_NEAR(b[category], seconds, 1e-12) << category;
}

TEST(Profile, CategoriesFollowLayersCopiesAndApiFamilies) {
  Model m = two_layer_model();
  EXPECT_EQ(category_of(rec(RecordType::kernel, "k", 0, 1, 0), m), "conv");
  EXPECT_EQ(category_of(rec(RecordType::kernel, "k", 0, 1, 2), m), "fc");
  EXPECT_EQ(category_of(rec(RecordType::kernel, "k", 0, 1, -1), m), "other_kernel");
  EXPECT_EQ(category_of(rec(RecordType::memcpy, "[CUDA memcpy HtoD]", 0, 1, -1, "HtoD"), m), "htod");
  EXPECT_EQ(category_of(rec(RecordType::memcpy, "[CUDA memcpy DtoH]", 0, 1, -1, "DtoH"), m), "dtoh");
  EXPECT_EQ(category_of(rec(RecordType::memcpy, "x", 0, 1, -1, "DtoD"), m), "dtod");
  EXPECT_EQ(category_of(rec(RecordType::memset, "[CUDA memset]", 0, 1), m), "memset");
  for (const char* a : {"cudaMalloc", "cudaMallocHost", "cudaHostAlloc"}) EXPECT_EQ(category_of(rec(RecordType::api, a, 0, 1), m), "alloc") << a;
  for (const char* a : {"cudaFree", "cudaFreeHost"}) EXPECT_EQ(category_of(rec(RecordType::api, a, 0, 1), m), "free") << a;
  for (const char* a : {"cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpyToSymbolAsync", "cudaMemsetAsync"})
    EXPECT_EQ(category_of(rec(RecordType::api, a, 0, 1), m), "memcpy_api") << a;
  for (const char* a : {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize"})
    EXPECT_EQ(category_of(rec(RecordType::api, a, 0, 1), m), "sync") << a;
  EXPECT_EQ(category_of(rec(RecordType::api, "cudaLaunchKernel", 0, 1), m), "launch");
  EXPECT_EQ(category_of(rec(RecordType::api, "cudaEventRecord", 0, 1), m), "other_api");
  EXPECT_EQ(category_of(rec(RecordType::cpu, "alloc", 0, 1), m), "alloc");
}

// --copies kernel: the copy kernels (as CUPTI names them, demangled) are booked as the copies they make, outside layers;
// any other kernel outside layers stays other_kernel. A pass: copy kernel in [0, 3], conv [3, 7], fc [7, 8], copy
// kernel out [8, 8.5], the host's synchronisation to 9: htod 3, conv 4, fc 1, dtoh 0.5, host 0.5.
TEST(Profile, CopyKernelsAreBookedAsCopies) {
  Model m = two_layer_model();
  const std::string in = "bs::cuda::(anonymous namespace)::bus_copy_htod_kernel(unsigned char *, const unsigned char *, unsigned long)";
  const std::string out = "bs::cuda::(anonymous namespace)::bus_copy_dtoh_kernel(unsigned char *, const unsigned char *, unsigned long)";
  EXPECT_EQ(bus_copy_direction(in), "HtoD");
  EXPECT_EQ(bus_copy_direction(out), "DtoH");
  EXPECT_EQ(bus_copy_direction("bs::cuda::(anonymous namespace)::u8_to_float_kernel(const uchar4 *, long long, long long, float4 *)"), "");
  EXPECT_EQ(category_of(rec(RecordType::kernel, in, 0, 1, -1), m), "htod");
  EXPECT_EQ(category_of(rec(RecordType::kernel, out, 0, 1, -1), m), "dtoh");
  std::vector<ProfileRecord> r = {rec(RecordType::kernel, in, 0, 3, -1), rec(RecordType::kernel, "conv_kernel", 3, 7, 0),
                                  rec(RecordType::kernel, "fc_kernel", 7, 8, 2), rec(RecordType::kernel, out, 8, 8.5, -1)};
  std::map<std::string, double> b = breakdown(r, m, 0, 9);
  expect_parts(b, {{"htod", 3.0}, {"conv", 4.0}, {"fc", 1.0}, {"dtoh", 0.5}, {"host", 0.5}, {"other_kernel", 0.0}});
}

// A run from t=0 to t=10 (seconds, to keep the arithmetic readable):
//   API cudaMemcpyAsync [0, 2] containing the HtoD copy [0.5, 1.5]
//   API cudaLaunchKernel [2, 2.5]; conv kernel (layer 0) [2.4, 5]
//   API cudaLaunchKernel [3, 3.2]; fc kernel (layer 2) [5, 6]
//   API cudaStreamSynchronize [3.5, 7] containing the DtoH copy [6.2, 6.8]
//   nothing in [7, 10]
// Partition: htod 1; memcpy_api 1 (0-0.5, 1.5-2); launch 0.4 (2-2.4); conv 2.6 (2.4-5); fc 1; sync 0.2+0.2 = 0.4
// (6-6.2, 6.8-7); dtoh 0.6; host 3 (7-10). Total 10.
TEST(Profile, BreakdownPartitionsTheRunGpuFirstThenApiThenHost) {
  Model m = two_layer_model();
  std::vector<ProfileRecord> r = {
      rec(RecordType::api, "cudaMemcpyAsync", 0, 2),          rec(RecordType::memcpy, "[CUDA memcpy HtoD]", 0.5, 1.5, -1, "HtoD"),
      rec(RecordType::api, "cudaLaunchKernel", 2, 2.5, 0),    rec(RecordType::kernel, "conv_kernel", 2.4, 5, 0),
      rec(RecordType::api, "cudaLaunchKernel", 3, 3.2, 2),    rec(RecordType::kernel, "fc_kernel", 5, 6, 2),
      rec(RecordType::api, "cudaStreamSynchronize", 3.5, 7),  rec(RecordType::memcpy, "[CUDA memcpy DtoH]", 6.2, 6.8, -1, "DtoH")};
  std::map<std::string, double> b = breakdown(r, m, 0, 10);
  expect_parts(b, {{"htod", 1.0}, {"memcpy_api", 1.0}, {"launch", 0.4}, {"conv", 2.6}, {"fc", 1.0}, {"sync", 0.4}, {"dtoh", 0.6},
                   {"host", 3.0}});
  double sum = 0;
  for (auto& [k, v] : b) sum += v;
  EXPECT_NEAR(sum, 10.0, 1e-12);
  EXPECT_EQ(b.size(), breakdown_categories().size());
  // Records outside the window are clipped to it.
  std::map<std::string, double> w = breakdown(r, m, 2.4, 5.5);
  EXPECT_NEAR(w["conv"], 2.6, 1e-12);
  EXPECT_NEAR(w["fc"], 0.5, 1e-12);
}

// Copies overlapped with compute on other streams (--transfers overlapped), t = 0..6:
//   conv kernel (layer 0) [0, 4]; HtoD copy [1, 3] under it; DtoH copy [3.5, 5], half under it; fc kernel [5.5, 6].
// Partition: conv 4 (the copies under it are the kernel's), dtoh 1 (4-5), fc 0.5, host 0.5 (5-5.5). Hidden: 2 + 0.5.
TEST(Profile, OverlappedCopiesCountUnderTheKernelAndAsHiddenCopyTime) {
  Model m = two_layer_model();
  std::vector<ProfileRecord> r = {rec(RecordType::kernel, "conv_kernel", 0, 4, 0), rec(RecordType::memcpy, "h", 1, 3, -1, "HtoD"),
                                  rec(RecordType::memcpy, "d", 3.5, 5, -1, "DtoH"), rec(RecordType::kernel, "fc_kernel", 5.5, 6, 2)};
  std::map<std::string, double> b = breakdown(r, m, 0, 6);
  expect_parts(b, {{"conv", 4.0}, {"htod", 0.0}, {"dtoh", 1.0}, {"fc", 0.5}, {"host", 0.5}});
  EXPECT_NEAR(hidden_copy_seconds(r, 0, 6), 2.5, 1e-12);
  EXPECT_NEAR(hidden_copy_seconds(r, 2, 6), 1.5, 1e-12);  // clipped to the window
  // Serial copies hide nothing.
  std::vector<ProfileRecord> serial = {rec(RecordType::memcpy, "h", 0, 1, -1, "HtoD"), rec(RecordType::kernel, "k", 1, 2, 0),
                                       rec(RecordType::memcpy, "d", 2, 3, -1, "DtoH")};
  EXPECT_EQ(hidden_copy_seconds(serial, 0, 3), 0.0);
}

// --trace: GPU records become complete events on one track per host thread and per stream, times in microseconds
// from the run's start, each naming its layer.
TEST(Trace, GpuRecordsGoOnThreadAndStreamTracksInMicroseconds) {
  Model m = two_layer_model();
  ProfileRecord launch = rec(RecordType::api, "cudaLaunchKernel", 10.000002, 10.000004, 0);
  launch.thread = 77;
  ProfileRecord kernel = rec(RecordType::kernel, "conv_kernel", 10.000005, 10.000015, 0);
  kernel.stream = 7;
  ProfileRecord copy = rec(RecordType::memcpy, "[CUDA memcpy HtoD]", 10.000001, 10.000003, -1, "HtoD");
  copy.stream = 9;
  copy.bytes = 4096;
  TraceRun run{"batch 4, warm run 1 of 1", 10.0, 10.00002, {launch, kernel, copy}};
  nlohmann::json j = chrome_trace({run}, m, {{"tool", "batchscope"}});
  std::map<int, std::string> tracks;
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks[e["tid"].get<int>()] = e["args"]["name"];
    if (e["ph"] == "X") by_name[e["name"]] = e;
  }
  EXPECT_EQ(tracks, (std::map<int, std::string>{{0, "run (the measured interval)"}, {1, "CUDA API, host thread 77"},
                                                {2, "GPU stream 7"}, {3, "GPU stream 9"}}));
  EXPECT_EQ(by_name["cudaLaunchKernel"]["tid"], 1);
  EXPECT_EQ(by_name["conv_kernel"]["tid"], 2);
  EXPECT_EQ(by_name["[CUDA memcpy HtoD]"]["tid"], 3);
  EXPECT_NEAR(by_name["conv_kernel"]["ts"].get<double>(), 5.0, 1e-6);
  EXPECT_NEAR(by_name["conv_kernel"]["dur"].get<double>(), 10.0, 1e-6);
  EXPECT_EQ(by_name["conv_kernel"]["args"]["layer"], "c");
  EXPECT_EQ(by_name["conv_kernel"]["cat"], "conv");
  EXPECT_EQ(by_name["[CUDA memcpy HtoD]"]["args"]["bytes"], 4096);
  EXPECT_FALSE(by_name["[CUDA memcpy HtoD]"]["args"].contains("layer"));
  EXPECT_NEAR(by_name["run"]["dur"].get<double>(), 20.0, 1e-6);
  EXPECT_EQ(j["displayTimeUnit"], "ms");
}

TEST(Profile, SummaryCountsCallsMinMaxAndPercentages) {
  std::vector<ProfileRecord> r = {rec(RecordType::kernel, "k1", 0, 3), rec(RecordType::kernel, "k1", 5, 6),
                                  rec(RecordType::kernel, "k2", 0, 1), rec(RecordType::api, "cudaMalloc", 0, 2),
                                  rec(RecordType::api, "cudaFree", 0, 0.5)};
  std::vector<SummaryRow> s = summarize(r);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].section, "GPU activities");
  EXPECT_EQ(s[0].name, "k1");
  EXPECT_EQ(s[0].calls, 2);
  EXPECT_DOUBLE_EQ(s[0].total, 4.0);
  EXPECT_DOUBLE_EQ(s[0].min, 1.0);
  EXPECT_DOUBLE_EQ(s[0].max, 3.0);
  EXPECT_EQ(s[2].section, "API calls");
  EXPECT_EQ(s[2].name, "cudaMalloc");
  std::string text = format_summary(s);
  EXPECT_NE(text.find("GPU activities:   80.00%"), std::string::npos) << text;  // k1: 4 of 5 s
  EXPECT_NE(text.find("API calls:   80.00%"), std::string::npos) << text;       // cudaMalloc: 2 of 2.5 s
}

using test::read_csv;

TEST(SweepOutputs, CpuSweepWritesCsvLayersAndMetadata) {
  test::TempDir d;
  auto p = test::parse_args<SweepOptions>({"--model", test::data_file("models/ece408"), "--backend", "cpu", "--batches", "1,3", "--reps",
                                           "2", "--warmup", "1", "--threads", "2", "--out", d / "r.csv"},
                                          false);
  p->o.command_line = "test";
  ASSERT_EQ(run_sweep(p->o), 0);
  auto rows = read_csv(d / "r.csv");
  ASSERT_EQ(rows.size(), 5u);  // header + (cold, warm) x 2 batches
  EXPECT_EQ(rows[0], sweep_csv_header());
  auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
  };
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    EXPECT_EQ(r[col("backend")], "cpu");
    EXPECT_EQ(r[col("batch")], i <= 2 ? "1" : "3");
    EXPECT_EQ(r[col("run")], i % 2 ? "cold" : "warm");
    EXPECT_EQ(r[col("check")], "ok");
    const double total = std::stod(r[col("total_ms_median")]);
    EXPECT_GT(std::stod(r[col("conv_ms")]), 0.0);
    EXPECT_LE(std::stod(r[col("total_ms_min")]), total);
    EXPECT_GE(std::stod(r[col("total_ms_max")]), total);
    EXPECT_NEAR(std::stod(r[col("images_per_s")]), std::stod(r[col("batch")]) / total * 1e3, 1e-3 * std::stod(r[col("images_per_s")]));
  }
  auto layers = read_csv(d / "r.layers.csv");
  EXPECT_EQ(layers.size(), 1u + 2 * 2 * 8);  // 8 layers before the softmax
  // On the CPU there is no DRAM bandwidth to compare with: the column is there, and empty.
  auto lcol = [&](const std::string& name) { return std::find(layers[0].begin(), layers[0].end(), name) - layers[0].begin(); };
  ASSERT_LT(static_cast<size_t>(lcol("bandwidth_pct")), layers[0].size());
  ASSERT_LT(static_cast<size_t>(lcol("peak_pct")), layers[0].size());
  for (size_t i = 1; i < layers.size(); ++i) {
    EXPECT_EQ(layers[i][lcol("bandwidth_pct")], "");
    EXPECT_EQ(layers[i][lcol("peak_pct")], "");
  }
  std::ifstream js(d / "r.json");
  nlohmann::json j = nlohmann::json::parse(js);
  for (const char* k : {"command", "date", "git_commit", "model", "weights", "backend", "device", "host", "batches", "check",
                        "profiler", "all_checks_passed", "transfers", "host_memory", "plans", "environment", "interrupted"})
    EXPECT_TRUE(j.contains(k)) << k;
  // Each point records the plan it ran: the layers, and what the cpu backend fused (the activations after conv and fc).
  ASSERT_TRUE(j["plans"].contains("3"));
  const auto& layers3 = j["plans"]["3"]["passes"][0]["layers"];
  ASSERT_EQ(layers3.size(), 9u);
  EXPECT_EQ(layers3[1]["fused_into"], "new0");
  EXPECT_EQ(layers3[0]["fused"][0], "activation0");
  EXPECT_EQ(j["interrupted"], false);
  EXPECT_EQ(j["check"]["reference"], "cpu-ref");
  EXPECT_EQ(j["weights"]["kind"], "real");
  EXPECT_EQ(j["all_checks_passed"], true);
  EXPECT_FALSE(j["host"]["cpu"].get<std::string>().empty());
}

// Bytes a layer moves, hand-computed: fc 123 -> 37 at batch 2 reads 2 x 123 inputs and 123 x 37 + 37 weights and writes
// 2 x 37 outputs: 246 + 4,551 + 37 + 74 = 4,908 values, 4 bytes each in fp32 and tf32, 2 in fp16 and bf16. The H100's DRAM: 2,619 MHz, double data
// rate, 5,120 bits: 3,352 GB/s.
TEST(SweepOutputs, LayerBytesFollowThePrecisionAndPeaksTheDeviceClocks) {
  Layer l;
  FcParams f;
  f.outputs = 37;
  f.weight.resize(123 * 37);
  f.bias.resize(37);
  l.op = f;
  l.in = {123, 1, 1};
  l.out = {37, 1, 1};
  EXPECT_DOUBLE_EQ(layer_bytes(l, 2, Precision::fp32), 4.0 * 4908);
  EXPECT_DOUBLE_EQ(layer_bytes(l, 2, Precision::tf32), 4.0 * 4908);
  EXPECT_DOUBLE_EQ(layer_bytes(l, 2, Precision::fp16), 2.0 * 4908);
  EXPECT_DOUBLE_EQ(layer_bytes(l, 2, Precision::bf16), 2.0 * 4908);
  // fc v15 (--weights int8): 320 activation values in the precision, 4,551 weights of one byte, 37 biases and 37 scales of 4.
  EXPECT_DOUBLE_EQ(layer_bytes(l, 2, Precision::fp16, true), 2.0 * 320 + 4551 + 4.0 * 74);
  EXPECT_DOUBLE_EQ(layer_bytes(l, 2, Precision::fp32, true), 4.0 * 320 + 4551 + 4.0 * 74);
  // LRN (96 x 55 x 55) with the 3 x 3 / 2 pooling fused into it reads its input and writes the pooled 96 x 27 x 27: 290,400 +
  // 69,984 values an image, where LRN alone writes 290,400.
  Layer norm;
  norm.op = LrnParams{};
  norm.in = norm.out = {96, 55, 55};
  const Shape pooled{96, 27, 27};
  EXPECT_DOUBLE_EQ(layer_bytes(norm, 3, Precision::fp32, false, &pooled), 4.0 * 3 * (290400 + 69984));
  EXPECT_DOUBLE_EQ(layer_bytes(norm, 3, Precision::fp16), 2.0 * 3 * (290400 + 290400));
  EXPECT_NEAR(dram_gb_per_s({{"memory_clock_mhz", 2619}, {"memory_bus_bits", 5120}}), 3352.32, 1e-6);
  // The H100 SXM's peaks from its clocks, 132 multiprocessors at 1,980 MHz: FP32 2 x 128 x 132 x 1.98 = 66,908 GFLOP/s
  // (NVIDIA's 67 TFLOPS); TF32 8x that, 535,265; FP16 and BF16 16x, 1,070,530 (NVIDIA's 495 and 989 are at the 1,830 MHz
  // its tensor cores hold under load). A100: 108 x 1,410 MHz, FP32 19,492 (19.5), FP16 311,869 (312).
  const nlohmann::json h100 = {{"compute_capability", "9.0"}, {"sm_count", 132}, {"sm_clock_mhz", 1980}};
  EXPECT_NEAR(peak_gflop_per_s(h100, Precision::fp32), 66908.16, 1e-6);
  EXPECT_NEAR(peak_gflop_per_s(h100, Precision::tf32), 535265.28, 1e-6);
  EXPECT_NEAR(peak_gflop_per_s(h100, Precision::fp16), 1070530.56, 1e-6);
  EXPECT_NEAR(peak_gflop_per_s(h100, Precision::bf16), 1070530.56, 1e-6);
  const nlohmann::json a100 = {{"compute_capability", "8.0"}, {"sm_count", 108}, {"sm_clock_mhz", 1410}};
  EXPECT_NEAR(peak_gflop_per_s(a100, Precision::fp32), 19491.84, 1e-6);
  EXPECT_NEAR(peak_gflop_per_s(a100, Precision::fp16), 311869.44, 1e-6);
  EXPECT_EQ(peak_gflop_per_s({{"compute_capability", "7.5"}, {"sm_count", 40}, {"sm_clock_mhz", 1590}}, Precision::fp32), 0.0);  // unknown
  EXPECT_EQ(peak_gflop_per_s(nullptr, Precision::fp32), 0.0);
  EXPECT_EQ(dram_gb_per_s(nullptr), 0.0);                        // no GPU
  EXPECT_EQ(dram_gb_per_s({{"memory_clock_mhz", -1}, {"memory_bus_bits", 5120}}), 0.0);  // unknown clock
}

// Percentiles interpolate between order statistics as numpy.percentile does by default; hand-computed:
// for 1..10, position p/100 * 9, so p50 = 5.5, p90 = 9.1, p99 = 9.91.
TEST(LatencyStats, PercentilesInterpolateLikeNumpy) {
  std::vector<double> v = {7, 3, 10, 1, 9, 2, 8, 6, 4, 5};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 5.5);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 9.1);
  EXPECT_NEAR(percentile(v, 99), 9.91, 1e-12);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 10);
  EXPECT_DOUBLE_EQ(percentile({4.0}, 99), 4.0);
  EXPECT_DOUBLE_EQ(median_of({1, 2, 3, 100}), 2.5);
  LatencySummary s = summarize_latencies(v);
  EXPECT_EQ(s.count, 10);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_EQ(summarize_latencies({}).count, 0);
}

// --min-time repeats a point beyond --reps until that much time has passed; the CSV and JSON carry the
// percentiles of those repetitions, ordered min <= p50 = median <= p90 <= p99 <= max.
TEST(SweepOutputs, MinTimeRepeatsAndReportsPercentiles) {
  test::TempDir d;
  auto p = test::parse_args<SweepOptions>({"--model", test::data_file("models/ece408"), "--backend", "cpu", "--batches", "1", "--reps",
                                           "2", "--min-time", "0.3", "--warmup", "0", "--check-images", "0", "--threads", "1", "--out",
                                           d / "r.csv"},
                                          false);
  ASSERT_EQ(run_sweep(p->o), 0);
  auto rows = read_csv(d / "r.csv");
  ASSERT_EQ(rows.size(), 3u);
  auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
  };
  const auto& w = rows[2];
  ASSERT_EQ(w[col("run")], "warm");
  const int reps = std::stoi(w[col("reps")]);
  EXPECT_GT(reps, 2);  // one ECE 408 image takes milliseconds, so 0.3 s holds many
  const double mn = std::stod(w[col("total_ms_min")]), med = std::stod(w[col("total_ms_median")]),
               p50 = std::stod(w[col("total_ms_p50")]), p90 = std::stod(w[col("total_ms_p90")]),
               p99 = std::stod(w[col("total_ms_p99")]), mx = std::stod(w[col("total_ms_max")]);
  EXPECT_EQ(p50, med);
  EXPECT_LE(mn, p50);
  EXPECT_LE(p50, p90);
  EXPECT_LE(p90, p99);
  EXPECT_LE(p99, mx);
  std::ifstream js(d / "r.json");
  nlohmann::json j = nlohmann::json::parse(js);
  ASSERT_EQ(j["latency"].size(), 2u);
  EXPECT_EQ(j["latency"][1]["reps"], reps);
  EXPECT_NEAR(j["latency"][1]["p99_ms"].get<double>(), p99, 1e-5 * p99);
  EXPECT_EQ(j["min_time_s"], 0.3);
}

TEST(SweepOutputs, BadOptionsFailBeforeWritingAnything) {
  test::TempDir d;
  const std::vector<std::string> base = {"--model", test::data_file("models/ece408"), "--backend", "cpu", "--out", d / "r.csv"};
  auto expect_error = [&](std::vector<std::string> extra, const std::string& needle) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    try {
      run_sweep(test::parse_args<SweepOptions>(args, false)->o);
      ADD_FAILURE() << "no error: " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_TRUE(std::filesystem::is_empty(d.str()));
  };
  expect_error({"--batches", "4,0"}, "--batches: batch sizes must be positive, found 0");
  expect_error({"--batches=-3"}, "--batches: batch sizes must be positive, found -3");
  expect_error({"--backend", "tpu"}, "--backend: unknown backend 'tpu'");
  expect_error({"--out", d / "missing/r.csv"}, "--out: cannot write");
  expect_error({"--batches", "2000000000"}, "of host memory");
  expect_error({"--transfers", "per-layer"}, "--transfers: applies to GPU backends only");
  expect_error({"--host-memory", "locked"}, "--host-memory: unknown host memory 'locked' (expected pageable or pinned)");
  expect_error({"--min-time=-1"}, "--min-time: must be between 0 and 86400");
  expect_error({"--max-reps", "5"}, "--max-reps: must be at least --reps (10), found 5");
  expect_error({"--profiled-passes", "sometimes"}, "--profiled-passes: unknown profiled-pass mode 'sometimes' (expected auto, separate or timed)");
  expect_error({"--profile-reps=-2"}, "--profile-reps: must be at least 1, found -2");
  expect_error({"--profiled-passes", "timed", "--profile-reps", "5"}, "--profile-reps: applies to --profiled-passes separate only");
  expect_error({"--profile-reps", "5"}, "--profile-reps: applies to --profiled-passes separate, which the cpu backend does not use");
  expect_error({"--no-profile", "--profiled-passes", "separate"}, "--profiled-passes: needs the profiler (drop --no-profile)");
  expect_error({"--no-profile", "--profile-reps", "4"}, "--profile-reps: needs the profiler (drop --no-profile)");
  expect_error({"--check-backend", "cpu"}, "--check-backend: cpu would check the cpu backend against itself");
  expect_error({"--check-backend", "cuda"}, "--check-backend: expected cpu-ref or cpu, found 'cuda'");
  expect_error({"--batch", "4"}, "--batch: unknown flag for batchscope; did you mean --batches?");
  expect_error({"--resume"}, "--resume: no earlier sweep to continue");
}

// --profiled-passes: where the breakdown comes from. timed (auto on the CPU): the timed passes, so the passes the
// breakdown partitions are the timed ones. separate: --profile-reps passes of their own after the timed ones; each
// row says how many and their median, which the categories partition (as the timed median does under timed). Two
// profiled passes: a median of two is their mean, so the categories' medians add up to the passes' median whatever
// the timing (with more, medians taken per category need not add up, and a loaded CI machine showed it).
TEST(SweepOutputs, ProfiledPassesSeparateOrTimedSayWhatTheBreakdownPartitions) {
  for (const char* mode : {"auto", "separate"}) {
    const bool separate = std::string(mode) == "separate";
    test::TempDir d;
    std::vector<std::string> args = {"--model", test::data_file("models/ece408"), "--backend", "cpu", "--batches", "2", "--reps",
                                     separate ? "5" : "2", "--warmup", "0", "--check-images", "2", "--threads", "1",
                                     "--profiled-passes", mode, "--out", d / "r.csv"};
    if (separate) args.insert(args.end(), {"--profile-reps", "2"});
    ASSERT_EQ(run_sweep(test::parse_args<SweepOptions>(args, false)->o), 0) << mode;
    auto w = test::warm_row(d / "r.csv", 2);
    ASSERT_FALSE(w.empty()) << mode;
    EXPECT_EQ(w["reps"], separate ? "5" : "2") << mode;
    EXPECT_EQ(w["check"], "ok") << mode;
    EXPECT_EQ(w["breakdown_reps"], "2") << mode;
    const double part = std::stod(w["breakdown_ms_median"]), total = std::stod(w["total_ms_median"]);
    if (!separate) {
      EXPECT_EQ(part, total);
    }
    double sum = 0;
    for (const std::string& c : breakdown_categories()) sum += w[c + "_ms"].empty() ? 0.0 : std::stod(w[c + "_ms"]);
    EXPECT_NEAR(sum, part, 0.05 * part) << mode;  // each pass's categories partition its profiler window, which holds the pass
    auto layers = read_csv(d / "r.layers.csv");
    EXPECT_EQ(layers.size(), 1u + 2 * 8) << mode;  // cold and warm rows of the 8 layers before the softmax
    std::ifstream js(d / "r.json");
    nlohmann::json j = nlohmann::json::parse(js);
    EXPECT_EQ(j["profiled_passes"], separate ? "separate" : "timed") << mode;
  }
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
  EXPECT_EQ(convert_input(ok.data(), ok.size(), InputPrecision::fp16), (std::vector<uint16_t>{0x3c00, 0xfbff, 0x3800}));
  EXPECT_EQ(convert_input(ok.data(), ok.size(), InputPrecision::bf16), (std::vector<uint16_t>{0x3f80, 0xc780, 0x3f00}));
  EXPECT_TRUE(to_input_precision(ok.data(), ok.size(), InputPrecision::fp32).empty());
  const std::vector<float> big = {1.0f, 70000.0f};
  test::expect_error_at([&] { convert_input(big.data(), big.size(), InputPrecision::fp16); }, "--input-precision",
                        "fp16: input value 70000.000000 (value 1 of the batch) exceeds 65504");
  EXPECT_EQ(convert_input(big.data(), big.size(), InputPrecision::bf16)[1], 0x4789);  // 70000 = 0x4788b800: up
}

// --input-precision u8: whole numbers 0..255 become their bytes; anything else is refused with the value and its
// index, not rounded or clamped. The sizes a host buffer needs, and the results' label.
TEST(InputPrecision, EightBitCarriesWholeNumbersAndRefusesTheRest) {
  const std::vector<float> px = {0.0f, 255.0f, 17.0f, 128.0f, 1.0f};
  EXPECT_EQ(to_input_precision(px.data(), px.size(), InputPrecision::u8), (std::vector<uint8_t>{0, 255, 17, 128, 1}));
  const std::vector<uint8_t> h = to_input_precision(px.data(), 2, InputPrecision::fp16);  // 2 bytes per value, little-endian words
  EXPECT_EQ(h, (std::vector<uint8_t>{0x00, 0x00, 0xf8, 0x5b}));           // 255 = 0x5bf8
  for (float bad : {255.5f, -1.0f, 256.0f, 0.25f, NAN, INFINITY}) {
    const std::vector<float> v = {3.0f, bad};
    test::expect_error_at([&] { to_input_precision(v.data(), v.size(), InputPrecision::u8); }, "--input-precision",
                          "(value 1 of the batch) is not a whole number in 0..255");
  }
  EXPECT_EQ(input_value_bytes(InputPrecision::fp32), 4u);
  EXPECT_EQ(input_value_bytes(InputPrecision::bf16), 2u);
  EXPECT_EQ(input_value_bytes(InputPrecision::u8), 1u);
  test::expect_error_at([] { parse_enum<InputPrecision>("int8", "--input-precision"); }, "--input-precision", "unknown input precision 'int8'");
  EXPECT_EQ(input_buffer_floats(5, InputPrecision::u8), 2u);  // 5 bytes in 8
  EXPECT_EQ(input_buffer_floats(8, InputPrecision::u8), 2u);
  EXPECT_EQ(input_buffer_floats(3, InputPrecision::fp16), 2u);
  EXPECT_EQ(input_buffer_floats(3, InputPrecision::fp32), 3u);
  EXPECT_EQ(transfers_label(Transfers::overlapped, true, InputPrecision::u8), "overlapped+graph+in-u8");
  EXPECT_EQ(transfers_label(Transfers::resident, false, InputPrecision::fp32), "resident");
  EXPECT_EQ(transfers_label(Transfers::resident, true, InputPrecision::u8, Copies::kernel), "resident+graph+kernel-copies+in-u8");
}
