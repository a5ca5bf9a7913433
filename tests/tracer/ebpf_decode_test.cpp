// Decoding of the eBPF tracer's records from hand-built byte buffers: runs
// everywhere, no kernel involved.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "syscalls/names.h"
#include "trace/ebpf_decode.h"
#include "trace/trace_events.h"

namespace cb {
namespace {

using Bytes = std::vector<uint8_t>;

cb_rec_hdr make_hdr(uint16_t kind) {
  cb_rec_hdr h{};
  h.kind = kind;
  h.version = CB_WIRE_VERSION;
  h.uid = 1000;
  h.ts_ns = 5'000'000'000ULL;
  h.pid = 42;
  h.tid = 43;
  h.gpid = 4242;
  h.gtid = 4343;
  std::strncpy(h.comm, "agent", sizeof(h.comm));
  return h;
}

// A fixed struct followed by its blobs; fixes up hdr.size.
template <typename T>
Bytes pack(T fixed, const std::vector<std::string>& blobs = {}) {
  Bytes out(sizeof(T));
  std::memcpy(out.data(), &fixed, sizeof(T));
  for (const auto& b : blobs) out.insert(out.end(), b.begin(), b.end());
  uint32_t size = static_cast<uint32_t>(out.size());
  std::memcpy(out.data() + offsetof(cb_rec_hdr, size), &size, sizeof(size));
  return out;
}

struct Sys {
  int nr = SYS_openat;
  int64_t ret = 3;
  std::vector<uint64_t> args;
  std::string path1, base1, path2, base2, addr;
  uint32_t flags = 0;
  int32_t dirfd1 = CB_FD_NONE, dirfd2 = CB_FD_NONE, fd = CB_FD_NONE;
  int32_t target_pid = 0, target_gpid = 0;
  uint16_t sock_type = 0, sock_proto = 0;
};

Bytes sys_record(const Sys& s) {
  cb_rec_syscall r{};
  r.hdr = make_hdr(CB_REC_SYSCALL);
  r.hdr.flags = s.flags;
  r.ret = s.ret;
  for (size_t i = 0; i < s.args.size() && i < CB_NARGS; ++i) r.args[i] = s.args[i];
  r.nr = s.nr;
  r.dirfd1 = s.dirfd1;
  r.dirfd2 = s.dirfd2;
  r.fd = s.fd;
  r.target_pid = s.target_pid;
  r.target_gpid = s.target_gpid;
  r.sock_type = s.sock_type;
  r.sock_proto = s.sock_proto;
  std::vector<std::string> blobs = {s.path1, s.base1, s.path2, s.base2, s.addr};
  for (int i = 0; i < CB_SYS_NBLOBS; ++i) r.len[i] = static_cast<uint16_t>(blobs[i].size());
  return pack(r, blobs);
}

TraceRecord ok(const Bytes& b, int64_t offset = 0) {
  auto r = decode(b, offset);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : TraceRecord{};
}

std::string error_of(const Bytes& b) {
  auto r = decode(b, 0);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error().message;
}

std::string inet4(uint16_t port, const char* ip) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip, &a.sin_addr);
  return std::string(reinterpret_cast<const char*>(&a), sizeof(a));
}

std::string inet6(uint16_t port, const char* ip) {
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(port);
  inet_pton(AF_INET6, ip, &a.sin6_addr);
  return std::string(reinterpret_cast<const char*>(&a), sizeof(a));
}

std::string unix_addr(const std::string& path) {
  std::string a(2, '\0');
  sa_family_t fam = AF_UNIX;
  std::memcpy(a.data(), &fam, 2);
  return a + path;
}

TEST(EbpfDecode, HeaderFieldsAndClock) {
  cb_rec_exit r{};
  r.hdr = make_hdr(CB_REC_EXIT);
  auto rec = ok(pack(r), 1'700'000'000'000'000'000LL);
  EXPECT_EQ(rec.kind, TraceKind::Exit);
  EXPECT_EQ(rec.ts_ns, 1'700'000'005'000'000'000LL);
  EXPECT_EQ(rec.pid, 42);
  EXPECT_EQ(rec.tid, 43);
  EXPECT_EQ(rec.global_pid, 4242);
  EXPECT_EQ(rec.global_tid, 4343);
  EXPECT_EQ(rec.uid, 1000u);
  EXPECT_EQ(rec.comm, "agent");
}

