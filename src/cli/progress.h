// Live progress of `cluster create --wait` / `cluster wait`: pure functions over a DescribeCluster
// answer (the lines to show, whether the wait is over) and the frames that show successive
// renders — redrawn in place on a terminal, appended only when something changed elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"

namespace gf {

// Bar cells when the width leaves room (and when there is no width limit), and at the least.
inline constexpr int kMaxBarWidth = 30;
inline constexpr int kMinBarWidth = 10;

// `width` cells between brackets: '#' for current/target rounded down, so the bar is full only
// when current >= target; a group with target 0 is full.
std::string progress_bar(int64_t current, int64_t target, int width);

// The cluster line ("Cluster NAME: STATUS (current/target instances)"), one line per instance
// group (name, bar, CurrentCount/TargetCount, group Status and, while launches are being retried,
// the last launch failure), and "FailureMessage: …" when the cluster has one. `width` is the
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

  // "" when `lines` equal the last frame shown. Otherwise, on a terminal: the cursor moves up over
  // the last frame, each line is rewritten and cleared to its end, and anything left below is
  // cleared; elsewhere: the lines as a new block, blank-line separated from the previous one.
  std::string next(const std::vector<std::string>& lines);

 private:
  bool tty_;
  bool shown_ = false;
  std::vector<std::string> last_;
};

}  // namespace gf
