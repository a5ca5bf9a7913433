// The record trace-lab's BPF programs put in the ring buffer, as both sides
// see it (include <linux/types.h> or vmlinux.h first).
#ifndef TRACE_LAB_H
#define TRACE_LAB_H

#define TRACE_LAB_PATH_MAX 256  // longer paths arrive cut, and say so

struct record {
  __u64 ts_enter, ts_exit;  // bpf_ktime_get_ns(): CLOCK_MONOTONIC
  __u32 pid;                // tgid, in the initial pid namespace
  __s32 nr, dirfd, flags;
  __s64 ret;  // the call's result: >= 0, or -errno
  char comm[16];
  char path[TRACE_LAB_PATH_MAX];
};

#endif
