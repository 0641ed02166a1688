#include "journal/history.h"

#include <fmt/format.h>
#include <zlib.h>

namespace gf {

namespace {
// A record is a job's JSON: a few KB. Anything that inflates past this is not one of ours.
constexpr size_t kMaxRecordBytes = 64u << 20;
}  // namespace

std::string compress_record(std::string_view text) {
  uLongf size = compressBound(static_cast<uLong>(text.size()));
  std::string out(size, '\0');
  // compress2 fails only on a too-small buffer or bad level: neither happens here.
  compress2(reinterpret_cast<Bytef*>(out.data()), &size,
            reinterpret_cast<const Bytef*>(text.data()), static_cast<uLong>(text.size()), 6);
  out.resize(size);
  return out;
}

Result<std::string> decompress_record(std::string_view data, std::string_view label) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return internal_error("history: inflateInit failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
    if (out.size() > kMaxRecordBytes) rc = Z_MEM_ERROR;
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) rc = Z_BUF_ERROR;
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    return internal_error(
        fmt::format("history: the record of {} cannot be inflated (zlib {})", label, rc));
  }
  return out;
}

}  // namespace gf
