#include "app/commands/throughput.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/exec/datasets.hpp"
#include "app/exec/input_precision.hpp"
#include "app/results/latency_stats.hpp"
#include "app/results/metadata.hpp"
#include "app/results/results_io.hpp"
#include "app/cli/flags.hpp"
#include "app/exec/executor.hpp"
#include "app/exec/interrupt.hpp"
#include "app/exec/world.hpp"
#include "kernels/exec/device_info.hpp"
#include "weights_tools/error.hpp"

namespace bs {

void ThroughputOptions::add_to(CLI::App& app) {
  cmd = &app;
  app.add_option("--model", model_dir, "model folder (or its model.json, or a shipped model: ece408, alexnet)")->type_name("DIR");
  run.add_to(app, {std::nullopt, true, false, HostMemory::pinned});
  add_int(app, "--images", images, "images streamed through per batch size (the shipped test set, repeated as needed, or "
                                   "synthetic images; default: 4096)", 1);
  add_int_list(app, "--batches,--batch", batches, "batch sizes, comma-separated: one measurement each (--batch: the old "
                                                  "spelling, kept for this release)");
  add_int(app, "--streams", streams, "workers, each with its own backend instance and CUDA stream (GPU backends; default: 1)", 1, 64);
  add_int(app, "--warmup", warmup, "untimed batches per worker before the clock starts (default: 2)", 0, 1000000);
  app.add_option("--out", out, "results CSV (FILE.json beside it); without it, the table on stdout only")->type_name("FILE");
  app.add_flag("--global-batch", global_batch, "mpirun: --images and --batches are totals, split across the ranks");
  app.add_flag("--per-rank-batch", per_rank_batch, "mpirun: every rank streams --images at --batches (weak scaling)");
  app.add_flag("--no-baseline", no_baseline, "mpirun: skip the one-rank run that scaling efficiency is measured against");
  app.footer("Examples (shipped models resolve by name from any directory):\n"
             "  batchscope throughput --model ece408 --images 10000 --batches 1,16,256,1024\n"
             "  batchscope throughput --model alexnet --backend cuda --images 8192 --batches 64,256 --streams 2\n"
             "  mpirun -np 2 batchscope throughput --model ece408 --per-rank-batch --batches 256 --out t.csv");
}

void ThroughputOptions::validate(BackendKind backend, int ranks) const {
  require(*cmd, "--model", "the model folder, its model.json, or a shipped model (ece408, alexnet)");
  check_rank_split(ranks, global_batch, per_rank_batch, no_baseline, batches, "--batches",
                   "the work, --global-batch (--images and --batches split across the ranks) or --per-rank-batch (every "
                   "rank runs them whole)");
  if (global_batch && images < ranks)
    usage_fail("--images", "--global-batch: " + std::to_string(images) + " images for " + std::to_string(ranks) + " ranks");
  if (!is_gpu(backend) && streams > 1) usage_fail("--streams", "applies to GPU backends (the CPU backends already use every core)");
  run.validate(backend);
}

namespace {

using Clock = std::chrono::steady_clock;

// One rank's measurement of one batch size.
struct Point {
  int batch = 0, images = 0, first_image = 0;
  double wall = 0;        // from the start to the last batch's outputs on the host, on this rank
  double first_batch = 0;  // the first batch of this size on worker 0 (plans, allocations, cuDNN's search)
  std::vector<double> latencies;  // per batch, seconds: gather from the pool, copy in, compute, copy out
  int correct = -1;               // top-1 matches with the labels; -1 without labels

  NLOHMANN_DEFINE_TYPE_INTRUSIVE(Point, batch, images, first_image, wall, first_batch, latencies, correct)
};

struct Worker {
  std::unique_ptr<Backend> backend;
  std::shared_ptr<float> in, out;
  std::shared_ptr<float> in_conv;  // --input-precision u8 / fp16 / bf16: a wrapped batch gathered in that type
  size_t capacity = 0;  // images the buffers hold
};

class Streamer {
 public:
  Streamer(const ThroughputOptions& o, const Executor& ex, const ImagePool& pool)
      : o_(o), ex_(ex), m_(ex.model()), pool_(pool), opts_(ex.options()), pinned_(opts_.pinned_host) {}

