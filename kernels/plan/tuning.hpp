// The tuning table: which convolution and fully connected version was fastest for each layer and batch size
// on one device, measured by `batchscope tune`, and read by the cuda backend's `auto`.
//
// A layer is named by its signature: its kind, shape and parameters, plus the layers a variant may fuse into
// it (an activation; a 2x2 max pool after a convolution), since those change what is timed, e.g.
// "conv in(96,27,27) m256 k5x5 s1x1 p2x2 g2 +relu" or "fc in9216 out4096 +relu". Two models with the same
// layer share its entries. For a batch size the table has not measured, the nearest measured batch size of
// that signature counts (nearest in log2; a tie goes to the larger).
//
// The file is JSON: {"format": "batchscope-tuning", "version": 1, "device": {"name", "sm_count",
// "compute_capability", "driver"}, "commit", "date", "command", "model", "entries": [{"kind": "conv"|"fc",
// "layer", "signature", "batch", "best", "times_ms": {"<version>": ms, ...}, "unsupported": {"<version>":
// reason}, "errors": {"<version>": relative L2}, "error_budget": x}]}. A table from another device, or one that is
// not such a file, is refused with one line naming it.
//
// Accuracy: tune measures each candidate's output against a reference on the same input (the cpu backend, FP32 with
// OpenBLAS, on the first images) and chooses the fastest of those within the error budget (layer_error_budget, or
// tune's --error-budget); a version outside it is timed and recorded but never chosen. Tables written before errors
// were measured have none (errors empty, error_budget 0): their choices are time alone.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels/model/model.hpp"
#include "kernels/plan/options.hpp"

namespace bs {

struct TuningEntry {
  std::string kind;  // "conv" or "fc"
  std::string layer, signature;
  int batch = 0;
  int best = 0;
  std::map<int, double> times_ms;            // version -> median ms of the layer with what it fuses
  std::map<int, std::string> unsupported;    // version -> why not
  std::map<int, double> errors;              // version -> relative L2 of its output against the reference
  double error_budget = 0;                   // best was the fastest version with an error within it (0: not measured)
};

// The error a version may add to one layer's output (relative L2 against an FP32 reference) for tune to choose it:
// fp32 1e-6 (eight such layers keep AlexNet within 3e-6 of an independent forward: experiments/tuning-accuracy.md),
// tf32 and fp16 2e-3, bf16 1.6e-2 (the GPU tests' per-layer tolerances: one product of operands rounded to 11 or 8
// significant bits).
double layer_error_budget(Precision p);

// The fastest version of `e` (times_ms) whose error is within `budget` (all of them where e has no errors); none
// within it: the most accurate (its error is then above the budget, which tune reports). 0 when nothing was timed.
int choose_best(const TuningEntry& e, double budget);

struct TuningDevice {
  std::string name, compute_capability;
  int sm_count = 0;
  std::string driver;
};

struct TuningTable {
  TuningDevice device;
  std::string commit, date, command, model;
  bool interrupted = false;  // the run that wrote it stopped early: the entries it has are complete, others are missing
  std::map<std::string, std::string> environment;  // the BATCHSCOPE_* variables set for the run that measured it
  std::vector<TuningEntry> entries;

  // The best version for (kind, signature) at batch n, from n's entry or the nearest batch size measured.
  std::optional<int> lookup(const std::string& kind, const std::string& signature, int n) const;
};

// Entries that cannot be trusted to hold the best version: for one (kind, signature), an entry whose measurement
// (times_ms, unsupported) left out a version that another batch size's entry chose (a table merged from tunings over
// different version lists, e.g. sizes measured before a version existed). One line each, naming the entry, the
// version it never measured and the batch size that chose it; empty when every entry is comparable.
std::vector<std::string> stale_entries(const TuningTable& t);

// Layer i's signature within m (with the activation, and for convolutions a following 2x2 max pool, that a
// variant could fuse into it).
// " @tf32" appended for tf32 (each precision but fp32), " w8" for --weights int8.
std::string tuning_signature(const Model& m, size_t i, Precision precision = Precision::fp32,
                             WeightFormat weights = WeightFormat::native);

// Reads and checks a table: `path` must be a batchscope tuning table measured on `device_name` (empty: any
// device). Throws bs::Error naming the path otherwise.
TuningTable read_tuning(const std::string& path, const std::string& device_name);
std::string tuning_json(const TuningTable& t);
void write_tuning(const std::string& path, const TuningTable& t);  // all or nothing

// Where a device's table is looked for when no --tuning is given: $BATCHSCOPE_TUNING_DIR, else
// $XDG_CACHE_HOME/batchscope, else ~/.cache/batchscope; file tuning-<device name, lower case, dashes>.json.
std::string default_tuning_path(const std::string& device_name);

}  // namespace bs
