#include "loop/virtual_runner.h"

#include <algorithm>

namespace gf {

void VirtualRunner::run_until(Time target) {
  loop_.drain();
  while (!loop_.failed()) {
    std::optional<Time> next = clock_.next_due();
    if (auto w = loop_.next_wake(); w && (!next || *w < *next)) next = w;
    if (!next || *next > target) break;
    if (*next <= clock_.now()) {
      // Due now: drain handles it; a drain that does nothing means nothing is really due.
      if (loop_.drain() == 0) break;
      continue;
    }
    clock_.advance_to(*next);
    loop_.drain();
  }
  clock_.advance_to(target);
  loop_.drain();
}

}  // namespace gf