TEST(EbpfDecode, CommFillsAllSixteenBytes) {
  cb_rec_exit r{};
  r.hdr = make_hdr(CB_REC_EXIT);
  std::memcpy(r.hdr.comm, "0123456789abcdef", 16);  // no terminator
  EXPECT_EQ(ok(pack(r)).comm, "0123456789abcdef");
}

TEST(EbpfDecode, Fork) {
  cb_rec_fork r{};
  r.hdr = make_hdr(CB_REC_FORK);
  r.child_pid = 50;
  r.child_gpid = 5050;
  r.ppid = 42;
  r.gppid = 4242;
  auto rec = ok(pack(r));
  EXPECT_EQ(rec.kind, TraceKind::Fork);
  EXPECT_EQ(rec.child_pid, 50);
  EXPECT_EQ(rec.child_global_pid, 5050);
  EXPECT_EQ(rec.ppid, 42);
  EXPECT_EQ(rec.global_ppid, 4242);
}

TEST(EbpfDecode, ExitStatuses) {
  cb_rec_exit r{};
  r.hdr = make_hdr(CB_REC_EXIT);
  r.status = 3 << 8;
  auto rec = ok(pack(r));
  EXPECT_EQ(rec.exit_code, 3);
  EXPECT_EQ(rec.exit_signal, 0);
  EXPECT_FALSE(rec.core_dumped);

  r.status = SIGKILL;
  rec = ok(pack(r));
  EXPECT_EQ(rec.exit_code, -1);
  EXPECT_EQ(rec.exit_signal, SIGKILL);

  r.status = SIGSEGV | 0x80;
  rec = ok(pack(r));
  EXPECT_EQ(rec.exit_signal, SIGSEGV);
  EXPECT_TRUE(rec.core_dumped);
  EXPECT_EQ(rec.wait_status, SIGSEGV | 0x80);
}

Bytes exec_record(const std::string& file, const std::string& base, const std::string& argv, uint32_t flags = 0) {
  cb_rec_exec r{};
  r.hdr = make_hdr(CB_REC_EXEC);
  r.hdr.flags = flags;
  r.old_gtid = 4343;
  r.len[CB_EXEC_FILE] = static_cast<uint16_t>(file.size());
  r.len[CB_EXEC_BASE] = static_cast<uint16_t>(base.size());
  r.len[CB_EXEC_ARGV] = static_cast<uint16_t>(argv.size());
  return pack(r, {file, base, argv});
}

TEST(EbpfDecode, ExecAbsolute) {
  auto rec = ok(exec_record("/usr/bin/tar", "", std::string("tar\0-xf\0a b.tar\0", 16)));
  EXPECT_EQ(rec.kind, TraceKind::Exec);
  EXPECT_EQ(rec.path, "/usr/bin/tar");
  EXPECT_EQ(rec.argv, (std::vector<std::string>{"tar", "-xf", "a b.tar"}));
  EXPECT_FALSE(rec.argv_truncated);
  EXPECT_FALSE(rec.path_unresolved);
  EXPECT_EQ(rec.old_global_tid, 4343);
}

TEST(EbpfDecode, ExecRelativeJoinsTheCwd) {
  auto rec = ok(exec_record("./build/tool", "/home/u/proj", std::string("./build/tool\0", 13)));
  EXPECT_EQ(rec.path, "/home/u/proj/build/tool");
  EXPECT_EQ(rec.argv, (std::vector<std::string>{"./build/tool"}));
}

TEST(EbpfDecode, ExecEmptyArgsAndEmptyArgv) {
  auto rec = ok(exec_record("/bin/x", "", std::string("x\0\0\0", 4)));
  EXPECT_EQ(rec.argv, (std::vector<std::string>{"x", "", ""}));
  rec = ok(exec_record("/bin/x", "", ""));
  EXPECT_TRUE(rec.argv.empty());
}

