// The syscall table (syscalls/table.h) against the three classifiers that
// read it: the seccomp filter built from it notifies exactly the calls its
// clauses name, under exactly their gates; every family the filter can send
// to the supervisor has a handler; every traced row's record becomes an
// action its family can amount to.
#include "syscalls/table.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <sys/syscall.h>

#include <set>
#include <string>

#include "launch/filter.h"
#include "notify/handlers.h"
#include "syscalls/names.h"
#include "tests/support/cbpf.h"
#include "trace/trace_events.h"

namespace cb {
namespace {

uint32_t verdict(const FilterSpec& spec, int nr, const uint64_t args[6], uint32_t arch = AUDIT_ARCH_X86_64) {
  auto prog = build_filter(spec);
  EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().message);
  if (!prog.ok()) return 0;
  seccomp_data d{};
  d.nr = nr;
  d.arch = arch;
  for (int i = 0; i < 6; ++i) d.args[i] = args[i];
  return test::run_seccomp_bpf(prog->insns, d) & SECCOMP_RET_ACTION_FULL;
}

uint32_t expected(const FilterClause& c) { return c.errno_ ? SECCOMP_RET_ERRNO : SECCOMP_RET_USER_NOTIF; }

// Arguments that satisfy every comparison of a clause.
void satisfy(const FilterClause& c, uint64_t args[6]) {
  for (const ArgCmp& cmp : c.cmp) {
    if (cmp.op == CmpOp::None) continue;
    uint64_t& a = args[cmp.arg];
    switch (cmp.op) {
      case CmpOp::MaskedEq: a = (a & ~cmp.mask) | cmp.value; break;
      case CmpOp::NotEqual: a = cmp.value + 1; break;
      case CmpOp::AnyBit: a |= cmp.mask & -cmp.mask; break;
      case CmpOp::WriteOpen: a = O_WRONLY; break;
      case CmpOp::None: break;
    }
  }
}

std::string name_of(const Syscall& s) { return std::string(s.name); }

TEST(SyscallTable, RowsAreUniqueAndNamedAsTheKernelNamesThem) {
  std::set<int> seen;
  for (const Syscall& s : syscall_table()) {
    SCOPED_TRACE(name_of(s));
    EXPECT_TRUE(seen.insert(s.nr).second) << "two rows for one number";
    EXPECT_EQ(syscall_name(s.nr), s.name);
    EXPECT_EQ(find_syscall(s.nr), &s);
    EXPECT_NE(s.family, Family::Count);
    for (int8_t role : {s.args.path1,  s.args.path2,  s.args.fd,    s.args.sock,   s.args.addr,       s.args.addrlen,
                        s.args.how,    s.args.pidfd,  s.args.flags, s.args.mode,   s.args.uid,        s.args.gid,
                        s.args.offset, s.args.length, s.args.sig,   s.args.target, s.args.target_tid, s.args.dev,
                        s.args.data,   s.args.name,   s.args.size,  s.args.dirfd1, s.args.dirfd2})
      EXPECT_LT(role, 6) << "an argument role beyond the sixth argument";
    EXPECT_TRUE(s.args.path1 >= 0 || s.args.dirfd1 == kAtCwd) << "a dirfd with no path";
  }
  EXPECT_EQ(find_syscall(SYS_getpid), nullptr);
  EXPECT_EQ(find_syscall(-1), nullptr);
  EXPECT_EQ(find_syscall(100000), nullptr);
}

TEST(SyscallTable, EachClauseNotifiesUnderItsGateAndOnlyThere) {
  for (const Syscall& s : syscall_table()) {
    for (const FilterClause& c : s.filter) {
      if (c.gate == Gate::Count) continue;
      SCOPED_TRACE(name_of(s) + " under " + std::string(gate_name(c.gate)));
      FilterSpec open;
      open.set(c.gate);
      open.io_uring_allowed = c.gate != Gate::IoUringRefused;
      uint64_t args[6] = {};
      satisfy(c, args);
      EXPECT_EQ(verdict(open, s.nr, args), expected(c)) << "the clause's call, its gate open";
      if (c.gate == Gate::Always) continue;
      FilterSpec closed;
      closed.io_uring_allowed = true;
      EXPECT_EQ(verdict(closed, s.nr, args), SECCOMP_RET_ALLOW) << "the same call, its gate closed";
    }
  }
}

TEST(SyscallTable, ComparisonsAreMadeInTheFilter) {
  FilterSpec spec;
  spec.set(Gate::WriteOpens);
  uint64_t ro[6] = {uint64_t(AT_FDCWD), 0, O_RDONLY, 0, 0, 0};
  EXPECT_EQ(verdict(spec, SYS_openat, ro), SECCOMP_RET_ALLOW) << "a read-only open never leaves the kernel";
  for (uint64_t flags :
       {uint64_t(O_WRONLY), uint64_t(O_RDWR), uint64_t(O_RDONLY | O_CREAT), uint64_t(O_RDONLY | O_TRUNC)}) {
    uint64_t w[6] = {uint64_t(AT_FDCWD), 0, flags, 0, 0, 0};
    EXPECT_EQ(verdict(spec, SYS_openat, w), SECCOMP_RET_USER_NOTIF) << flags;
  }
  FilterSpec guards;
  uint64_t mine[6] = {0, 7, 1, 0, 0, 0};
  EXPECT_EQ(verdict(guards, SYS_prlimit64, mine), SECCOMP_RET_ALLOW) << "prlimit on oneself";
  uint64_t other[6] = {42, 7, 1, 0, 0, 0};
  EXPECT_EQ(verdict(guards, SYS_prlimit64, other), SECCOMP_RET_USER_NOTIF) << "prlimit on another process";
  uint64_t query[6] = {42, 7, 0, 0, 0, 0};
  EXPECT_EQ(verdict(guards, SYS_prlimit64, query), SECCOMP_RET_ALLOW) << "reading another's limit";
}

TEST(SyscallTable, ASendWithoutAnAddressNeverLeavesTheKernel) {
  FilterSpec spec;
  spec.set(Gate::Sends);
  uint64_t send[6] = {3, 0x1000, 5, 0, 0, 0};  // send(): sendto with no address
  EXPECT_EQ(verdict(spec, SYS_sendto, send), SECCOMP_RET_ALLOW);
  uint64_t named[6] = {3, 0x1000, 5, 0, 0x2000, 16};
  EXPECT_EQ(verdict(spec, SYS_sendto, named), SECCOMP_RET_USER_NOTIF);
  // The address of sendmsg and sendmmsg is behind a pointer: every one is judged.
  uint64_t msg[6] = {3, 0x1000, 0, 0, 0, 0};
  EXPECT_EQ(verdict(spec, SYS_sendmsg, msg), SECCOMP_RET_USER_NOTIF);
  EXPECT_EQ(verdict(spec, SYS_sendmmsg, msg), SECCOMP_RET_USER_NOTIF);
  FilterSpec closed;
  EXPECT_EQ(verdict(closed, SYS_sendmsg, msg), SECCOMP_RET_ALLOW) << "no network rule: never notified";
}

TEST(SyscallTable, CallsNoRowNamesAreAllowedAndOtherAbisKilled) {
  FilterSpec all;
  all.gates = ~GateMask{0};
  uint64_t args[6] = {};
  EXPECT_EQ(verdict(all, SYS_getpid, args), SECCOMP_RET_ALLOW);
  EXPECT_EQ(verdict(all, SYS_read, args), SECCOMP_RET_ALLOW);
  EXPECT_EQ(verdict(all, 20 /* i386 getpid */, args, AUDIT_ARCH_I386), SECCOMP_RET_KILL_PROCESS);
  EXPECT_EQ(verdict(all, SYS_unlink | 0x40000000 /* x32 */, args), SECCOMP_RET_KILL_PROCESS);
}

TEST(SyscallTable, EveryFamilyTheFilterCanNotifyHasAHandler) {
  for (const Syscall& s : syscall_table()) {
    SCOPED_TRACE(name_of(s) + " (" + std::string(family_name(s.family)) + ")");
    bool notified = false;
    for (const FilterClause& c : s.filter) notified |= c.gate != Gate::Count && c.errno_ == 0;
    if (notified) {
      EXPECT_NE(handlers::handler_for(s.family), nullptr);
    }
  }
}

TEST(SyscallTable, EveryTracedRecordIsAnActionOfItsFamily) {
  for (const Syscall& s : syscall_table()) {
    if (!s.traced) continue;
    SCOPED_TRACE(name_of(s));
    TraceRecord r;
    r.kind = TraceKind::Syscall;
    r.syscall_nr = s.nr;
    r.syscall = std::string(s.name);
    r.path = "/x";
    auto ev = event_of(r);
    if (s.family == Family::Chdir || s.family == Family::Creds) {
      EXPECT_FALSE(ev) << "keeps the process table right; no event";
      continue;
    }
    ASSERT_TRUE(ev) << "a traced row becomes an event";
    EXPECT_TRUE(family_actions(s.family) & bit(ev->action)) << action_name(ev->action);
  }
}

TEST(SyscallTable, NamesOfFamiliesAndGatesAreComplete) {
  for (int f = 0; f < static_cast<int>(Family::Count); ++f)
    EXPECT_NE(family_name(static_cast<Family>(f)), "unknown") << f;
  for (int g = 0; g < static_cast<int>(Gate::Count); ++g) EXPECT_NE(gate_name(static_cast<Gate>(g)), "unknown") << g;
}

}  // namespace
}  // namespace cb
