/* Measures, from inside the kernel, where the calling process (the
 * supervisor) sits among pid namespaces, so that the tracer can be loaded
 * with those numbers as constants.
 *
 * User space cannot learn its pid namespace's depth: /proc/self/status lists
 * only the levels below the namespace /proc was mounted from, and
 * NS_GET_PARENT stops at the caller's own namespace.  So user space runs this
 * program once on its own thread (BPF_PROG_TEST_RUN of a raw tracepoint
 * program runs it synchronously in the caller's context) and reads the result.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* stat("/proc/self/ns/pid"): checked against what the kernel says. */
const volatile __u64 ns_dev = 0;
const volatile __u64 ns_ino = 0;

__u32 level = 0;       /* depth of the caller's pid namespace (0: initial) */
__u32 inum = 0;	       /* its inode number, as the kernel sees it */
__s32 ns_tgid = 0;     /* the caller's tgid there, by bpf_get_ns_current_pid_tgid */
__s32 global_tgid = 0; /* and in the initial namespace */
__s64 helper_ret = 0;  /* bpf_get_ns_current_pid_tgid's result */
__u32 ran = 0;

SEC("raw_tp")
int cb_calibrate(void *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	struct bpf_pidns_info ns = {};
	struct upid *up;

	level = BPF_CORE_READ(pid, level);
	up = (void *)pid + bpf_core_field_offset(struct pid, numbers) +
	     level * bpf_core_type_size(struct upid);
	inum = BPF_CORE_READ(up, ns, ns.inum);
	global_tgid = bpf_get_current_pid_tgid() >> 32;
	helper_ret = bpf_get_ns_current_pid_tgid(ns_dev, ns_ino, &ns, sizeof(ns));
	ns_tgid = ns.tgid;
	ran = 1;
	return 0;
}
