/* The bare eBPF tracer floor, for bench/bench_tracer_floor (issue 5): what a
 * syscall tracer built on the raw sys_enter/sys_exit tracepoints costs every
 * syscall of the host just by being attached, before it records anything.
 *
 * The two programs take the same first steps as cottonbox.bpf.c's for a
 * syscall that no rule records (a bounds check and a lookup in a syscall
 * table; at exit, orig_ax read first), against a table that is all zeros, so
 * they never go further.  A getppid under them costs what one under the
 * tracer costs at the least: the kernel's slow syscall path plus two program
 * runs.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "cb_wire.h"

/* No vmlinux.h and no CO-RE: libbpf then has no reason to read and parse the
 * kernel's BTF at load, and the launch of this floor is the load and attach
 * of two programs.  The raw tracepoints' arguments (struct pt_regs *regs,
 * long id or ret) come as an array of u64. */
#define CB_ORIG_AX_OFFSET (15 * 8) /* x86-64 struct pt_regs, the syscall ABI */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CB_NR_MAX);
	__type(key, __u32);
	__type(value, struct cb_sysdesc);
} floor_desc SEC(".maps");

/* Set once each program has run: proof that they were attached, at the
 * price of one load that stays in every CPU's cache (a counter would bounce
 * its cache line between CPUs on every syscall). */
__u32 enter_ran = 0;
__u32 exit_ran = 0;

static __always_inline int traced(long id)
{
	struct cb_sysdesc *d;
	__u32 nr;

	if ((__u64)id >= CB_NR_MAX)
		return 0;
	nr = id;
	d = bpf_map_lookup_elem(&floor_desc, &nr);
	return d && d->traced;
}

SEC("raw_tp/sys_enter")
int cb_floor_enter(__u64 *ctx)
{
	if (!enter_ran)
		enter_ran = 1;
	return traced((long)ctx[1]);
}

SEC("raw_tp/sys_exit")
int cb_floor_exit(__u64 *ctx)
{
	long orig_ax = -1;

	if (!exit_ran)
		exit_ran = 1;
	bpf_probe_read_kernel(&orig_ax, sizeof(orig_ax), (void *)(ctx[0] + CB_ORIG_AX_OFFSET));
	return traced(orig_ax);
}
