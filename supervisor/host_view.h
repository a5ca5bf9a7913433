// An allowed operation inside a tree the mount layer made read-only (say,
// creating a file where only deleting and overwriting are denied) would
// fail with EROFS in the session's view: it is carried out in the
// supervisor's own view of the very same directories instead (checked by
// device and inode, so a path that now leads elsewhere is refused).
#pragma once

#include <string>
#include <vector>

#include "notify/ops.h"
#include "policy/policy.h"

namespace cb {

class HostView {
 public:
  explicit HostView(const std::vector<StaticDenial>& mounts) : mounts_(mounts) {}

  bool under_mounted(const std::string& path) const;
  // A facet whose path or target lies in a read-only tree.
  bool names_mounted(const Facet& f) const {
    return under_mounted(f.path) || (!f.target.empty() && under_mounted(f.target));
  }
  // Points an allowed create that lands in a read-only tree at the
  // supervisor's own view of its directories.
  void redirect(Classified& c) const;

 private:
  const std::vector<StaticDenial>& mounts_;
};

}  // namespace cb