TEST(EbpfDecode, ExecTruncatedArgv) {
  // cut by the bound: the flag is set and the last string has no terminator
  auto rec = ok(exec_record("/bin/x", "", std::string("x\0aaaa", 6), CB_F_TRUNC(CB_EXEC_ARGV)));
  EXPECT_EQ(rec.argv, (std::vector<std::string>{"x", "aaaa"}));
  EXPECT_TRUE(rec.argv_truncated);
  // no flag, but unterminated: still reported as truncated
  rec = ok(exec_record("/bin/x", "", std::string("x\0aa", 4)));
  EXPECT_TRUE(rec.argv_truncated);
}

TEST(EbpfDecode, ExecUnresolvedBase) {
  auto rec = ok(exec_record("x", "", std::string("x\0", 2), CB_F_FAULT(CB_EXEC_BASE)));
  EXPECT_EQ(rec.path, "x");
  EXPECT_TRUE(rec.path_unresolved);
  rec = ok(exec_record("x", "/deep/er", std::string("x\0", 2), CB_F_TRUNC(CB_EXEC_BASE)));
  EXPECT_EQ(rec.path, "/deep/er/x");
  EXPECT_TRUE(rec.path_truncated);
}

TEST(EbpfDecode, OpenatRelativeToCwd) {
  Sys s;
  s.args = {static_cast<uint64_t>(AT_FDCWD), 0x7fff0000, O_WRONLY | O_CREAT | O_TRUNC, 0644};
  s.dirfd1 = AT_FDCWD;
  s.path1 = "out/../a.txt";
  s.base1 = "/work/proj";
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.kind, TraceKind::Syscall);
  EXPECT_EQ(rec.syscall, "openat");
  EXPECT_EQ(rec.syscall_nr, SYS_openat);
  EXPECT_EQ(rec.ret, 3);
  EXPECT_EQ(rec.path, "/work/proj/out/../a.txt");  // ".." is the kernel's business
  EXPECT_EQ(rec.flags, static_cast<uint64_t>(O_WRONLY | O_CREAT | O_TRUNC));
  EXPECT_EQ(rec.mode, 0644u);
  EXPECT_EQ(rec.dirfd, AT_FDCWD);
  EXPECT_FALSE(rec.path_truncated);
  EXPECT_FALSE(rec.path_unresolved);
}

TEST(EbpfDecode, OpenatAbsoluteIgnoresDirfd) {
  Sys s;
  s.args = {7, 0, O_RDONLY, 0};
  s.dirfd1 = 7;
  s.path1 = "/etc//./hostname";
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.path, "/etc/hostname");
  EXPECT_EQ(rec.dirfd, 7);
  EXPECT_EQ(rec.flags & O_ACCMODE, static_cast<uint64_t>(O_RDONLY));
}

TEST(EbpfDecode, OpenatEmptyPathNamesTheDirfd) {
  Sys s;
  s.args = {9, 0, O_RDONLY, 0};
  s.dirfd1 = 9;
  s.path1 = "";
  s.base1 = "/dev/shm/x";
  EXPECT_EQ(ok(sys_record(s)).path, "/dev/shm/x");
}

TEST(EbpfDecode, FailedOpenKeepsErrno) {
  Sys s;
  s.ret = -ENOENT;
  s.args = {static_cast<uint64_t>(AT_FDCWD), 0, O_RDONLY, 0};
  s.path1 = "/nope";
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.ret, -ENOENT);
  EXPECT_EQ(rec.path, "/nope");
}

TEST(EbpfDecode, Openat2FlagsComeFromOpenHow) {
  Sys s;
  s.nr = SYS_openat2;
  s.args = {static_cast<uint64_t>(AT_FDCWD), 0, O_RDWR | O_CREAT, 0600, 0x08 /* RESOLVE_IN_ROOT */};
  s.path1 = "/tmp/f";
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.syscall, "openat2");
  EXPECT_EQ(rec.flags, static_cast<uint64_t>(O_RDWR | O_CREAT));
  EXPECT_EQ(rec.mode, 0600u);
}

