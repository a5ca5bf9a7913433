// What a planner needs to know about the host, asked and answered as
// plain data: the planner derives the questions from the policy
// (plan_query), this file answers them (gather_host_facts, the only part
// that reads the host), and the planner decides from the answers alone, so
// that it is tested with facts written by hand.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "host/links.h"

namespace cb {

struct HostQuery {
  std::vector<std::string> paths;         // does it exist; is it a directory?
  std::vector<std::string> alias_dirs;    // other names through bind mounts made before the session
  std::vector<std::string> device_roots;  // block devices whose raw writes reach them
  std::vector<std::string> link_trees;    // regular files with several names below them
  size_t link_walk_limit = 256;           // entries a walk may visit before it gives up
};

struct PathFact {
  bool exists = false;
  bool dir = false;
};

struct HostFacts {
  std::map<std::string, PathFact> paths;
  std::vector<std::pair<std::string, std::string>> mount_aliases;             // (other name, dir)
  std::map<std::string, std::vector<std::pair<dev_t, std::string>>> devices;  // root -> (device, node)
  InodeAliases links;
  bool links_complete = true;  // false: the walk stopped at its limit, `links` is empty

  // A path not asked about is taken not to exist.
  PathFact path(const std::string& p) const {
    auto it = paths.find(p);
    return it == paths.end() ? PathFact{} : it->second;
  }
  bool is_dir(const std::string& p) const { return path(p).dir; }
};

HostFacts gather_host_facts(const HostQuery& q);

}  // namespace cb
