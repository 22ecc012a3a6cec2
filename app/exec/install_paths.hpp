// Where the shipped files are found at run time, in this order: the environment (BATCHSCOPE_DATA for the data folder,
// BATCHSCOPE_SOURCE_DIR for a source tree), then an installed layout beside the executable (`cmake --install` puts
// the commands in PREFIX/bin and the data and plotting scripts in PREFIX/share/batchscope), then the source tree the
// binaries were built from (compiled in, for running from the build folder).
#pragma once
#include <string>

namespace bs {

// $BATCHSCOPE_SOURCE_DIR, else the source tree the binaries were built from.
std::string source_dir();

// PREFIX/share/batchscope when this executable lies in PREFIX/bin and that folder exists; else empty.
std::string installed_share_dir();

// The folder holding the plotting scripts (report.py, figures.py, sweepdata.py).
std::string plots_dir();

}  // namespace bs
