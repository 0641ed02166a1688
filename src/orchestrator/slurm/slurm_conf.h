// slurm.conf in merge mode (docs/provisioning.md): gpufleet owns only the NodeName= and
// PartitionName= lines inside two marked blocks; every byte outside them belongs to the user and is
// kept exactly.
//
//   # BEGIN gpufleet managed nodes -- edits inside this block are overwritten
//   NodeName=worker-1 CPUs=192 RealMemory=2000000 Gres=gpu:8 Feature=p5 State=CLOUD
//   # END gpufleet managed nodes
//   # BEGIN gpufleet managed partitions -- edits inside this block are overwritten
//   PartitionName=gpu Nodes=worker-[1-3,5]
//   # END gpufleet managed partitions
//
// A marker is recognised by its prefix (the text up to "nodes"/"partitions"), at the start of a
// line after optional blanks; whatever follows on the marker line is ours to rewrite.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"

namespace gf {

inline constexpr std::string_view kSlurmNodesBegin = "# BEGIN gpufleet managed nodes";
inline constexpr std::string_view kSlurmNodesEnd = "# END gpufleet managed nodes";
inline constexpr std::string_view kSlurmPartitionsBegin = "# BEGIN gpufleet managed partitions";
inline constexpr std::string_view kSlurmPartitionsEnd = "# END gpufleet managed partitions";

struct SlurmNodeLine {
  std::string name;
  int cpus = 0;                // omitted from the line when <= 0
  int64_t real_memory_mb = 0;  // omitted from the line when <= 0
  int gpus = 0;                // Gres=gpu:<n>, omitted when 0
  std::string features;        // Feature=<features>, omitted when empty
  // Where slurmctld reaches its slurmd (a real cluster; omitted when empty/0): several slurmd on
  // one host each listen on their own port.
  std::string hostname{};  // NodeHostname=
  std::string address{};   // NodeAddr=
  int port = 0;            // Port=
  // State=<state>; "" leaves it out. CLOUD for the simulated cluster; a real one declares the
  // nodes not running yet FUTURE (hidden until their slurmd registers).
  std::string state = "CLOUD";
};

struct SlurmPartitionLine {
  std::string name;
  std::vector<std::string> nodes;
  // Default=YES: where a job without -p goes (docs/slurm.md "The default partition"). Not
  // rendered when a line written by hand outside the blocks already says Default=YES.
  bool is_default = false;
};

// What the cluster wants Slurm to know: every node and partition gpufleet manages.
struct SlurmLayout {
  std::vector<SlurmNodeLine> nodes;
  std::vector<SlurmPartitionLine> partitions;
};

struct SlurmMergeResult {
  std::string text;
  // Things the caller should surface (cluster events): conflicts with hand-written lines,
  // dropped entries, or malformed markers (then `text` is the input unchanged).
  std::vector<std::string> warnings;
};

// Rewrites the managed blocks of `existing` to describe `layout`; blocks that are absent are
// appended at the end (after a newline only if the file does not end with one).
//
// Invariants: bytes outside the blocks are never changed; the output is a pure function of
// (existing, layout), and merging the output again with the same layout returns it unchanged.
// Rendering: nodes in natural name order (worker-2 before worker-10), one line each;
// partitions in name order with hostlist-compressed node lists; new lines use the file's line
// ending (that of its first line), and the END marker keeps the terminator it had.
// Rules:
//  - A NodeName or PartitionName written by hand outside the blocks wins over the layout's
//    entry of the same name, which is not rendered (warning). Hand-written hostlist
//    expressions such as NodeName=c[1-3] are expanded for this check. Files pulled in with
//    `Include` are not read: a name defined there too is the user's to avoid.
//  - A partition with no nodes is rendered as `PartitionName=<name>` without a Nodes key:
//    Slurm's parser rejects an empty unquoted `Nodes=`, and an absent key yields an empty
//    partition that keeps accepting (pending) jobs while its nodes are still being launched.
//    Trade-off: a hand-written `PartitionName=DEFAULT Nodes=...` would then supply its nodes.
//  - A partition node that no NodeName line defines (managed or hand-written) is left out with
//    a warning, since slurmctld refuses to start on an undefined node name.
//  - Layout entries with names Slurm cannot parse (blanks, '#', '=', ',', brackets, quotes,
//    DEFAULT/ALL) are skipped with a warning; duplicate nodes keep the first entry (warning);
//    duplicate partitions are merged (several instance groups may feed one partition).
//  - Malformed markers (BEGIN without END, END without BEGIN, a BEGIN inside a block, a second
//    block of the same kind): nothing is guessed; `text` is `existing` unchanged and one
//    warning names the line number.
SlurmMergeResult merge_slurm_conf(std::string_view existing, const SlurmLayout& layout);

// Slurm hostlist syntax for a set of names: names sharing a prefix and a numeric suffix become
// one range expression (worker-1..3, worker-5 -> "worker-[1-3,5]"; zero padding is kept:
// n01, n02 -> "n[01-02]"); other names are listed as they are. Duplicates are dropped and the
// result is comma-joined in natural order, so equal sets give equal strings.
std::string compress_hostlist(std::vector<std::string> names);

// The layout as the API carries it to a real controller's agent:
// {"Nodes": [{"Name", "CPUs", "RealMemory", "Gpus", "Feature", "Port", "State"}],
//  "Partitions": [{"Name", "Nodes": [...]}]}. Parsing checks every name (check_slurm_name rules)
// and bounds the sizes; the error names the field.
Json slurm_layout_to_json(const SlurmLayout& layout);
Result<SlurmLayout> slurm_layout_from_json(const Json& j);

// Short paths for a real cluster's Unix sockets (docs/slurm.md "Paths that work anywhere"): a
// socket path holds at most 107 characters, and slurmd names each job step's socket
// `<SlurmdSpoolDir>/<node>_<job>.<step>`. So the munge socket and the slurmd spool directories
// live in a runtime directory of their own, made by mkdtemp from this template (0700, a name
// nobody can take ahead) and recorded in the cluster's Slurm directory (kSlurmRuntimeFile),
// whatever the data directory's length.
inline constexpr std::string_view kSlurmRuntimeTemplate = "/tmp/gfs-XXXXXX";
inline constexpr std::string_view kSlurmRuntimeFile = "runtime";
// The longest Slurm node name whose step sockets fit under such a directory, with room to spare
// (a directory of up to 21 characters; mkdtemp's is 15): 21 + 2 × 31 + 24 <= 107, where 24 is
// the two slashes and "_<10 digits>.<10 digits>".
inline constexpr size_t kSlurmSocketNameMax = 31;
// The path of a step socket of `node`, at its longest (job and step ids of 10 digits).
std::string slurm_longest_step_socket(std::string_view runtime_dir, std::string_view node);
inline constexpr size_t kUnixSocketPathMax = 107;
// The variable a real cluster's daemons are started with (its Slurm directory): with their
// descendants, the processes that end when the cluster does (docs/slurm.md "Nothing outlives its
// cluster").
inline constexpr std::string_view kSlurmDirEnv = "GPUFLEET_SLURM_DIR";

// The inverse for expressions such as "c[1-3,07-08],login1" (also several bracket groups:
// "r[1-2]n[1-2]"). Malformed items are returned verbatim; expansion stops at 65,536 names.
std::vector<std::string> expand_hostlist(std::string_view expression);

}  // namespace gf
