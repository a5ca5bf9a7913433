#include "host/mountinfo.h"

#include <sys/sysmacros.h>

#include <cstdio>

namespace cb {
namespace {

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = line.find(' ', i);
    if (j == std::string_view::npos) j = line.size();
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

std::string unescape_mountinfo(std::string_view f) {
  std::string out;
  out.reserve(f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == '\\' && i + 3 < f.size()) {
      int v = 0;
      bool ok = true;
      for (size_t k = 1; k <= 3; ++k) {
        if (f[i + k] < '0' || f[i + k] > '7')
          ok = false;
        else
          v = v * 8 + (f[i + k] - '0');
      }
      if (ok) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += f[i];
  }
  return out;
}

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
  std::vector<MountEntry> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t nl = text.find('\n', i);
    if (nl == std::string_view::npos) nl = text.size();
    auto f = fields(text.substr(i, nl - i));
    i = nl + 1;
    // id parent maj:min root point options [optional...] - fstype source superoptions
    if (f.size() < 9) continue;
    MountEntry e;
    unsigned ma = 0, mi = 0;
    if (sscanf(std::string(f[2]).c_str(), "%u:%u", &ma, &mi) != 2) continue;
    e.id = atoi(std::string(f[0]).c_str());
    e.parent = atoi(std::string(f[1]).c_str());
    e.dev = makedev(ma, mi);
    e.root = unescape_mountinfo(f[3]);
    e.point = unescape_mountinfo(f[4]);
    std::string_view opts = f[5];
    e.read_only = opts == "ro" || opts.substr(0, 3) == "ro,";
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (dash + 2 >= f.size()) continue;
    e.fstype = std::string(f[dash + 1]);
    e.source = unescape_mountinfo(f[dash + 2]);
    out.push_back(std::move(e));
  }
  return out;
}

bool fs_within(std::string_view p, std::string_view dir) {
  if (dir == "/") return !p.empty() && p[0] == '/';
  if (p.size() < dir.size() || p.compare(0, dir.size(), dir) != 0) return false;
  return p.size() == dir.size() || p[dir.size()] == '/';
}

std::optional<std::string> fs_path_of(const MountEntry& m, std::string_view ns_path) {
  if (!fs_within(ns_path, m.point)) return std::nullopt;
  std::string_view rest = m.point == "/" ? ns_path : ns_path.substr(m.point.size());
  if (m.root == "/") return rest.empty() ? std::string("/") : std::string(rest);
  return m.root + std::string(rest == "/" ? std::string_view() : rest);
}

std::optional<std::string> host_name_of(const std::vector<MountEntry>& host, dev_t dev, std::string_view fs_path) {
  const MountEntry* best = nullptr;
  for (const auto& m : host) {
    if (m.dev != dev || !fs_within(fs_path, m.root)) continue;
    if (!best || m.root.size() > best->root.size() ||
        (m.root.size() == best->root.size() && m.point.size() < best->point.size()))
      best = &m;
  }
  if (!best) return std::nullopt;
  std::string_view tail = best->root == "/" ? fs_path : fs_path.substr(best->root.size());
  if (best->point == "/") return tail.empty() ? std::string("/") : std::string(tail);
  return best->point + std::string(tail == "/" ? std::string_view() : tail);
}

}  // namespace cb