TEST(EbpfDecode, CreatImpliesItsFlags) {
  Sys s;
  s.nr = SYS_creat;
  s.args = {0, 0640};
  s.path1 = "/tmp/c";
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.flags, static_cast<uint64_t>(O_CREAT | O_WRONLY | O_TRUNC));
  EXPECT_EQ(rec.mode, 0640u);
}

TEST(EbpfDecode, AnOpenSaysWhetherItMadeItsFile) {
  // O_CREAT alone does not say: the kernel's FMODE_CREATED does.
  Sys s;
  s.args = {static_cast<uint64_t>(AT_FDCWD), 0, O_WRONLY | O_CREAT | O_TRUNC, 0644};
  s.path1 = "/w/new";
  s.flags = CB_F_CREATED;
  auto made = ok(sys_record(s));
  EXPECT_TRUE(made.created);
  EXPECT_EQ(event_of(made)->action, Action::FileCreate);
  s.flags = 0;
  auto existing = ok(sys_record(s));
  EXPECT_FALSE(existing.created);
  EXPECT_EQ(event_of(existing)->action, Action::FileTruncate);
  s.args[2] = O_WRONLY | O_CREAT;
  EXPECT_EQ(event_of(ok(sys_record(s)))->action, Action::FileWrite);
  s.args[2] = O_RDONLY | O_CREAT;
  EXPECT_EQ(event_of(ok(sys_record(s)))->action, Action::FileRead);
  // A failed open is named by the most it asked for: a refused `> file`
  // is a truncate, a refused new file a create.
  s.ret = -EROFS;
  s.args[2] = O_WRONLY | O_CREAT | O_TRUNC;
  EXPECT_EQ(event_of(ok(sys_record(s)))->action, Action::FileTruncate);
  s.args[2] = O_WRONLY | O_CREAT | O_EXCL;
  EXPECT_EQ(event_of(ok(sys_record(s)))->action, Action::FileCreate);
}

TEST(EbpfDecode, TheKernelSideKnowsWhichOpensMayCreate) {
  for (const auto& s : syscall_table()) {
    if (!s.traced) continue;
    SCOPED_TRACE(std::string(s.name));
    auto d = to_sysdesc(s);
    if (s.nr == SYS_open || s.nr == SYS_openat || s.nr == SYS_openat2)
      EXPECT_EQ(d.oflags, s.args.flags);
    else if (s.nr == SYS_creat)
      EXPECT_EQ(d.oflags, CB_OPEN_CREAT);
    else
      EXPECT_EQ(d.oflags, CB_ARG_NONE);
  }
}

TEST(EbpfDecode, Renameat2BothPathsWithTheirOwnBases) {
  Sys s;
  s.nr = SYS_renameat2;
  s.ret = 0;
  s.args = {5, 0, static_cast<uint64_t>(AT_FDCWD), 0, 1 /* RENAME_NOREPLACE */};
  s.dirfd1 = 5;
  s.dirfd2 = AT_FDCWD;
  s.path1 = "a";
  s.base1 = "/srv/one";
  s.path2 = "sub/b";
  s.base2 = "/home/u";
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.path, "/srv/one/a");
  EXPECT_EQ(rec.path2, "/home/u/sub/b");
  EXPECT_EQ(rec.flags, 1u);
  EXPECT_EQ(rec.dirfd, 5);
  EXPECT_EQ(rec.dirfd2, AT_FDCWD);
}

TEST(EbpfDecode, SymlinkTargetIsNeverResolved) {
  Sys s;
  s.nr = SYS_symlinkat;
  s.ret = 0;
  s.args = {0, static_cast<uint64_t>(AT_FDCWD), 0};
  s.path1 = "link";
  s.base1 = "/w";
  s.path2 = "../target";
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.path, "/w/link");
  EXPECT_EQ(rec.path2, "../target");
  EXPECT_FALSE(rec.path2_unresolved);
}