  void open() {
    for (int s = 0; s < o_.streams; ++s) workers_.push_back({ex_.open(), nullptr, nullptr, nullptr, 0});
    // The images wait in host memory (pinned with --host-memory pinned) as a server's input queue would hold
    // them; a batch is read where it lies, and gathered into the worker's buffer only when it wraps around the
    // pool's end.
    const size_t floats = static_cast<size_t>(pool_.count) * m_.input.size();
    staged_ = host_buffer(floats, pinned_);
    std::copy_n(pool_.images.data(), floats, staged_.get());
    // --input-precision u8 / fp16 / bf16: the queue holds the values in that type instead, converted once, before
    // any clock starts.
    if (opts_.input_precision != InputPrecision::fp32) {
      value_bytes_ = input_value_bytes(opts_.input_precision);
      staged_conv_ = host_buffer(input_buffer_floats(floats, opts_.input_precision), pinned_);
      convert_input_bytes(pool_.images.data(), floats, opts_.input_precision, staged_conv_.get());
    }
  }

  // Where batch [start, start + n) of the pool lies: in place, or gathered into `buf`.
  const float* batch_at(int start, int n, const Worker& w) const {
    start %= pool_.count;
    if (staged_conv_) {  // converted values: the same, value_bytes_ each (forward reads them through its float pointer)
      const size_t per = m_.input.size() * value_bytes_;
      const auto* q = reinterpret_cast<const char*>(staged_conv_.get());
      if (start + n <= pool_.count) return reinterpret_cast<const float*>(q + static_cast<size_t>(start) * per);
      auto* d = reinterpret_cast<char*>(w.in_conv.get());
      for (int i = 0; i < n; ++i) std::copy_n(q + static_cast<size_t>((start + i) % pool_.count) * per, per, d + static_cast<size_t>(i) * per);
      return w.in_conv.get();
    }
    float* buf = w.in.get();
    if (start + n <= pool_.count) return staged_.get() + static_cast<size_t>(start) * m_.input.size();
    fill_from_pool(pool_, m_, n, start, buf);
    return buf;
  }

  void reserve(int batch) {
    const size_t in_floats = static_cast<size_t>(m_.input.size()), out_floats = static_cast<size_t>(classes());
    for (Worker& w : workers_)
      if (w.capacity < static_cast<size_t>(batch)) {
        w.in = host_buffer(in_floats * batch, pinned_);
        if (staged_conv_) w.in_conv = host_buffer(input_buffer_floats(in_floats * batch, opts_.input_precision), pinned_);
        w.out = host_buffer(out_floats * batch, pinned_);
        w.capacity = batch;
      }
    if (o_.streams > 1)
      if (std::string why = ex_.planner().concurrency_hazard(batch); !why.empty())
        fail("--streams", std::to_string(o_.streams) + " instances at batch " + std::to_string(batch) + ": " + why +
                              "; use --streams 1 or another --conv-variant");
  }

  // Untimed batches on every worker; returns the time of worker 0's first.
  double warm_up(int batch) {
    double first = 0;
    for (size_t s = 0; s < workers_.size(); ++s)
      for (int k = 0; k < std::max(o_.warmup, s == 0 ? 1 : 0); ++k) {
        Worker& w = workers_[s];
        const auto t = Clock::now();
        w.backend->forward(batch_at(k * batch, batch, w), batch, m_.logits_layers(), w.out.get(), nullptr);
        if (s == 0 && k == 0) first = since(t);
      }
    return first;
  }

