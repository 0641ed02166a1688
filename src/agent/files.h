// Small file helpers of the local-cloud node (its directory, and a Slurm cluster's shared one).
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <system_error>

#include "core/result.h"

namespace gf::agent {

// The whole file ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Writes `text` to a temporary beside `path` and renames it over `path`: readers (slurmctld, a
// gang's script counting its pods) see the old file or the new one, never a part.
inline Status write_file_atomically(const std::filesystem::path& path, const std::string& text,
                                    std::optional<std::filesystem::perms> perms = std::nullopt) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) return internal_error("cannot write " + tmp.string());
  }
  std::error_code ec;
  if (perms) std::filesystem::permissions(tmp, *perms, ec);
  std::filesystem::rename(tmp, path, ec);
  if (ec) return internal_error("cannot replace " + path.string() + ": " + ec.message());
  return ok_status();
}

// `s` as one word of a bash command line.
inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace gf::agent