TEST(EbpfDecode, FdSyscallsNameTheFdsFile) {
  Sys s;
  s.nr = SYS_ftruncate;
  s.ret = 0;
  s.args = {4, 0};
  s.fd = 4;
  s.base1 = "/data/db.sqlite";
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.path, "/data/db.sqlite");
  EXPECT_EQ(rec.fd, 4);
  EXPECT_EQ(rec.length, 0u);

  s.nr = SYS_fallocate;
  s.args = {4, 0x02 | 0x01 /* PUNCH_HOLE|KEEP_SIZE */, 4096, 8192};
  rec = ok(sys_record(s));
  EXPECT_EQ(rec.flags, 3u);
  EXPECT_EQ(rec.offset, 4096u);
  EXPECT_EQ(rec.length, 8192u);

  s.base1.clear();
  s.flags = CB_F_FAULT(CB_SYS_BASE1);
  rec = ok(sys_record(s));
  EXPECT_TRUE(rec.path_unresolved);
  EXPECT_EQ(rec.path, "");
}

TEST(EbpfDecode, ChownOwners) {
  Sys s;
  s.nr = SYS_fchownat;
  s.ret = 0;
  s.args = {static_cast<uint64_t>(AT_FDCWD), 0, 0xffffffffULL, 100, AT_SYMLINK_NOFOLLOW};
  s.path1 = "/f";
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.owner_uid, -1);
  EXPECT_EQ(rec.owner_gid, 100);
  EXPECT_EQ(rec.flags, static_cast<uint64_t>(AT_SYMLINK_NOFOLLOW));

  s.nr = SYS_lchown;
  s.args = {0, 0, 0};
  rec = ok(sys_record(s));
  EXPECT_EQ(rec.owner_uid, 0);
  EXPECT_EQ(rec.flags, static_cast<uint64_t>(AT_SYMLINK_NOFOLLOW));
}

TEST(EbpfDecode, UnlinkatFlagsAndMkdirMode) {
  Sys s;
  s.nr = SYS_unlinkat;
  s.ret = 0;
  s.args = {static_cast<uint64_t>(AT_FDCWD), 0, AT_REMOVEDIR};
  s.path1 = "/x/d";
  EXPECT_EQ(ok(sys_record(s)).flags, static_cast<uint64_t>(AT_REMOVEDIR));
  s.nr = SYS_mkdir;
  s.args = {0, 0755};
  EXPECT_EQ(ok(sys_record(s)).mode, 0755u);
}

TEST(EbpfDecode, SuccessfulChdirNamesTheNewCwd) {
  // The base is read at sys_exit, after the move.
  Sys s;
  s.nr = SYS_chdir;
  s.ret = 0;
  s.args = {0};
  s.path1 = "../sub";
  s.base1 = "/w/sub";
  EXPECT_EQ(ok(sys_record(s)).path, "/w/sub");
  s.ret = -ENOENT;  // the cwd did not move
  s.base1 = "/w/a";
  EXPECT_EQ(ok(sys_record(s)).path, "/w/a/../sub");
}

TEST(EbpfDecode, PathTruncationAndFaultFlags) {
  Sys s;
  s.args = {static_cast<uint64_t>(AT_FDCWD), 0, O_RDONLY, 0};
  s.path1 = "f";
  s.base1 = "/very/deep";
  s.flags = CB_F_TRUNC(CB_SYS_BASE1);
  auto rec = ok(sys_record(s));
  EXPECT_TRUE(rec.path_truncated);
  EXPECT_FALSE(rec.path_unresolved);
  EXPECT_EQ(rec.path, "/very/deep/f");

  s.flags = CB_F_TRUNC(CB_SYS_PATH1);
  EXPECT_TRUE(ok(sys_record(s)).path_truncated);

  // the base could not be resolved (closed fd): the path stays as passed
  s.base1.clear();
  s.flags = CB_F_FAULT(CB_SYS_BASE1);
  rec = ok(sys_record(s));
  EXPECT_TRUE(rec.path_unresolved);
  EXPECT_EQ(rec.path, "f");

  // the path itself could not be read (bad pointer)
  s.path1.clear();
  s.flags = CB_F_FAULT(CB_SYS_PATH1);
  rec = ok(sys_record(s));
  EXPECT_TRUE(rec.path_unresolved);
  EXPECT_EQ(rec.path, "");
}

