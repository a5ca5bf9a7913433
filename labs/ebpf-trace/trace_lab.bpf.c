// The kernel half of trace-lab (docs/labs/2-ebpf-tracing.md): records the
// unlink, unlinkat and write-opens of one process tree into a ring buffer.
//
// Compiled once with clang against bpf/vmlinux.h (every kernel type, dumped
// from a kernel's BTF).  Field accesses to kernel structs are compiled as
// CO-RE relocations: at load, libbpf looks each field up in the running
// kernel's BTF (/sys/kernel/btf/vmlinux) and patches the offset, so the same
// object runs on kernels whose task_struct differs.
//
// Two ways to reach the system calls, chosen at load by trace-lab:
//   raw tracepoints sys_enter/sys_exit: one pair of programs that every
//     system call of the host runs (they return at once for other numbers);
//   the syscalls:sys_enter_<name>/sys_exit_<name> tracepoints (--tp): the
//     kernel calls the programs for those system calls only.
// vmlinux.h first: libbpf's headers use its types.
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "trace_lab.h"

char LICENSE[] SEC("license") = "GPL";

#define NR_OPENAT 257
#define NR_UNLINK 87
#define NR_UNLINKAT 263
#define O_WRITE_FLAGS (01 | 02 | 0100 | 01000)  // O_WRONLY | O_RDWR | O_CREAT | O_TRUNC

// The processes (tgids) being traced: trace-lab puts in CMD's pid, and the
// fork tracepoint adds every child of a process already in.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 8192);
  __type(key, __u32);
  __type(value, __u8);
} tracked SEC(".maps");

// A call's arguments, kept from its entry to its exit, by thread id.
struct enter {
  __u64 ts;
  __u64 path;
  __s32 nr, dirfd, flags;
};
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 8192);
  __type(key, __u32);
  __type(value, struct enter);
} enters SEC(".maps");

// One buffer shared by all CPUs, read by trace-lab.  Its size is set by
// trace-lab before load (a power of two, whole pages).
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} records SEC(".maps");

// Counters trace-lab reads at the end (global variables live in a map).
__u64 sent = 0;
__u64 dropped = 0;

static __always_inline int is_tracked(void) {
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  return bpf_map_lookup_elem(&tracked, &tgid) != NULL;
}

static __always_inline int record_enter(int nr, long dirfd, __u64 path, long flags) {
  if (nr == NR_OPENAT && !(flags & O_WRITE_FLAGS)) return 0;  // read-only opens: not recorded
  if (!is_tracked()) return 0;
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  struct enter e = {.ts = bpf_ktime_get_ns(), .path = path, .nr = nr, .dirfd = dirfd, .flags = flags};
  bpf_map_update_elem(&enters, &tid, &e, BPF_ANY);
  return 0;
}

// At exit the call has happened: the record says what it did and its result.
static __always_inline int record_exit(long ret) {
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  struct enter* e = bpf_map_lookup_elem(&enters, &tid);
  if (!e) return 0;
  struct record* r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
  if (!r) {
    // The ring is full: trace-lab has not read fast enough.  The kernel does
    // not wait for it; the record is lost, and only counted.
    __sync_fetch_and_add(&dropped, 1);
    bpf_map_delete_elem(&enters, &tid);
    return 0;
  }
  r->ts_enter = e->ts;
  r->ts_exit = bpf_ktime_get_ns();
  r->pid = bpf_get_current_pid_tgid() >> 32;
  r->nr = e->nr;
  r->dirfd = e->dirfd;
  r->flags = e->flags;
  r->ret = ret;
  bpf_get_current_comm(r->comm, sizeof(r->comm));
  // The path is read now, from the caller's memory: the pages were faulted
  // in by the call itself.  It is what the memory says after the call,
  // which another thread could have changed meanwhile.
  if (bpf_probe_read_user_str(r->path, sizeof(r->path), (void*)e->path) < 0) r->path[0] = 0;
  bpf_map_delete_elem(&enters, &tid);
  bpf_ringbuf_submit(r, 0);
  __sync_fetch_and_add(&sent, 1);
  return 0;
}

// --- raw tracepoints: every system call of the host passes here ---------
// The arguments are the raw ones of the tracepoint: struct pt_regs * (the
// caller's registers) and the syscall number or result.  BPF_CORE_READ reads
// pt_regs fields at the offsets the running kernel's BTF gives.
SEC("raw_tp/sys_enter")
int BPF_PROG(raw_enter, struct pt_regs* regs, long id) {
  if (id != NR_UNLINK && id != NR_UNLINKAT && id != NR_OPENAT) return 0;
  __u64 di = BPF_CORE_READ(regs, di), si = BPF_CORE_READ(regs, si), dx = BPF_CORE_READ(regs, dx);
  if (id == NR_UNLINK) return record_enter(id, -100 /* AT_FDCWD */, di, 0);
  return record_enter(id, (long)di, si, (long)dx);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(raw_exit, struct pt_regs* regs, long ret) {
  long id = BPF_CORE_READ(regs, orig_ax);  // the number the call was made with
  if (id != NR_UNLINK && id != NR_UNLINKAT && id != NR_OPENAT) return 0;
  return record_exit(ret);
}

// --- per-syscall tracepoints (--tp) ---------------------------------------
// Their context is the tracepoint's record: the number, then the arguments.
SEC("tp/syscalls/sys_enter_unlink")
int tp_enter_unlink(struct syscall_trace_enter* ctx) { return record_enter(NR_UNLINK, -100, ctx->args[0], 0); }

SEC("tp/syscalls/sys_enter_unlinkat")
int tp_enter_unlinkat(struct syscall_trace_enter* ctx) {
  return record_enter(NR_UNLINKAT, (long)ctx->args[0], ctx->args[1], (long)ctx->args[2]);
}

SEC("tp/syscalls/sys_enter_openat")
int tp_enter_openat(struct syscall_trace_enter* ctx) {
  return record_enter(NR_OPENAT, (long)ctx->args[0], ctx->args[1], (long)ctx->args[2]);
}

SEC("tp/syscalls/sys_exit_unlink")
int tp_exit_unlink(struct syscall_trace_exit* ctx) { return record_exit(ctx->ret); }

SEC("tp/syscalls/sys_exit_unlinkat")
int tp_exit_unlinkat(struct syscall_trace_exit* ctx) { return record_exit(ctx->ret); }

SEC("tp/syscalls/sys_exit_openat")
int tp_exit_openat(struct syscall_trace_exit* ctx) { return record_exit(ctx->ret); }

// --- the process tree -----------------------------------------------------
// sched_process_fork fires in the parent, before the child can run: a child
// is tracked before it can make its first call.
SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct* parent, struct task_struct* child) {
  __u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
  __u8 one = 1;
  if (ptgid != ctgid && bpf_map_lookup_elem(&tracked, &ptgid)) bpf_map_update_elem(&tracked, &ctgid, &one, BPF_ANY);
  return 0;
}

// A process leaves the map when its main thread exits, so that a pid the
// kernel hands out again later is not traced by mistake.
SEC("raw_tp/sched_process_exit")
int BPF_PROG(forget_task, struct task_struct* task) {
  __u32 pid = BPF_CORE_READ(task, pid), tgid = BPF_CORE_READ(task, tgid);
  if (pid == tgid) bpf_map_delete_elem(&tracked, &tgid);
  return 0;
}
