#include "host/facts.h"

#include <sys/stat.h>

#include "host/mounts.h"

namespace cb {
namespace {

// A path that does not exist yet lives on its nearest existing ancestor's
// disk.  Relative paths are taken from the cwd, as stat would.
std::string nearest_existing(std::string p) {
  struct stat st;
  while (stat(p.c_str(), &st) != 0) {
    size_t slash = p.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    p.resize(slash);
  }
  return p;
}

}  // namespace

HostFacts gather_host_facts(const HostQuery& q) {
  HostFacts f;
  for (const auto& p : q.paths) {
    struct stat st;
    PathFact pf;
    if (stat(p.c_str(), &st) == 0) pf = {true, S_ISDIR(st.st_mode)};
    f.paths[p] = pf;
  }
  f.mount_aliases = mount_aliases(q.alias_dirs);
  if (!q.device_roots.empty()) {
    std::vector<std::string> probes;
    for (const auto& r : q.device_roots) probes.push_back(nearest_existing(r));
    auto devices = block_devices_of(probes);
    for (size_t i = 0; i < q.device_roots.size(); ++i) f.devices[q.device_roots[i]] = std::move(devices[i]);
  }
  std::vector<std::string> trees;
  for (const auto& t : q.link_trees) {
    struct stat st;
    if (stat(t.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) trees.push_back(t);
  }
  if (!trees.empty() && !collect_multilinked(trees, f.links, q.link_walk_limit)) {
    f.links.clear();
    f.links_complete = false;
  }
  return f;
}

}  // namespace cb