TEST(EbpfDecode, ConnectRendersTheAddress) {
  Sys s;
  s.nr = SYS_connect;
  s.ret = 0;
  s.args = {3, 0, 16};
  s.fd = 3;
  s.sock_type = SOCK_STREAM;
  s.sock_proto = IPPROTO_TCP;
  s.addr = inet4(8080, "127.0.0.1");
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.syscall, "connect");
  EXPECT_EQ(rec.addr, "tcp:127.0.0.1:8080");
  EXPECT_EQ(rec.path, "tcp:127.0.0.1:8080");
  EXPECT_EQ(rec.addr_raw, s.addr);
  EXPECT_EQ(rec.fd, 3);

  s.nr = SYS_bind;
  s.sock_type = SOCK_DGRAM;
  s.sock_proto = IPPROTO_UDP;
  s.addr = inet6(53, "::1");
  EXPECT_EQ(ok(sys_record(s)).addr, "udp:[::1]:53");
}

TEST(EbpfDecode, ConnectUnixRelativeUsesTheCwd) {
  Sys s;
  s.nr = SYS_connect;
  s.ret = -ECONNREFUSED;
  s.args = {3, 0, 0};
  s.addr = unix_addr(std::string("run/x.sock\0\0\0", 13));
  s.base1 = "/home/u";
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.addr, "unix:/home/u/run/x.sock");
  EXPECT_EQ(rec.ret, -ECONNREFUSED);
}

TEST(EbpfDecode, RenderSockaddr) {
  auto span = [](const std::string& s) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  };
  EXPECT_EQ(render_sockaddr(span(inet4(443, "10.0.0.1")), SOCK_STREAM, 0), "tcp:10.0.0.1:443");
  EXPECT_EQ(render_sockaddr(span(inet4(53, "1.1.1.1")), SOCK_DGRAM, 0), "udp:1.1.1.1:53");
  EXPECT_EQ(render_sockaddr(span(inet4(0, "0.0.0.0")), SOCK_RAW, IPPROTO_ICMP), "icmp:0.0.0.0:0");
  EXPECT_EQ(render_sockaddr(span(inet6(8443, "fe80::1")), SOCK_STREAM, IPPROTO_TCP), "tcp:[fe80::1]:8443");
  EXPECT_EQ(render_sockaddr(span(inet6(80, "::ffff:127.0.0.1")), SOCK_STREAM, IPPROTO_TCP),
            "tcp:[::ffff:127.0.0.1]:80");
  EXPECT_EQ(render_sockaddr(span(unix_addr("/run/docker.sock")), SOCK_STREAM, 0), "unix:/run/docker.sock");
  EXPECT_EQ(render_sockaddr(span(unix_addr(std::string("\0abstract", 9))), SOCK_STREAM, 0), "unix:@abstract");
  EXPECT_EQ(render_sockaddr(span(unix_addr("")), SOCK_DGRAM, 0), "unix:");
  EXPECT_EQ(render_sockaddr(span(unix_addr("rel.sock")), SOCK_STREAM, 0, "/w"), "unix:/w/rel.sock");
  EXPECT_EQ(render_sockaddr(span(unix_addr("rel.sock")), SOCK_STREAM, 0), "unix:rel.sock");
  std::string unspec(16, '\0');
  EXPECT_EQ(render_sockaddr(span(unspec), SOCK_DGRAM, 0), "unspec:");
  std::string netlink(12, '\0');
  netlink[0] = AF_NETLINK;
  EXPECT_EQ(render_sockaddr(span(netlink), SOCK_RAW, 0), "family:16");
  EXPECT_EQ(render_sockaddr(span(std::string("\x02", 1)), 0, 0), "family:?");
  EXPECT_EQ(render_sockaddr(span(inet4(1, "1.2.3.4").substr(0, 6)), SOCK_STREAM, 0), "family:2");
}

