// The ranks of an MPI job (mpirun -np N batchscope ...), or one rank when there is no MPI: every
// collective below is then a no-op, so the commands run the same code either way.
//
// Failures: a rank that fails must not leave the others waiting in a collective. Work between
// collectives runs inside World::step(), which catches the rank's error, and every rank leaves the step
// together: when any rank failed, all of them throw RankFailure, carrying the first failing rank's message
// ("rank 1 (host a): ..."); main prints it once, on rank 0, and every rank exits non-zero. Rank 0 alone
// writes the outputs (temporary names, renamed when complete), so a failed job leaves nothing behind.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bs {

class RankFailure : public std::runtime_error {
 public:
  explicit RankFailure(const std::string& what, bool usage = false) : std::runtime_error(what), usage(usage) {}
  bool usage;  // the failing rank's error was a mistake in the command line (exit status 2)
};

class World {
 public:
  // Starts MPI when this build has it and mpirun (or another MPI launcher) started the process; fails
  // with one line when a launcher started several ranks but the build has no MPI.
  static World& init(int* argc, char*** argv);
  static World& get();
  void finalize();

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // among the ranks on this host: picks the GPU
  int local_size() const { return local_size_; }
  bool parallel() const { return size_ > 1; }
  bool root() const { return rank_ == 0; }
  const std::string& host() const { return host_; }

  void barrier();
  // Runs `work` on this rank; then every rank learns whether any rank failed (throwing RankFailure on
  // all of them if so) and whether any rank asked for more (`*more`, in and out: OR over the ranks).
  // The agreement is one small allreduce, so it doubles as the barrier that ends a timed interval.
  void step(const std::function<void()>& work, bool* more = nullptr);
  double max(double v);
  long long sum(long long v);
  // Every rank's string, on rank 0 (others get an empty vector); in rank order.
  std::vector<std::string> gather(const std::string& s);
  std::string broadcast(const std::string& s);  // rank 0's string, on every rank

  // Test aid: BATCHSCOPE_FAULT=RANK:PHASE makes that rank fail when it reaches the named phase
  // (world.fault_point("cold")), to exercise the failure path without a broken GPU.
  void fault_point(const std::string& phase) const;

 private:
  World() = default;
  void fail_all(const std::string& my_error, bool usage = false);  // collective: throws RankFailure when any rank failed
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool mpi_ = false;
  std::string host_;
};

// Splits `total` into `parts` shares that differ by at most one, the first ones larger: 10 over 4 ->
// 3, 3, 2, 2.
std::vector<int> split_evenly(int total, int parts);
std::string describe_split(const std::vector<int>& shares);  // "3+3+2+2"
int split_offset(const std::vector<int>& shares, int rank);  // the sum of the shares before `rank`'s

// The flags that say how `ranks` ranks share the work: --global-batch or --per-rank-batch (one of them needed
// under mpirun, neither without), --no-baseline; every batch of `batch_flag` must reach one per rank under
// --global-batch. `how` completes "N ranks: say how they share ..." in the error.
void check_rank_split(int ranks, bool global_batch, bool per_rank_batch, bool no_baseline, const std::vector<int>& batches,
                      const std::string& batch_flag, const std::string& how);

}  // namespace bs
