// Drives a ControlLoop in manual mode on a VirtualClock: "3 hours later" runs in microseconds.
// Between two instants nothing happens, so time jumps from one due thing (a clock timer such as
// a simulated driver's completion, a loop timer, a controller's wake-up) to the next, and the
// loop drains at each.
#pragma once

#include "core/clock.h"
#include "loop/control_loop.h"

namespace gf {

class VirtualRunner {
 public:
  VirtualRunner(ControlLoop& loop, VirtualClock& clock) : loop_(loop), clock_(clock) {}

  void run_until(Time target);
  void run_for(Duration d) { run_until(clock_.now() + d); }
  // Processes what is queued at the current instant.
  void settle() { loop_.drain(); }

 private:
  ControlLoop& loop_;
  VirtualClock& clock_;
};

}  // namespace gf
