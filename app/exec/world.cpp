#include "app/exec/world.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "weights_tools/error.hpp"

#ifdef BATCHSCOPE_HAVE_MPI
#include <mpi.h>
#endif

namespace bs {
namespace {

World* g_world = nullptr;

// The ranks a launcher started (Open MPI, MPICH/Hydra, Slurm's PMI), or 0 when none did.
int launched_ranks() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"})
    if (const char* s = std::getenv(v); s && *s) return std::atoi(s);
  return 0;
}

[[maybe_unused]] int launched_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* s = std::getenv(v); s && *s) return std::atoi(s);
  return 0;
}

std::string hostname() {
  char buf[256] = "";
  gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

World& World::init(int* argc, char*** argv) {
  static World w;
  g_world = &w;
  w.host_ = hostname();
  const int launched = launched_ranks();
#ifdef BATCHSCOPE_HAVE_MPI
  if (launched > 0) {
    MPI_Init(argc, argv);
    w.mpi_ = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &w.size_);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank_, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &w.local_rank_);
    MPI_Comm_size(local, &w.local_size_);
    MPI_Comm_free(&local);
  }
#else
  (void)argc;
  (void)argv;
  if (launched > 1) {
    w.rank_ = launched_rank();
    w.size_ = launched;
    fail("mpirun", "started " + std::to_string(launched) + " ranks, but this build has no MPI (install libopenmpi-dev "
                   "and rebuild, or run one process without mpirun)");
  }
#endif
  return w;
}

World& World::get() {
  if (!g_world) {
    static World single;
    single.host_ = hostname();
    g_world = &single;
  }
  return *g_world;
}

void World::finalize() {
#ifdef BATCHSCOPE_HAVE_MPI
  if (mpi_) {
    MPI_Finalize();
    mpi_ = false;
  }
#endif
}

void World::barrier() {
#ifdef BATCHSCOPE_HAVE_MPI
  if (mpi_) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void World::fail_all(const std::string& my_error, bool usage) {
  int failed = my_error.empty() ? 0 : 1;
#ifdef BATCHSCOPE_HAVE_MPI
  if (mpi_) {
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any) return;
    // The first failing rank's message, on every rank.
    int who = failed ? rank_ : size_;
    int first = 0;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    std::string msg = rank_ == first ? "rank " + std::to_string(rank_) + " (" + host_ + "): " + my_error : "";
    int len = static_cast<int>(msg.size());
    MPI_Bcast(&len, 1, MPI_INT, first, MPI_COMM_WORLD);
    msg.resize(len);
    MPI_Bcast(msg.data(), len, MPI_CHAR, first, MPI_COMM_WORLD);
    throw RankFailure(msg, usage);
  }
#endif
  if (failed) throw RankFailure(my_error, usage);
}

void World::step(const std::function<void()>& work, bool* more) {
  if (!mpi_) {  // one process: its own error as it was thrown; *more stays its own answer
    work();
    return;
  }
  std::string error;
  bool usage = false;
  try {
    work();
  } catch (const RankFailure&) {
    throw;  // already agreed by every rank
  } catch (const UsageError& e) {
    error = e.what();
    usage = true;
  } catch (const Error& e) {
    error = e.what();
  } catch (const std::exception& e) {
    error = std::string("internal error: ") + e.what();
  }
#ifndef BATCHSCOPE_HAVE_MPI
  (void)more;  // mpi_ is never set without MPI
  (void)usage;
#else
  // One allreduce carries both answers: whether any rank failed (2: with a mistake in the command line), and whether
  // any wants more.
  int mine[2] = {error.empty() ? 0 : usage ? 2 : 1, more && *more ? 1 : 0}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (all[0]) fail_all(error, all[0] == 2);
  if (more) *more = all[1] != 0;
#endif
}

#ifdef BATCHSCOPE_HAVE_MPI
namespace {
template <typename T>
T allreduce(T v, MPI_Datatype type, MPI_Op op) {
  T r{};
  MPI_Allreduce(&v, &r, 1, type, op, MPI_COMM_WORLD);
  return r;
}
}  // namespace
#endif

double World::max(double v) {
#ifdef BATCHSCOPE_HAVE_MPI
  if (mpi_) return allreduce(v, MPI_DOUBLE, MPI_MAX);
#endif
  return v;
}

long long World::sum(long long v) {
#ifdef BATCHSCOPE_HAVE_MPI
  if (mpi_) return allreduce(v, MPI_LONG_LONG, MPI_SUM);
#endif
  return v;
}

std::vector<std::string> World::gather(const std::string& s) {
  if (!mpi_) return {s};
#ifdef BATCHSCOPE_HAVE_MPI
  int len = static_cast<int>(s.size());
  std::vector<int> lens(rank_ == 0 ? size_ : 0), offsets;
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank_ == 0) {
    int total = 0;
    for (int l : lens) {
      offsets.push_back(total);
      total += l;
    }
    all.resize(total);
  }
  MPI_Gatherv(s.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < static_cast<int>(lens.size()); ++r) out.push_back(all.substr(offsets[r], lens[r]));
  return out;
#else
  return {s};
#endif
}

std::string World::broadcast(const std::string& s) {
  if (!mpi_) return s;
#ifdef BATCHSCOPE_HAVE_MPI
  int len = static_cast<int>(s.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string out = rank_ == 0 ? s : std::string(len, '\0');
  MPI_Bcast(out.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
#else
  return s;
#endif
}

void World::fault_point(const std::string& phase) const {
  const char* f = std::getenv("BATCHSCOPE_FAULT");
  if (!f || !*f) return;
  const std::string spec = f;
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return;
  if (std::atoi(spec.substr(0, colon).c_str()) == rank_ && spec.substr(colon + 1) == phase)
    fail("BATCHSCOPE_FAULT", "injected failure at '" + phase + "' (a test of the failure path)");
}

std::vector<int> split_evenly(int total, int parts) {
  std::vector<int> s(parts, total / parts);
  for (int i = 0; i < total % parts; ++i) ++s[i];
  return s;
}

int split_offset(const std::vector<int>& shares, int rank) {
  int first = 0;
  for (int r = 0; r < rank; ++r) first += shares[r];
  return first;
}

void check_rank_split(int ranks, bool global_batch, bool per_rank_batch, bool no_baseline, const std::vector<int>& batches,
                      const std::string& batch_flag, const std::string& how) {
  if (global_batch && per_rank_batch) fail("--global-batch", "cannot be combined with --per-rank-batch");
  if (ranks == 1 && (global_batch || per_rank_batch || no_baseline))
    fail(global_batch ? "--global-batch" : per_rank_batch ? "--per-rank-batch" : "--no-baseline",
         "applies under mpirun with more than one rank");
  if (ranks > 1 && !global_batch && !per_rank_batch)
    fail("mpirun", std::to_string(ranks) + " ranks: say how they share " + how);
  if (global_batch)
    for (int b : batches)
      if (b < ranks) fail(batch_flag, "--global-batch: batch " + std::to_string(b) + " is smaller than the " +
                                          std::to_string(ranks) + " ranks");
}

std::string describe_split(const std::vector<int>& shares) {
  std::string out;
  for (int v : shares) out += (out.empty() ? "" : "+") + std::to_string(v);
  return out;
}

}  // namespace bs
