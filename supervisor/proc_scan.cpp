#include "supervisor/proc_scan.h"

#include <dirent.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace cb {
namespace {
// A bound on one look, so that a fork bomb cannot hold the loop.
constexpr size_t kMaxProcesses = 8192;
}  // namespace

std::vector<pid_t> ProcScan::children(pid_t pid) const {
  std::vector<pid_t> out;
  std::string task = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(task.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string list = read_proc_file(pid, ("task/" + std::string(e->d_name) + "/children").c_str(), 65536);
    for (const char* p = list.c_str(); *p;) {
      char* end = nullptr;
      long c = strtol(p, &end, 10);
      if (end == p) break;
      if (c > 0) out.push_back(static_cast<pid_t>(c));
      p = end;
    }
  }
  closedir(d);
  return out;
}

void ProcScan::await_exec(pid_t pid) {
  struct stat self {};
  if (pid <= 0 || stat("/proc/self/exe", &self) != 0) return;
  std::string exe = "/proc/" + std::to_string(pid) + "/exe";
  // Up to two seconds: on a loaded machine the command's exec can take
  // longer than a tenth of one, and its first look would be of this image.
  for (int i = 0; i < 2000; ++i) {
    struct stat st {};
    // Gone, or another program than this one with its command line in
    // place: exec'd (or failed).
    if (stat(exe.c_str(), &st) != 0) return;
    if ((st.st_ino != self.st_ino || st.st_dev != self.st_dev) && !read_proc_file(pid, "cmdline", 16).empty()) return;
    usleep(1000);
  }
}

void ProcScan::scan() {
  // Parents before children, so that each is recorded under its parent.
  std::vector<pid_t> queue = children(init_);
  for (size_t i = 0; i < queue.size() && i < kMaxProcesses; ++i) {
    pid_t pid = queue[i];
    if (ProcessEntry* e = procs_.known(pid)) {
      // An exec publishes its new executable and stack before its argv
      // (create_elf_tables comes last): a look inside that window saw the
      // new image with no command line, so look again once it has one.
      bool unfinished = e->info->argv.empty() && !read_proc_file(pid, "cmdline", 16).empty();
      if (unfinished || read_image_key(pid) != e->image) {
        procs_.mark_exec(pid);
        procs_.by_tgid(pid);  // reads the new image and records the exec
      }
    } else if (!procs_.lookup(pid)) {
      continue;  // gone already
    }
    for (pid_t c : children(pid)) queue.push_back(c);
  }
}

}  // namespace cb