TEST(EbpfDecode, Signals) {
  Sys s;
  s.nr = SYS_kill;
  s.ret = 0;
  s.args = {77, SIGTERM};
  auto rec = ok(sys_record(s));
  EXPECT_EQ(rec.syscall, "kill");
  EXPECT_EQ(rec.signal, SIGTERM);
  EXPECT_EQ(rec.target_arg, 77);
  EXPECT_EQ(rec.target_pid, 0);

  s.nr = SYS_tgkill;
  s.args = {77, 78, SIGUSR1};
  rec = ok(sys_record(s));
  EXPECT_EQ(rec.target_arg, 77);
  EXPECT_EQ(rec.target_tid_arg, 78);
  EXPECT_EQ(rec.signal, SIGUSR1);

  s.nr = SYS_pidfd_send_signal;
  s.args = {6, SIGKILL, 0, 0};
  s.fd = 6;
  s.target_pid = 12;
  s.target_gpid = 1012;
  rec = ok(sys_record(s));
  EXPECT_EQ(rec.signal, SIGKILL);
  EXPECT_EQ(rec.fd, 6);
  EXPECT_EQ(rec.target_pid, 12);
  EXPECT_EQ(rec.target_global_pid, 1012);
}

TEST(EbpfDecode, IoUring) {
  cb_rec_io_uring r{};
  r.hdr = make_hdr(CB_REC_IO_URING);
  r.opcode = 36;
  r.user_data = 0xdeadbeef;
  auto rec = ok(pack(r));
  EXPECT_EQ(rec.kind, TraceKind::IoUring);
  EXPECT_EQ(rec.io_uring_op, "UNLINKAT");
  EXPECT_EQ(rec.syscall, "io_uring:UNLINKAT");
  EXPECT_EQ(rec.user_data, 0xdeadbeefu);
  EXPECT_EQ(io_uring_op_name(0), "NOP");
  EXPECT_EQ(io_uring_op_name(18), "OPENAT");
  EXPECT_EQ(io_uring_op_name(200), "OP_200");
}

TEST(EbpfDecode, RejectsShortAndGarbledInput) {
  EXPECT_NE(error_of({}).find("shorter than a record header"), std::string::npos);
  cb_rec_exit ex{};
  ex.hdr = make_hdr(CB_REC_EXIT);
  Bytes b = pack(ex);
  EXPECT_NE(error_of(Bytes(b.begin(), b.begin() + 20)).find("shorter"), std::string::npos);
  // size field disagrees with the buffer
  Bytes longer = b;
  longer.push_back(0);
  EXPECT_NE(error_of(longer).find("size field"), std::string::npos);
  // a fixed-size kind with the wrong size
  Bytes wrong = longer;
  uint32_t size = static_cast<uint32_t>(wrong.size());
  std::memcpy(wrong.data(), &size, 4);
  EXPECT_NE(error_of(wrong).find("exit record of"), std::string::npos);
  // version
  cb_rec_exit v = ex;
  v.hdr.version = 99;
  EXPECT_NE(error_of(pack(v)).find("wire version"), std::string::npos);
  // kind
  cb_rec_exit k = ex;
  k.hdr.kind = 77;
  EXPECT_NE(error_of(pack(k)).find("unknown kind"), std::string::npos);
  cb_rec_fork f{};
  f.hdr = make_hdr(CB_REC_FORK);
  Bytes fb = pack(f);
  fb.resize(fb.size() - 4);
  size = static_cast<uint32_t>(fb.size());
  std::memcpy(fb.data(), &size, 4);
  EXPECT_NE(error_of(fb).find("fork record"), std::string::npos);
}

