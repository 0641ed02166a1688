#include "cli/progress.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/command_support.h"

namespace gf {

namespace {

struct GroupRow {
  std::string name;
  int64_t current = 0;
  int64_t target = 0;
  std::string status;
  std::string note;
};

bool is_controller(const Json& group) {
  return text_field(field(group, "SlurmConfig"), "NodeType") == "Controller";
}

// A Slurm cluster launches its other groups once a controller runs: until then they wait (a
// group with MinCount 0 is InService by the MinCount rule, with nothing launched yet).
bool waits_for_controller(const Json& describe) {
  if (!field(field(describe, "Orchestrator"), "Slurm").is_object()) return false;
  if (text_field(describe, "ClusterStatus") != "Creating") return false;
  for (const Json& g : array_field(describe, "InstanceGroups")) {
    if (is_controller(g)) return int_field(g, "CurrentCount") < 1;
  }
  return false;
}

std::vector<GroupRow> group_rows(const Json& describe) {
  std::vector<GroupRow> rows;
  const bool before_controller = waits_for_controller(describe);
  for (const Json& g : array_field(describe, "InstanceGroups")) {
    GroupRow r{text_field(g, "InstanceGroupName"), int_field(g, "CurrentCount"),
               int_field(g, "TargetCount"), text_field(g, "Status"), ""};
    const std::string failure = text_field(g, "LastLaunchFailure");
    if (!field(g, "NextLaunchAttempt").is_null() && !failure.empty()) {
      r.note = "retrying: " + failure;
    } else if (before_controller && !is_controller(g) && r.current < r.target) {
      r.note = "waiting for the controller";
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string pad_right(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string pad_left(const std::string& s, size_t width) {
  return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
}

std::string fit(std::string line, int width) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (width > 3 && line.size() > static_cast<size_t>(width))
    line = line.substr(0, width - 3) + "...";
  return line;
}

}  // namespace

std::string progress_bar(int64_t current, int64_t target, int width) {
  int64_t filled = width;
  if (target > 0 && current < target) filled = std::max<int64_t>(0, current) * width / target;
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
}

std::vector<std::string> render_cluster_progress(const Json& describe, int width) {
  const std::vector<GroupRow> rows = group_rows(describe);
  size_t name_w = 0, count_w = 1, status_w = 0;
  int64_t current = 0, target = 0;
  for (const auto& r : rows) {
    name_w = std::max(name_w, r.name.size());
    count_w =
        std::max({count_w, std::to_string(r.current).size(), std::to_string(r.target).size()});
    status_w = std::max(status_w, r.status.size());
    current += r.current;
    target += r.target;
  }
  std::vector<std::string> lines;
  lines.push_back(
      fit(fmt::format("Cluster {}: {} ({}/{} instances)", text_field(describe, "ClusterName"),
                      text_field(describe, "ClusterStatus"), current, target),
          width));
  // Everything on a group line except the bar's cells.
  const int fixed = static_cast<int>(2 + name_w + 2 + 2 + 2 + 2 * count_w + 1 + 2 + status_w);
  const int bar_w =
      width > 0 ? std::clamp(width - fixed, kMinBarWidth, kMaxBarWidth) : kMaxBarWidth;
  for (const auto& r : rows) {
    std::string line =
        "  " + pad_right(r.name, name_w) + "  " + progress_bar(r.current, r.target, bar_w) + "  " +
        pad_left(std::to_string(r.current), count_w) + "/" +
        pad_right(std::to_string(r.target), count_w) + "  " + pad_right(r.status, status_w);
    if (!r.note.empty()) line += "  " + r.note;
    lines.push_back(fit(std::move(line), width));
  }
  const Json& su = field(describe, "SoftwareUpdate");
  if (su.is_object()) {
    lines.push_back(fit(fmt::format("Software update to {}: {}/{} instances updated, {} updating",
                                    text_field(su, "ImageId"), text_field(su, "Updated"),
                                    text_field(su, "Instances"), text_field(su, "Updating")),
                        width));
  }
  const std::string failure = text_field(describe, "FailureMessage");
  if (!failure.empty()) lines.push_back(fit("FailureMessage: " + failure, width));
  return lines;
}

WaitState cluster_wait_state(const Json& describe, WaitGoal goal) {
  const std::string status = text_field(describe, "ClusterStatus");
  if (status == "Failed" || status == "Deleting") return WaitState::kFailed;
  if (status != "InService") return WaitState::kPending;
  if (goal == WaitGoal::kInService) return WaitState::kDone;
  for (const auto& r : group_rows(describe)) {
    if (r.current != r.target || r.status == "Creating" || r.status == "Updating")
      return WaitState::kPending;
  }
  return WaitState::kDone;
}

std::string wait_failure_reason(const Json& describe) {
  const std::string failure = text_field(describe, "FailureMessage");
  if (!failure.empty()) return failure;
  return "cluster " + text_field(describe, "ClusterName") + " is " +
         text_field(describe, "ClusterStatus");
}

std::string format_wait_timing(Duration elapsed, int64_t gained, int64_t remaining) {
  std::string out = "elapsed " + format_duration(std::chrono::floor<std::chrono::seconds>(elapsed));
  if (remaining <= 0) return out;
  if (gained <= 0 || elapsed <= Duration::zero()) return out + ", ETA unknown";
  const Duration eta = elapsed * remaining / gained;
  return out + ", ETA ~" + format_duration(std::chrono::ceil<std::chrono::seconds>(eta));
}

int64_t running_instances(const Json& describe) {
  int64_t n = 0;
  for (const Json& g : array_field(describe, "InstanceGroups")) n += int_field(g, "CurrentCount");
  return n;
}

int64_t missing_instances(const Json& describe) {
  int64_t n = 0;
  for (const Json& g : array_field(describe, "InstanceGroups"))
    n += std::max<int64_t>(0, int_field(g, "TargetCount") - int_field(g, "CurrentCount"));
  return n;
}

std::string ProgressFrames::next(const std::vector<std::string>& lines, const std::string& timing) {
  if (shown_ && lines == last_ && !tty_) return "";  // a log gets a block only on a change
  if (shown_ && lines == last_ && timing == last_timing_) return "";
  std::vector<std::string> shown = lines;
  if (!timing.empty()) shown.push_back(timing);
  std::string out;
  if (tty_) {
    if (shown_ && last_rows_ > 0) out += fmt::format("\x1b[{}A", last_rows_);
    for (const auto& l : shown) out += "\r" + l + "\x1b[K\n";
    out += "\x1b[J";
  } else {
    if (shown_) out += "\n";
    for (const auto& l : shown) out += l + "\n";
  }
  shown_ = true;
  last_ = lines;
  last_timing_ = timing;
  last_rows_ = shown.size();
  return out;
}

}  // namespace gf