  // Streams images [first, first + count) of the pool (wrapping) through the workers in batches.
  Point stream(int batch, int first, int count, bool progress) {
    Point p;
    p.batch = batch;
    p.images = count;
    p.first_image = first;
    const int nb = (count + batch - 1) / batch;
    p.latencies.assign(nb, 0.0);
    std::atomic<int> next{0}, correct{0}, done{0};
    std::atomic<bool> stop{false};
    std::vector<double> finished(workers_.size(), 0.0);  // seconds from t0 to each worker's last batch
    std::exception_ptr error;
    std::mutex error_mu;
    const int64_t f = classes();
    const auto t0 = Clock::now();
    auto work = [&](size_t wi) {
      Worker& w = workers_[wi];
      try {
        use_selected_gpu();
        for (int j; !stop && !interrupted() && (j = next++) < nb;) {
          const int n = std::min(batch, count - j * batch), start = first + j * batch;
          const auto t = Clock::now();
          w.backend->forward(batch_at(start, n, w), n, m_.logits_layers(), w.out.get(), nullptr);
          p.latencies[j] = since(t);
          finished[wi] = since(t0);
          if (!pool_.labels.empty()) {
            int ok = 0;
            for (int i = 0; i < n; ++i) {
              const float* row = w.out.get() + static_cast<size_t>(i) * f;
              ok += std::max_element(row, row + f) - row == pool_.labels[(start + i) % pool_.count];
            }
            correct += ok;
          }
          done += n;
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        stop = true;
      }
    };
    std::vector<std::thread> threads;
    for (size_t s = 1; s < workers_.size(); ++s) threads.emplace_back(work, s);
    if (progress) {  // the main thread reports while one more thread works
      threads.emplace_back(work, size_t{0});
      while (done < count && !stop && !interrupted()) {
        std::cerr << "\rthroughput: batch " << batch << (o_.global_batch ? " per rank" : "") << ": " << done << "/" << count << " images   " << std::flush;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    } else {
      work(0);
    }
    for (std::thread& t : threads) t.join();
    p.wall = *std::max_element(finished.begin(), finished.end());  // not the join: the reporter sleeps between lines
    if (error) {
      if (progress) std::cerr << "\n";
      std::rethrow_exception(error);
    }
    p.correct = pool_.labels.empty() ? -1 : correct.load();
    return p;
  }

  int64_t classes() const { return m_.layers[m_.logits_layers() - 1].out.size(); }
  const Backend& first_backend() const { return *workers_[0].backend; }

 private:
  const ThroughputOptions& o_;
  const Executor& ex_;
  const Model& m_;
  const ImagePool& pool_;
  BackendOptions opts_;
  bool pinned_;
  std::vector<Worker> workers_;
  std::shared_ptr<float> staged_, staged_conv_;
  size_t value_bytes_ = 4;
};

struct RankInfo {
  int rank = 0;
  std::string host;
  nlohmann::json device;
};

struct Row {  // one CSV row: a rank's, or the aggregate ("all")
  std::string rank, host, device;
  int batch = 0, rank_batch = 0, images = 0, batches = 0;
  double wall = 0, ips = 0, first_batch = 0;
  LatencySummary lat;
  double correctness = -1, ips_one_rank = -1, efficiency = -1;
};

std::string csv(const SweepIdentity& id, int ranks, int streams, const std::vector<Row>& rows) {
  std::string out = identity_csv_header() +
                    ",ranks,rank,host,device,batch,rank_batch,streams,images,batches,wall_s,images_per_s,latency_ms_min,"
                    "latency_ms_p50,latency_ms_p90,latency_ms_p99,latency_ms_max,latency_ms_mean,first_batch_ms,"
                    "correctness,images_per_s_one_rank,scaling_efficiency\n";
  auto opt = [](double v) { return v < 0 ? std::string() : csv_num(v); };
  for (const Row& r : rows)
    out += identity_csv_cells(id) + "," + std::to_string(ranks) + "," + r.rank + "," + csv_quote(r.host) + "," +
           csv_quote(r.device) + "," + std::to_string(r.batch) + "," + std::to_string(r.rank_batch) + "," +
           std::to_string(streams) + "," + std::to_string(r.images) + "," + std::to_string(r.batches) + "," +
           csv_num(r.wall) + "," + csv_num(r.ips) + "," + csv_num(r.lat.min * 1e3) + "," + csv_num(r.lat.p50 * 1e3) + "," +
           csv_num(r.lat.p90 * 1e3) + "," + csv_num(r.lat.p99 * 1e3) + "," + csv_num(r.lat.max * 1e3) + "," +
           csv_num(r.lat.mean * 1e3) + "," + csv_num(r.first_batch * 1e3) + "," + opt(r.correctness) + "," +
           opt(r.ips_one_rank) + "," + opt(r.efficiency) + "\n";
  return out;
}

}  // namespace

int run_throughput(ThroughputOptions o) {
  World& world = World::get();
  const BackendKind kind = o.run.resolve_backend();
  o.validate(kind, world.size());
  world.step([&] {
    if (!o.out.empty() && world.root()) {
      check_writable(o.out, "--out");
      check_writable(sibling(o.out, ".json"), "--out");
    }
  });
  const bool gpu = is_gpu(kind);
  BackendOptions opts = o.run.options(kind);  // the CPU backends' buffers are pageable whatever the default
  const std::string host_memory = opts.pinned_host ? "pinned" : "pageable";
  if (!gpu) share_cores(world, opts);

  Model m;
  ImagePool pool;
  std::unique_ptr<Executor> executor;
  std::unique_ptr<Streamer> streamer;
  RankInfo me{world.rank(), world.host(), nlohmann::json{}};
  world.step([&] {
    if (gpu) place_rank_on_gpu(world);
    init_gpu();
    m = load_model_arg(o.model_dir);
    pool = make_image_pool(m, 2 * *std::max_element(o.batches.begin(), o.batches.end()));
    executor = std::make_unique<Executor>(m, kind, opts);
    std::vector<int> mine;
    for (int b : o.batches) mine.push_back(o.global_batch ? split_evenly(b, world.size())[world.rank()] : b);
    executor->check(mine);
    streamer = std::make_unique<Streamer>(o, *executor, pool);
    world.fault_point("load");
    streamer->open();
    me.device = rank_device(gpu);
  });
  const int R = world.size();
  std::vector<RankInfo> ranks;
  for (const std::string& s : world.gather(nlohmann::json{{"rank", me.rank}, {"host", me.host}, {"device", me.device}}.dump()))
    ranks.push_back({nlohmann::json::parse(s).at("rank"), nlohmann::json::parse(s).at("host"), nlohmann::json::parse(s).at("device")});

  std::vector<Row> rows;
  bool stopped = false;  // interrupted: the batch sizes measured so far are written, the one in progress dropped
  for (size_t bi = 0; bi < o.batches.size() && !stopped; ++bi) {
    if (bi > 0) interrupt_point();  // BATCHSCOPE_INTERRUPT_AFTER counts complete batch sizes
    if (world.max(interrupted() ? 1.0 : 0.0) > 0) {
      stopped = true;
      break;
    }
    const int B = o.batches[bi];
    const std::vector<int> img_share = o.global_batch ? split_evenly(o.images, R) : std::vector<int>(R, o.images);
    const std::vector<int> b_share = o.global_batch ? split_evenly(B, R) : std::vector<int>(R, B);
    const int first = o.global_batch ? split_offset(img_share, world.rank()) : 0;
    const int my_b = b_share[world.rank()], my_images = img_share[world.rank()];
    if (world.root() && o.global_batch)
      std::cerr << "throughput: batch " << B << " over " << R << " ranks: " << describe_split(b_share) << " images per batch, "
                << describe_split(img_share) << " images\n";
    double first_batch = 0;
    world.step([&] {
      streamer->reserve(my_b);
      first_batch = streamer->warm_up(my_b);
    });
    Point p;
    const auto t0 = Clock::now();
    world.step([&] {
      world.fault_point("stream");
      p = streamer->stream(my_b, first, my_images, world.root());
    });
    const double step_wall = world.max(since(t0));  // the slowest rank's, between two agreements
    p.first_batch = first_batch;
    if (world.root()) std::cerr << "\r" << std::string(60, ' ') << "\r";
    if (world.max(interrupted() ? 1.0 : 0.0) > 0) {  // a signal during the stream: this batch size is incomplete
      stopped = true;
      break;
    }

    // The one-rank baseline: rank 0 alone runs what one rank would run for the whole job.
    Point solo;
    const bool baseline = world.parallel() && !o.no_baseline;
    if (baseline)
      world.step([&] {
        if (!world.root()) return;
        // Under either split, one rank alone runs all --images at batch B.
        streamer->reserve(B);
        streamer->warm_up(B);
        solo = streamer->stream(B, 0, o.images, false);
      });

    std::vector<std::string> got = world.gather(nlohmann::json(p).dump());
    if (!world.root()) continue;
    std::vector<Point> pts;
    for (const std::string& s : got) pts.push_back(nlohmann::json::parse(s).get<Point>());
    Row all;
    all.rank = "all";
    all.host = R > 1 ? std::to_string(R) + " ranks" : me.host;
    all.device = R > 1 ? "" : device_label(me.device);
    all.batch = B;
    all.rank_batch = b_share[0];
    std::vector<double> lat;
    long long correct = 0;
    bool labelled = true;
    for (int r = 0; r < R; ++r) {
      const Point& q = pts[r];
      all.images += q.images;
      all.batches += static_cast<int>(q.latencies.size());
      lat.insert(lat.end(), q.latencies.begin(), q.latencies.end());
      correct += q.correct;
      labelled &= q.correct >= 0;
      all.first_batch = std::max(all.first_batch, q.first_batch);
      if (R > 1) {
        Row rr;
        rr.rank = std::to_string(r);
        rr.host = ranks[r].host;
        rr.device = device_label(ranks[r].device);
        rr.batch = B;
        rr.rank_batch = q.batch;
        rr.images = q.images;
        rr.batches = static_cast<int>(q.latencies.size());
        rr.wall = q.wall;
        rr.ips = q.images / q.wall;
        rr.first_batch = q.first_batch;
        rr.lat = summarize_latencies(q.latencies);
        rr.correctness = q.correct >= 0 ? static_cast<double>(q.correct) / q.images : -1;
        rows.push_back(rr);
      }
    }
    all.wall = R > 1 ? step_wall : p.wall;
    all.ips = all.images / all.wall;
    all.lat = summarize_latencies(lat);
    all.correctness = labelled ? static_cast<double>(correct) / all.images : -1;
    if (baseline) {
      all.ips_one_rank = solo.images / solo.wall;
      all.efficiency = all.ips / (R * all.ips_one_rank);
    }
    rows.push_back(all);
  }

  if (!world.root()) return stopped ? kInterruptedExit : 0;
  SweepIdentity id;
  id.model = m.name;
  id.weights = m.weights_note;
  id.backend = name_of(kind);
  id.variant = o.run.conv_label(kind);
  id.fc_variant = o.run.fc_label(kind);
  id.precision = name_of(opts.precision);
  id.transfers = gpu ? transfers_label(opts.transfers, opts.cuda_graph, opts.input_precision, opts.copies) : "host";
  id.host_memory = host_memory;
  id.profiler = "off";

  std::printf("== throughput: %s on %s%s, %s host memory, %d stream%s; %d images per batch size%s\n", m.name.c_str(),
              id.backend.c_str(), id.variant.empty() ? "" : (" (conv " + id.variant + ")").c_str(), host_memory.c_str(),
              o.streams, o.streams > 1 ? "s" : "", o.images,
              R > 1 ? (", " + std::to_string(R) + " ranks, " + (o.global_batch ? "global batch" : "per-rank batch")).c_str() : "");
  std::printf("  batch  rank  batches     wall s      images/s    p50 ms    p90 ms    p99 ms    max ms  first ms  correct%s\n",
              R > 1 ? "  1-rank img/s  efficiency" : "");
  for (const Row& r : rows) {
    std::printf("  %5d  %4s  %7d  %9.4f  %12.1f  %8.3f  %8.3f  %8.3f  %8.3f  %8.3f  %7s", r.batch, r.rank.c_str(), r.batches,
                r.wall, r.ips, r.lat.p50 * 1e3, r.lat.p90 * 1e3, r.lat.p99 * 1e3, r.lat.max * 1e3, r.first_batch * 1e3,
                r.correctness < 0 ? "-" : fmt_num(r.correctness).substr(0, 7).c_str());
    if (R > 1 && r.ips_one_rank >= 0) std::printf("  %12.1f  %10.3f", r.ips_one_rank, r.efficiency);
    std::printf("\n");
  }
  if (!o.out.empty()) {
    nlohmann::json j = run_metadata("batchscope throughput", o.command_line, m, pool.source, id.backend, id.variant, id.fc_variant);
    j["precision"] = name_of(opts.precision);
    j["input_precision"] = name_of(opts.input_precision);
    j["host_memory"] = host_memory;
    j["transfers"] = id.transfers;
    if (opts.transfers == Transfers::overlapped) j["chunk"] = opts.chunk;
    j["cuda_graph"] = opts.cuda_graph;
    j["copies"] = name_of(opts.copies);
    j["streams"] = o.streams;
    j["images"] = o.images;
    j["batches"] = o.batches;
    j["warmup_batches_per_worker"] = o.warmup;
    j["scenario"] = "offline: every image available at the start; each worker takes the next batch as soon as it is free";
    j["latency"] = "per batch: copy in from host memory (where the images wait, pinned with --host-memory pinned), "
                   "compute, copy out (wall clock; a batch that wraps around the pool's end is first gathered); "
                   "percentiles interpolate linearly between order statistics";
    j["ranks"] = R;
    if (R > 1) j["split"] = o.global_batch ? "global-batch" : "per-rank-batch";
    nlohmann::json rk = nlohmann::json::array();
    for (const RankInfo& r : ranks) rk.push_back({{"rank", r.rank}, {"host", r.host}, {"device", r.device}});
    j["rank_devices"] = rk;
    j["device"] = ranks[0].device;
    j["host"] = host_info();
    j["interrupted"] = stopped;
    if (stopped) j["interrupt"] = interrupt_name() + ": the batch sizes listed in the CSV are complete; the one in progress was dropped";
    write_text_atomic(sibling(o.out, ".json"), j.dump(2) + "\n");
    write_text_atomic(o.out, csv(id, R, o.streams, rows));
    std::cout << "\nwrote " << o.out << ", " << sibling(o.out, ".json") << "\n";
  }
  if (stopped) {
    std::cerr << "batchscope: interrupted (" << interrupt_name() << "): " << (o.out.empty() ? "printed" : "wrote") << " the batch sizes measured before it\n";
    return kInterruptedExit;
  }
  return 0;
}

}  // namespace bs
