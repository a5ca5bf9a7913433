// keep_cost DIR [FILES] [COPIES]: what keeping costs at the decision point,
// measured on the filesystem of DIR (a by-hand measurement, not a test; no
// number is asserted).  Prints, per operation, the mean in microseconds:
//   unlink              a plain unlink, the baseline
//   keep_before_unlink  the keep alone (the hard-link path)
//   unlink after keep   the unlink that follows it
//   copy 1 MiB        keep_before_overwrite of a 1 MiB file (reflink or copy)
//   settle            hashing and moving the staged objects at the session's end
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "keep/keeper.h"
#include "tests/keep/test_util.h"

using namespace cb::keep;
using Clock = std::chrono::steady_clock;

namespace {

double us_since(Clock::time_point t0, int n) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
}

void make_files(const std::string& dir, const std::string& prefix, int n, size_t size) {
  std::string data = test::random_bytes(size, 7);
  for (int i = 0; i < n; ++i) test::write_file(dir + "/" + prefix + std::to_string(i), data + std::to_string(i));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: keep_cost DIR [FILES] [COPIES]\n");
    return 2;
  }
  int files = argc > 2 ? std::atoi(argv[2]) : 5000;
  int copies = argc > 3 ? std::atoi(argv[3]) : 50;
  test::TempDir tmp(argv[1]);
  struct statfs fs;
  statfs(tmp.path().c_str(), &fs);
  std::printf("filesystem of %s: magic 0x%lx\n", tmp.path().c_str(), static_cast<unsigned long>(fs.f_type));
  std::string work = tmp / "w";
  mkdir(work.c_str(), 0755);
  auto k = Keeper::open(tmp / "store", "cost", {});
  if (!k) {
    std::fprintf(stderr, "%s\n", k.error().message.c_str());
    return 1;
  }
  auto dir = test::open_dir(work);

  make_files(work, "b", files, 4096);
  sync();
  auto t0 = Clock::now();
  for (int i = 0; i < files; ++i) unlinkat(dir.get(), ("b" + std::to_string(i)).c_str(), 0);
  std::printf("unlink            %8.2f us  (%d files of 4 KiB)\n", us_since(t0, files), files);

  make_files(work, "k", files, 4096);
  sync();
  int linked = 0;
  double keep_us = 0, unlink_us = 0;
  for (int i = 0; i < files; ++i) {
    std::string name = "k" + std::to_string(i);
    Context c;
    c.op = Op::Unlink;
    c.path = work + "/" + name;
    c.command = 1;
    t0 = Clock::now();
    linked += (*k)->keep_before_unlink(dir.get(), name.c_str(), c).kept == Kept::Linked;
    auto t1 = Clock::now();
    unlinkat(dir.get(), name.c_str(), 0);
    keep_us += std::chrono::duration<double, std::micro>(t1 - t0).count();
    unlink_us += std::chrono::duration<double, std::micro>(Clock::now() - t1).count();
  }
  std::printf("keep_before_unlink %7.2f us  (%d of %d by a hard link)\n", keep_us / files, linked, files);
  std::printf("unlink after keep %8.2f us  (the blocks stay allocated: cheaper than a plain unlink)\n",
              unlink_us / files);

  make_files(work, "c", copies, 1 << 20);
  sync();
  int reflinked = 0, not_kept = 0;
  t0 = Clock::now();
  for (int i = 0; i < copies; ++i) {
    std::string name = "c" + std::to_string(i);
    Context c;
    c.op = Op::OpenTrunc;
    c.path = work + "/" + name;
    c.command = 2;
    Kept kept = (*k)->keep_before_overwrite(dir.get(), name.c_str(), c).kept;
    reflinked += kept == Kept::Reflinked;
    not_kept += kept == Kept::NotKept;
  }
  std::printf("copy 1 MiB        %8.2f us  (%d of %d by a reflink, %d not kept)\n", us_since(t0, copies), reflinked,
              copies, not_kept);

  t0 = Clock::now();
  auto r = (*k)->finish();
  std::printf("finish (settle)   %8.2f us per kept file%s\n", us_since(t0, files + copies),
              r ? "" : (" FAILED: " + r.error().message).c_str());
  return 0;
}