TEST(EbpfDecode, RejectsBlobsThatOverrunOrLeaveBytes) {
  Sys s;
  s.args = {static_cast<uint64_t>(AT_FDCWD), 0, 0, 0};
  s.path1 = "/abc";
  Bytes b = sys_record(s);
  // claim a longer path than the record holds
  cb_rec_syscall r;
  std::memcpy(&r, b.data(), sizeof(r));
  r.len[CB_SYS_PATH1] = 40;
  Bytes over = b;
  std::memcpy(over.data(), &r, sizeof(r));
  EXPECT_NE(error_of(over).find("cut short"), std::string::npos);
  // claim a shorter one: bytes left over
  r.len[CB_SYS_PATH1] = 2;
  Bytes under = b;
  std::memcpy(under.data(), &r, sizeof(r));
  EXPECT_NE(error_of(under).find("trailing bytes"), std::string::npos);
  // a syscall the tracer does not follow
  Sys u = s;
  u.nr = SYS_getpid;
  EXPECT_NE(error_of(sys_record(u)).find("not traced"), std::string::npos);
  // a syscall record too short for its own struct
  Bytes cut(b.begin(), b.begin() + sizeof(cb_rec_syscall) - 8);
  uint32_t size = static_cast<uint32_t>(cut.size());
  std::memcpy(cut.data(), &size, 4);
  EXPECT_NE(error_of(cut).find("shorter than its header"), std::string::npos);
  // an exec record whose argv runs past the end
  Bytes e = exec_record("/bin/x", "", std::string("x\0", 2));
  e.pop_back();
  size = static_cast<uint32_t>(e.size());
  std::memcpy(e.data(), &size, 4);
  EXPECT_NE(error_of(e).find("exec record cut short"), std::string::npos);
}

TEST(EbpfDecode, JoinPath) {
  EXPECT_EQ(join_path("/a/b", "c"), "/a/b/c");
  EXPECT_EQ(join_path("/a/b/", "./c/"), "/a/b/c");
  EXPECT_EQ(join_path("/", "c"), "/c");
  EXPECT_EQ(join_path("/a", ""), "/a");
  EXPECT_EQ(join_path("/a", "."), "/a");
  EXPECT_EQ(join_path("/a", "/x//y/."), "/x/y");
  EXPECT_EQ(join_path("/a", "../b"), "/a/../b");
  EXPECT_EQ(join_path("", "rel"), "rel");
  EXPECT_EQ(join_path("", "/"), "/");
  EXPECT_EQ(join_path("/", ""), "/");
  // bytes, not text
  EXPECT_EQ(join_path("/d\xff", "f\n"), "/d\xff/f\n");
}

TEST(EbpfDecode, EveryTracedRowProgramsTheKernelSide) {
  for (const auto& s : syscall_table()) {
    if (!s.traced) continue;
    SCOPED_TRACE(std::string(s.name));
    EXPECT_LT(s.nr, CB_NR_MAX);
    auto d = to_sysdesc(s);
    EXPECT_EQ(d.traced, 1);
    EXPECT_EQ(d.path1, s.args.path1);
    EXPECT_EQ(d.dirfd1, s.args.dirfd1);
    EXPECT_EQ(d.path2, s.args.path2);
    EXPECT_EQ(d.dirfd2, s.args.dirfd2);
    EXPECT_EQ(d.fd, s.args.fd);
    EXPECT_EQ(d.addr, s.args.addr);
  }
  for (const char* must : {"open",    "openat",   "openat2",   "creat",   "unlink",   "unlinkat",         "rmdir",
                           "rename",  "renameat", "renameat2", "link",    "linkat",   "symlink",          "symlinkat",
                           "mkdir",   "mkdirat",  "mknod",     "mknodat", "truncate", "ftruncate",        "fallocate",
                           "chmod",   "fchmod",   "fchmodat",  "chown",   "fchown",   "lchown",           "fchownat",
                           "connect", "bind",     "kill",      "tkill",   "tgkill",   "pidfd_send_signal"}) {
    bool found = false;
    for (const auto& s : syscall_table()) found |= s.traced && s.name == must;
    EXPECT_TRUE(found) << must;
  }
}

}  // namespace
}  // namespace cb
