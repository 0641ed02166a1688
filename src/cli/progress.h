// Live progress of `cluster create --wait` / `cluster wait`: pure functions over a DescribeCluster
// answer (the lines to show, whether the wait is over) and the frames that show successive
// renders — redrawn in place on a terminal, appended only when something changed elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/time.h"

namespace gf {

// Bar cells when the width leaves room (and when there is no width limit), and at the least.
inline constexpr int kMaxBarWidth = 30;
inline constexpr int kMinBarWidth = 10;

// `width` cells between brackets: '#' for current/target rounded down, so the bar is full only
// when current >= target; a group with target 0 is full.
std::string progress_bar(int64_t current, int64_t target, int width);

// The cluster line ("Cluster NAME: STATUS (current/target instances)"), one line per instance
// group (name, bar, CurrentCount/TargetCount, group Status and, while launches are being retried,
// the last launch failure; a Slurm cluster's groups that wait for its controller say so), and
// "FailureMessage: …" when the cluster has one. `width` is the
// terminal's columns: the bar shrinks to fit and longer lines are cut (a line that wraps would
// break the in-place redraw); width <= 0 means no limit (logs, pipes).
std::vector<std::string> render_cluster_progress(const Json& describe_cluster, int width);

enum class WaitGoal {
  kInService,  // ClusterStatus InService
  kFull,       // InService, every group at TargetCount and none Creating/Updating
};
enum class WaitState { kPending, kDone, kFailed };

// kFailed when the cluster is Failed or being deleted (it will never reach the goal).
WaitState cluster_wait_state(const Json& describe_cluster, WaitGoal goal);
// Why a wait ended in kFailed: the FailureMessage, or the status when there is none.
std::string wait_failure_reason(const Json& describe_cluster);

// Turns successive renders into what to write to stdout.
class ProgressFrames {
 public:
  explicit ProgressFrames(bool tty) : tty_(tty) {}

  // "" when nothing changed since the last frame shown. Otherwise, on a terminal: the cursor
  // moves up over the last frame, each line is rewritten and cleared to its end, and anything
  // left below is cleared; elsewhere: the lines as a new block, blank-line separated from the
  // previous one. `timing` (elapsed time and ETA) is a last line of its own; on a terminal it
  // alone redraws the frame, elsewhere it changes nothing (a log gets a block per change).
  std::string next(const std::vector<std::string>& lines, const std::string& timing = "");

 private:
  bool tty_;
  bool shown_ = false;
  std::vector<std::string> last_;
  std::string last_timing_;
  size_t last_rows_ = 0;  // lines the last frame took on the terminal
};

// "elapsed 1m20s, ETA ~3m" from the time waited, the instances gained meanwhile and those still
// missing; "ETA unknown" until an instance came; only "elapsed …" when nothing is missing. The
// ETA assumes the rate so far goes on (capacity that is not there yet makes it too hopeful).
std::string format_wait_timing(Duration elapsed, int64_t gained, int64_t remaining);
// Instances running (the sum of CurrentCount) and missing (TargetCount - CurrentCount, summed
// over groups short of their target) in a DescribeCluster answer.
int64_t running_instances(const Json& describe_cluster);
int64_t missing_instances(const Json& describe_cluster);

}  // namespace gf
