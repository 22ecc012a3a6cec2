// Ctrl-C and SIGTERM during a long measurement (sweep, tune, throughput): the first signal only raises a flag, which the
// command reads at its next safe point (between repetitions, batch sizes, versions); it then writes what it measured,
// marked interrupted, says so in one line, and exits with status 130. A second signal ends the process at once, as
// signals normally do.
#pragma once
#include <string>

namespace bs {

constexpr int kInterruptedExit = 130;

// Catches SIGINT and SIGTERM from now on (main calls it once).
void install_interrupt_handlers();
bool interrupted();
std::string interrupt_name();  // "SIGINT" or "SIGTERM", once interrupted
// Test aid: BATCHSCOPE_INTERRUPT_AFTER=N raises the flag itself once N units are complete (a sweep's or throughput's
// batch sizes, tune's versions), as a signal arriving then would (recorded in the results' environment like every
// BATCHSCOPE_ variable). Commands call it where a unit completes.
void interrupt_point();

}  // namespace bs
