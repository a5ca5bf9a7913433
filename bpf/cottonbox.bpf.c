/* The kernel side of cottonbox's eBPF tracer.
 *
 * Records what the processes of the sessions it serves do, and nothing else:
 * a task is in scope when its tgid is in `tracked`, which user space seeds
 * with a session's first process and sched_process_fork extends to every
 * child, in the parent's session.  One load serves every session (the
 * resident service, tracerd/) or just one (a private tracer): each session
 * has a slot (cb_wire.h) with a ring buffer of its own, so that a session's
 * reader gets its own records and nothing else.  What a process outside
 * every session pays does not depend on how many sessions there are: the
 * same one lookup in `tracked`.
 *
 * Syscalls are followed at the two raw tracepoints every syscall passes,
 * sys_enter and sys_exit: two attachments instead of two per syscall (each a
 * perf event, whose attach and RCU-synchronised detach made the tracer's
 * start and end slow).  The host's other syscalls cost a look at the syscall
 * number in `sysdesc` and a return; the per-syscall tracepoints had the
 * kernel do the same test, behind the same sys_enter tracepoint.  (Plain raw
 * tracepoints rather than BTF ones: those would make libbpf parse the whole
 * of vmlinux's BTF at every start, which the tracer otherwise avoids.)  The
 * enter program saves the arguments in task storage, the exit program emits
 * one record with the result.  A syscall that the seccomp supervisor answered
 * itself skips sys_enter but may still reach sys_exit; since only a saved
 * enter produces a record, such a syscall is never recorded twice.
 *
 * Paths are read at sys_exit, when the kernel has faulted their pages in.  A
 * relative path gets the absolute path of its base directory (the cwd or the
 * dirfd), made here by walking dentries up to the mount namespace's root,
 * because by the time user space looked, the fd could be closed or reused.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cb_wire.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define AT_FDCWD	    (-100)
#define AF_UNIX		    1
#define SOCKFS_MAGIC	    0x534F434B
#define PID_FS_MAGIC	    0x50494446
#define ANON_INODE_FS_MAGIC 0x09041934

/* Steps of a dentry walk: path components plus mount crossings. */
#define CB_WALK_STEPS 40

/* Set by user space before load. */
const volatile __u32 sup_pidns_level = 0;    /* the loader's pid namespace (seeds) ... */
const volatile __u32 sup_pidns_ino = 0;	     /* ... as measured by cb_calibrate */
const volatile __u64 wakeup_bytes = 1 << 20; /* wake the reader once this much is pending */
const volatile __u32 wakeup_mask = 63;	     /* ... or every (mask + 1) records of a CPU */

/* Each slot's ring buffer, made and put in by user space (their sizes may
 * differ: the kernel compares an inner ring's type, not its size). */
struct cb_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, CB_SLOTS);
	__type(key, __u32);
	__array(values, struct cb_ring);
} rings SEC(".maps");

/* Each slot's losses, for a reader that cannot read `counters`. */
struct cb_lost_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cb_lost));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, CB_SLOTS);
	__type(key, __u32);
	__array(values, struct cb_lost_map);
} losts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CB_SLOTS);
	__type(key, __u32);
	__type(value, struct cb_slot);
} slots SEC(".maps");

/* tgids (initial pid namespace) of the sessions' processes -> CB_TRACK(slot,
 * gen).  Allocated as processes come (the kernel's BPF allocator serves
 * tracepoint context): preallocating 65536 entries cost every start 3 MB of
 * zeroed kernel memory. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} tracked SEC(".maps");

/* A loader inside a pid namespace knows a session's first process only by a
 * number of that namespace: it lands here (-> CB_TRACK), and the process
 * moves to `tracked` at its next fork or exec. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CB_SLOTS);
	__type(key, __s32);
	__type(value, __u32);
} seeds SEC(".maps");

/* A syscall's arguments, from sys_enter to its sys_exit.  In task storage:
 * a slot per thread, found without hashing and freed with the thread. */
struct cb_enter {
	__u64 args[8]; /* 6 used; 8 keeps a masked index in bounds */
	__s32 nr;
	__u32 pending; /* set at sys_enter, cleared at sys_exit */
	__u32 addrlen;
	__u32 track; /* the task's CB_TRACK at sys_enter */
	__u8 addr[CB_ADDR_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cb_enter);
} enters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CB_NR_MAX);
	__type(key, __u32);
	__type(value, struct cb_sysdesc);
} sysdesc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CB_SLOTS);
	__type(key, __u32);
	__type(value, struct cb_counters);
} counters SEC(".maps");

/* The largest offset at which a blob of up to CB_PATH_MAX bytes is written. */
#define CB_OFF_LIMIT (sizeof(struct cb_rec_syscall) + 3 * CB_PATH_MAX)
#define CB_REC_BUF   (CB_OFF_LIMIT + CB_PATH_MAX + CB_ADDR_MAX)

/* Records with paths are built here and copied into the ring buffer at their
 * real size: reserving the worst case (four paths) in the ring itself would
 * take 16 KiB of it for every open. */
struct cb_scratch {
	__u8 rec[CB_REC_BUF];
	__u8 walk[2 * CB_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cb_scratch);
} scratch SEC(".maps");

/* Result of the copy helpers: length, plus status bits. */
#define R_TRUNC	 (1u << 16)
#define R_FAULT	 (1u << 17)
#define R_LEN(r) ((r)&0xffff)

static __always_inline struct cb_counters *get_counters(__u32 slot)
{
	return bpf_map_lookup_elem(&counters, &slot);
}

/* Counts a lost record (or a dropped enter) for the slot, where its reader
 * sees it too. */
static __always_inline void count_lost(__u32 slot, struct cb_counters *c, bool enter)
{
	void *inner = bpf_map_lookup_elem(&losts, &slot);
	struct cb_lost *l;
	__u32 zero = 0;

	if (c) {
		if (enter)
			c->enter_dropped++;
		else
			c->lost++;
	}
	if (!inner)
		return;
	l = bpf_map_lookup_elem(inner, &zero);
	if (!l)
		return;
	if (enter)
		__sync_fetch_and_add(&l->enter_dropped, 1);
	else
		__sync_fetch_and_add(&l->lost, 1);
}

/* Whether the slot's reader may see the syscalls of `task` (cb_slot.owner_uid):
 * what a process running as another user opens is no more the user's to see
 * than its open files in /proc are.  Its forks, execs (argv, as /proc shows
 * them to anyone) and exits are recorded: they are the session's tree. */
static __always_inline bool may_see(struct cb_slot *cfg, struct task_struct *task)
{
	__u32 owner = cfg->owner_uid;

	return owner == CB_ANY_UID || BPF_CORE_READ(task, cred, euid.val) == owner;
}

/* The slot of a CB_TRACK value, or NULL when its session has ended. */
static __always_inline struct cb_slot *live_slot(__u32 track)
{
	__u32 slot = CB_TRACK_SLOT(track);
	struct cb_slot *cfg = bpf_map_lookup_elem(&slots, &slot);

	if (!cfg || !cfg->gen || cfg->gen != CB_TRACK_GEN(track))
		return NULL;
	return cfg;
}

/* Wakeups are what a ring buffer costs most under load: the reader is woken
 * every few records or once enough bytes wait, and polls with a short timeout
 * for the rest.  Bytes are counted per CPU rather than asked of the ring,
 * whose positions live on the reader's cache lines. */
static __always_inline __u64 wake_flags(struct cb_counters *c, __u32 size)
{
	if (!c)
		return BPF_RB_FORCE_WAKEUP;
	c->unwoken_bytes += size;
	if (!(c->records & wakeup_mask) || c->unwoken_bytes >= wakeup_bytes) {
		c->unwoken_bytes = 0;
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void emit(__u32 slot, void *rec, __u32 size)
{
	struct cb_counters *c = get_counters(slot);
	void *rb = bpf_map_lookup_elem(&rings, &slot);

	if (!rb || bpf_ringbuf_output(rb, rec, size, wake_flags(c, size))) {
		count_lost(slot, c, false);
		return;
	}
	if (c)
		c->records++;
}

static __always_inline void *reserve(__u32 slot, __u32 size)
{
	void *rb = bpf_map_lookup_elem(&rings, &slot);
	void *r = rb ? bpf_ringbuf_reserve(rb, size, 0) : NULL;

	if (!r) {
		struct cb_counters *c = get_counters(slot);

		count_lost(slot, c, false);
	}
	return r;
}

static __always_inline void submit(__u32 slot, void *r, __u32 size)
{
	struct cb_counters *c = get_counters(slot);

	bpf_ringbuf_submit(r, wake_flags(c, size));
	if (c)
		c->records++;
}

/* The number of `pid` in the pid namespace (ns_level, ns_ino) of a
 * supervisor; 0 when the task is not visible there.
 * bpf_get_ns_current_pid_tgid() cannot do this: it only answers for a task
 * whose own namespace is the one asked about, and the session lives in a
 * namespace below the supervisor's. */
static __always_inline __s32 sup_nr(struct pid *pid, __s32 global, __u32 ns_level, __u32 ns_ino)
{
	struct upid *up;
	__u32 level;

	if (ns_level == 0)
		return global;
	if (!pid || ns_level > 32)
		return 0;
	level = BPF_CORE_READ(pid, level);
	if (level < ns_level)
		return 0;
	up = (void *)pid + bpf_core_field_offset(struct pid, numbers) +
	     ns_level * bpf_core_type_size(struct upid);
	if (BPF_CORE_READ(up, ns, ns.inum) != ns_ino)
		return 0;
	return BPF_CORE_READ(up, nr);
}

static __always_inline void fill_hdr(struct cb_rec_hdr *h, __u16 kind, __u32 size,
				     struct task_struct *task, __u64 id, struct cb_slot *cfg)
{
	__u32 level = cfg->pidns_level, ino = cfg->pidns_ino;

	h->size = size;
	h->kind = kind;
	h->version = CB_WIRE_VERSION;
	h->flags = 0;
	h->uid = (__u32)bpf_get_current_uid_gid();
	h->ts_ns = bpf_ktime_get_ns();
	h->gpid = id >> 32;
	h->gtid = (__u32)id;
	if (level == 0) {
		h->pid = h->gpid;
		h->tid = h->gtid;
	} else {
		h->pid = sup_nr(BPF_CORE_READ(task, group_leader, thread_pid), h->gpid, level, ino);
		h->tid = sup_nr(BPF_CORE_READ(task, thread_pid), h->gtid, level, ino);
	}
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}

/* Moves a seeded process (nested loader only) to `tracked`; its CB_TRACK,
 * or 0. */
static __always_inline __u32 take_seed(struct task_struct *task, __u32 tgid)
{
	__u32 *v, track;
	__s32 nr;

	if (sup_pidns_level == 0)
		return 0;
	nr = sup_nr(BPF_CORE_READ(task, group_leader, thread_pid), tgid, sup_pidns_level,
		    sup_pidns_ino);
	if (!nr)
		return 0;
	v = bpf_map_lookup_elem(&seeds, &nr);
	if (!v)
		return 0;
	track = *v;
	bpf_map_delete_elem(&seeds, &nr);
	bpf_map_update_elem(&tracked, &tgid, &track, BPF_ANY);
	return track;
}

/* The CB_TRACK of a process, 0 when it is in no session. */
static __always_inline __u32 track_of(struct task_struct *task, __u32 tgid, bool seeds_too)
{
	__u32 *v = bpf_map_lookup_elem(&tracked, &tgid);

	if (v)
		return *v;
	return seeds_too ? take_seed(task, tgid) : 0;
}

static __always_inline struct file *fd_file(struct task_struct *task, __s64 fd)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	unsigned int max = BPF_CORE_READ(fdt, max_fds);
	struct file *f = NULL;

	if (fd < 0 || fd >= max)
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

static __always_inline unsigned long file_magic(struct file *f)
{
	return BPF_CORE_READ(f, f_inode, i_sb, s_magic);
}

struct walk_state {
	struct cb_scratch *s;
	__u64 vmnt, d, mnt; /* kernel pointers, as integers */
	__u64 root;	    /* vmnt's root dentry; 0: not read yet */
	__u64 pos, status;
};

/* A dentry's parent and name, as they lie side by side in struct dentry
 * (d_parent, then the qstr d_name: hash and length in one word, then the
 * name) wherever CO-RE finds them so: one read per path component instead of
 * three.  Each helper call costs about as much as the rest of a step. */
struct cb_dentry_link {
	__u64 parent;
	__u64 hash_len; /* x86-64: hash in the low half, length in the high */
	__u64 name;
};

/* One step of walk(): a path component, or a mount crossing.  Returns 1 to
 * stop. */
static long walk_step(__u64 i, void *arg)
{
	struct walk_state *w = arg;
	struct cb_scratch *s = w->s;
	struct vfsmount *vmnt = (void *)w->vmnt;
	struct dentry *d = (void *)w->d;
	struct mount *mnt = (void *)w->mnt;
	struct dentry *root, *parent;
	__u64 pos = w->pos, len, name;

	if (!s) {
		w->status = 2;
		return 1;
	}
	if (!w->root)
		w->root = (__u64)BPF_CORE_READ(vmnt, mnt_root);
	root = (void *)w->root;
	if (bpf_core_field_offset(struct dentry, d_name) ==
	    bpf_core_field_offset(struct dentry, d_parent) + sizeof(__u64)) {
		struct cb_dentry_link l;

		if (bpf_probe_read_kernel(&l, sizeof(l),
					  (void *)d +
						  bpf_core_field_offset(struct dentry, d_parent))) {
			w->status = 2;
			return 1;
		}
		parent = (void *)l.parent;
		len = l.hash_len >> 32;
		name = l.name;
	} else {
		parent = BPF_CORE_READ(d, d_parent);
		len = BPF_CORE_READ(d, d_name.len);
		name = (__u64)BPF_CORE_READ(d, d_name.name);
	}
	if (d == root || d == parent) {
		struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

		if (d != root) {
			w->status = 2;
			return 1;
		}
		if (up == mnt) {
			w->status = 0;
			return 1;
		}
		w->d = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = (__u64)up;
		w->vmnt = (__u64)up + bpf_core_field_offset(struct mount, mnt);
		w->root = 0;
		return 0;
	}
	if (len >= pos || pos > CB_PATH_MAX)
		return 1;
	pos = (pos - len - 1) & (CB_PATH_MAX - 1);
	len &= CB_PATH_MAX - 1;
	bpf_probe_read_kernel(s->walk + pos + 1, len, (void *)name);
	s->walk[pos] = '/';
	w->pos = pos;
	w->d = (__u64)parent;
	return 0;
}

/* Writes the absolute path of (vmnt, d) backwards into s->walk so that it
 * ends at s->walk[CB_PATH_MAX], crossing mounts up to the mount namespace's
 * root (a chroot is not a stop: records name files as the namespace sees
 * them).  Returns the start offset << 2 | status: 0 complete, 1 cut short, 2
 * not reachable from the root (a pipe, a socket, an anonymous inode).
 *
 * The steps run under bpf_loop(), and this is a global function: the verifier
 * checks one step once per program, where an unrolled loop cost it 14,000
 * instructions and most of the tracer's start.  Kernel pointers travel as
 * integers for that reason. */
__noinline __u64 walk(struct cb_scratch *s, __u64 vmnt_addr, __u64 d_addr)
{
	struct walk_state w = {
		.s = s,
		.vmnt = vmnt_addr,
		.d = d_addr,
		.mnt = vmnt_addr - bpf_core_field_offset(struct mount, mnt),
		.root = 0,
		.pos = CB_PATH_MAX,
		.status = 1,
	};

	if (!s)
		return (__u64)CB_PATH_MAX << 2 | 2;
	bpf_loop(CB_WALK_STEPS, walk_step, &w, 0);
	return w.pos << 2 | w.status;
}

/* The helpers below are global functions too, for the same reason: the
 * verifier then checks each once, instead of once per call site and per path
 * through the caller, which made the exit program the bulk of the tracer's
 * start. */

/* Appends the absolute path of (vmnt, d) at s->rec[off]. */
__noinline __u64 copy_walk(struct cb_scratch *s, __u64 off, __u64 vmnt, __u64 d)
{
	__u64 r, pos, len, status;

	if (!s || off > CB_OFF_LIMIT)
		return R_FAULT;
	if (!vmnt || !d)
		return R_FAULT;
	r = walk(s, vmnt, d);
	status = r & 3;
	pos = r >> 2;
	if (pos >= CB_PATH_MAX) {
		s->rec[off] = '/';
		len = 1;
	} else {
		pos &= CB_PATH_MAX - 1;
		len = CB_PATH_MAX - pos;
		bpf_probe_read_kernel(s->rec + off, len, s->walk + pos);
	}
	return len | (status == 1 ? R_TRUNC : 0) | (status == 2 ? R_FAULT : 0);
}

__noinline __u64 copy_cwd(struct cb_scratch *s, __u64 off)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct fs_struct *fs = BPF_CORE_READ(task, fs);

	return copy_walk(s, off, (__u64)BPF_CORE_READ(fs, pwd.mnt),
			 (__u64)BPF_CORE_READ(fs, pwd.dentry));
}

__noinline __u64 copy_fd_path(struct cb_scratch *s, __u64 off, __s64 fd)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct file *f = fd_file(task, fd);

	if (!f)
		return R_FAULT;
	return copy_walk(s, off, (__u64)BPF_CORE_READ(f, f_path.mnt),
			 (__u64)BPF_CORE_READ(f, f_path.dentry));
}

__noinline __u64 copy_user_str(struct cb_scratch *s, __u64 off, __u64 p)
{
	long n;

	if (!s || off > CB_OFF_LIMIT)
		return R_FAULT;
	n = bpf_probe_read_user_str(s->rec + off, CB_PATH_MAX, (const void *)p);
	if (n <= 0)
		return R_FAULT;
	return (n - 1) | (n >= CB_PATH_MAX ? R_TRUNC : 0);
}

__noinline __u64 copy_kernel_str(struct cb_scratch *s, __u64 off, __u64 p)
{
	long n;

	if (!s || off > CB_OFF_LIMIT)
		return R_FAULT;
	n = bpf_probe_read_kernel_str(s->rec + off, CB_PATH_MAX, (const void *)p);
	if (n <= 0)
		return R_FAULT;
	return (n - 1) | (n >= CB_PATH_MAX ? R_TRUNC : 0);
}

/* The length of a copy result, bounded where the verifier can see it. */
static __always_inline __u64 res_len(__u64 res)
{
	__u64 len = R_LEN(res);

	if (len > CB_PATH_MAX)
		len = CB_PATH_MAX;
	return len;
}

static __always_inline void set_blob(struct cb_rec_syscall *r, __u32 b, __u64 res)
{
	if (b >= CB_SYS_NBLOBS)
		return;
	r->len[b] = res_len(res);
	if (res & R_TRUNC)
		r->hdr.flags |= CB_F_TRUNC(b);
	if (res & R_FAULT)
		r->hdr.flags |= CB_F_FAULT(b);
}

#define CB_NO_BASE (1LL << 40)

/* Appends path blob b (from user memory) and, unless it is absolute, its base
 * directory as blob b + 1. `at`: the dirfd, AT_FDCWD, or CB_NO_BASE. */
__noinline __u64 append_path(struct cb_scratch *s, __u64 off, __u32 b, __u64 p, __s64 at)
{
	struct cb_rec_syscall *r;
	__u64 res, len;
	bool absolute;

	if (!s || b > CB_SYS_PATH2 || off > CB_OFF_LIMIT)
		return off;
	/* b and b + 1 name blobs: bounded where the verifier sees it. */
	barrier_var(b);
	b &= 3;
	r = (void *)s->rec;
	res = copy_user_str(s, off, p);
	len = res_len(res);
	set_blob(r, b, res);
	absolute = len && s->rec[off] == '/';
	off += len;
	if (absolute || at == CB_NO_BASE || (res & R_FAULT))
		return off;
	if (at == AT_FDCWD)
		res = copy_cwd(s, off);
	else
		res = copy_fd_path(s, off, at);
	set_blob(r, b + 1, res);
	return off + res_len(res);
}

static __always_inline __s64 dirfd_of(struct cb_enter *e, __s8 path, __s8 dirfd)
{
	if (path < 0)
		return CB_FD_NONE;
	if (dirfd == CB_AT_CWD)
		return AT_FDCWD;
	if (dirfd < 0)
		return CB_NO_BASE;
	return (int)e->args[dirfd & 7];
}

/* The dirfd as the record shows it: CB_FD_NONE when the path has none. */
static __always_inline __s32 dirfd_field(struct cb_enter *e, __s8 path, __s8 dirfd)
{
	__s64 at = dirfd_of(e, path, dirfd);

	return at == CB_NO_BASE ? CB_FD_NONE : (__s32)at;
}

static __always_inline void socket_type(struct cb_rec_syscall *r, __s64 fd)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct file *f = fd_file(task, fd);
	struct socket *sock;

	if (!f || file_magic(f) != SOCKFS_MAGIC)
		return;
	sock = BPF_CORE_READ(f, private_data);
	r->sock_type = BPF_CORE_READ(sock, type);
	r->sock_proto = BPF_CORE_READ(sock, sk, sk_protocol);
}

static __always_inline void pidfd_target(struct cb_rec_syscall *r, __s64 fd, struct cb_slot *cfg)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct file *f = fd_file(task, fd);
	unsigned long magic;
	struct pid *pid;
	struct upid *up;

	if (!f)
		return;
	/* pidfs (6.9+) keeps the pid in the inode, older pidfds in the file;
	 * a /proc/<pid> directory fd is left unresolved. */
	magic = file_magic(f);
	if (magic == PID_FS_MAGIC)
		pid = BPF_CORE_READ(f, f_inode, i_private);
	else if (magic == ANON_INODE_FS_MAGIC)
		pid = BPF_CORE_READ(f, private_data);
	else
		return;
	if (!pid)
		return;
	up = (void *)pid + bpf_core_field_offset(struct pid, numbers);
	r->target_gpid = BPF_CORE_READ(up, nr);
	r->target_pid = sup_nr(pid, r->target_gpid, cfg->pidns_level, cfg->pidns_ino);
}

/* The descriptor of a syscall of the native ABI that the tracer follows, or
 * NULL.  An x32 number is out of range; an ia32 one (int 0x80 from a 64-bit
 * process) is told apart by the task's TS_COMPAT, because its numbers mean
 * other syscalls. */
static __always_inline struct cb_sysdesc *traced_desc(long id)
{
	struct cb_sysdesc *d;
	__u32 nr;

	if ((__u64)id >= CB_NR_MAX)
		return NULL;
	nr = id;
	d = bpf_map_lookup_elem(&sysdesc, &nr);
	if (!d || !d->traced)
		return NULL;
	return d;
}

/* include/linux/fs.h; not in BTF (a #define), and 1 << 20 since 4.19. */
#define CB_FMODE_CREATED (1u << 20)
#define CB_O_CREAT	 0100
#define CB_TS_COMPAT	 0x0002 /* arch/x86/include/asm/thread_info.h */

static __always_inline bool compat_syscall(struct task_struct *task)
{
	return BPF_CORE_READ(task, thread_info.status) & CB_TS_COMPAT;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(cb_sys_enter, struct pt_regs *regs, long id)
{
	struct pt_regs uregs;
	struct task_struct *task;
	struct cb_sysdesc *d;
	struct cb_enter *e;
	__u32 tgid, *track;
	__u64 len;

	d = traced_desc(id);
	if (!d)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	track = bpf_map_lookup_elem(&tracked, &tgid);
	if (!track)
		return 0;
	task = bpf_get_current_task_btf();
	if (compat_syscall(task))
		return 0;
	{
		struct cb_slot *cfg = live_slot(*track);

		if (!cfg || !may_see(cfg, task))
			return 0;
	}
	e = bpf_task_storage_get(&enters, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!e) {
		__u32 slot = CB_TRACK_SLOT(*track);

		count_lost(slot, get_counters(slot), true);
		return 0;
	}
	e->nr = id;
	e->track = *track;
	/* The syscall ABI's argument registers (pt_regs is the arch's ABI, not
	 * a layout CO-RE needs to place). */
	if (bpf_probe_read_kernel(&uregs, sizeof(uregs), regs))
		return 0;
	e->args[0] = uregs.di;
	e->args[1] = uregs.si;
	e->args[2] = uregs.dx;
	e->args[3] = uregs.r10;
	e->args[4] = uregs.r8;
	e->args[5] = uregs.r9;
	e->addrlen = 0;
	/* The sockaddr is copied now: the caller may reuse its buffer as soon
	 * as connect() returns, and a non-blocking connect returns early. */
	if (d->addr >= 0 && d->addrlen >= 0) {
		len = e->args[d->addrlen & 7];
		if (len > CB_ADDR_MAX)
			len = CB_ADDR_MAX;
		if (!bpf_probe_read_user(e->addr, len, (void *)e->args[d->addr & 7]))
			e->addrlen = len;
	}
	if (d->how >= 0) {
		struct open_how how = {};

		if (!bpf_probe_read_user(&how, sizeof(how), (void *)e->args[d->how & 7])) {
			e->args[2] = how.flags;
			e->args[3] = how.mode;
			e->args[4] = how.resolve;
		}
	}
	e->pending = 1;
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(cb_sys_exit, struct pt_regs *regs, long ret)
{
	long orig_ax = -1;
	struct cb_rec_syscall *r;
	struct cb_sysdesc *d;
	struct cb_scratch *s;
	struct cb_slot *cfg;
	struct cb_enter *e;
	__u32 zero = 0, slot;
	__u64 off, res, id;
	__s32 nr;
	int i;

	/* The host's syscalls stop at the first test. */
	bpf_probe_read_kernel(&orig_ax, sizeof(orig_ax), &regs->orig_ax);
	d = traced_desc(orig_ax);
	if (!d)
		return 0;
	e = bpf_task_storage_get(&enters, bpf_get_current_task_btf(), NULL, 0);
	if (!e || !e->pending)
		return 0;
	e->pending = 0;
	nr = e->nr;
	if (nr != orig_ax)
		return 0;
	cfg = live_slot(e->track);
	if (!cfg)
		return 0;
	slot = CB_TRACK_SLOT(e->track);
	id = bpf_get_current_pid_tgid();
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;

	r = (void *)s->rec;
	fill_hdr(&r->hdr, CB_REC_SYSCALL, 0, (void *)bpf_get_current_task(), id, cfg);
	r->ret = ret;
	for (i = 0; i < CB_NARGS; i++)
		r->args[i] = e->args[i];
	r->nr = nr;
	r->dirfd1 = dirfd_field(e, d->path1, d->dirfd1);
	r->dirfd2 = dirfd_field(e, d->path2, d->dirfd2);
	r->fd = CB_FD_NONE;
	r->target_pid = 0;
	r->target_gpid = 0;
	r->sock_type = 0;
	r->sock_proto = 0;
	for (i = 0; i < CB_SYS_NBLOBS; i++)
		r->len[i] = 0;
	off = sizeof(*r);

	if (d->path1 >= 0) {
		off = append_path(s, off, CB_SYS_PATH1, e->args[d->path1 & 7],
				  dirfd_of(e, d->path1, d->dirfd1));
	} else if (d->fd >= 0) {
		r->fd = e->args[d->fd & 7];
		res = copy_fd_path(s, off, r->fd);
		set_blob(r, CB_SYS_BASE1, res);
		off += res_len(res);
	}
	if (d->path2 >= 0)
		off = append_path(s, off, CB_SYS_PATH2, e->args[d->path2 & 7],
				  dirfd_of(e, d->path2, d->dirfd2));
	if (ret >= 0 && (d->oflags == CB_OPEN_CREAT ||
			 (d->oflags >= 0 && (e->args[d->oflags & 7] & CB_O_CREAT)))) {
		struct file *f = fd_file((void *)bpf_get_current_task(), ret);

		if (f && (BPF_CORE_READ(f, f_mode) & CB_FMODE_CREATED))
			r->hdr.flags |= CB_F_CREATED;
	}
	if (d->sock >= 0) {
		r->fd = e->args[d->sock & 7];
		socket_type(r, r->fd);
	}
	if (d->pidfd >= 0) {
		r->fd = e->args[d->pidfd & 7];
		pidfd_target(r, r->fd, cfg);
	}
	if (d->addr >= 0 && e->addrlen >= 2) {
		__u64 len = e->addrlen;

		/* A relative unix socket path is relative to the cwd. */
		if (e->addr[0] == AF_UNIX && e->addr[1] == 0 && len > 2 && e->addr[2] != 0 &&
		    e->addr[2] != '/' && d->path1 < 0) {
			res = copy_cwd(s, off);
			set_blob(r, CB_SYS_BASE1, res);
			off += res_len(res);
		}
		if (off <= CB_OFF_LIMIT + CB_PATH_MAX && len <= CB_ADDR_MAX) {
			bpf_probe_read_kernel(s->rec + off, len, e->addr);
			r->len[CB_SYS_ADDR] = len;
			off += len;
		}
	}
	if (off > sizeof(s->rec))
		return 0;
	r->hdr.size = off;
	emit(slot, s->rec, off);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(cb_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	struct task_struct *rp;
	struct cb_rec_fork *r;
	struct cb_slot *cfg;
	__u32 track, slot;

	if (ptgid == ctgid) /* a new thread: its tgid is tracked already */
		return 0;
	track = track_of(parent, ptgid, true);
	if (!track)
		return 0;
	cfg = live_slot(track);
	if (!cfg)
		return 0;
	slot = CB_TRACK_SLOT(track);
	if (bpf_map_update_elem(&tracked, &ctgid, &track, BPF_ANY)) {
		/* A child we cannot follow: everything it does is lost. */
		count_lost(slot, get_counters(slot), false);
	}
	r = reserve(slot, sizeof(*r));
	if (!r)
		return 0;
	fill_hdr(&r->hdr, CB_REC_FORK, sizeof(*r), parent, bpf_get_current_pid_tgid(), cfg);
	r->child_gpid = ctgid;
	r->child_pid =
		sup_nr(BPF_CORE_READ(child, thread_pid), ctgid, cfg->pidns_level, cfg->pidns_ino);
	rp = BPF_CORE_READ(child, real_parent);
	r->gppid = BPF_CORE_READ(rp, tgid);
	r->ppid = sup_nr(BPF_CORE_READ(rp, group_leader, thread_pid), r->gppid, cfg->pidns_level,
			 cfg->pidns_ino);
	submit(slot, r, sizeof(*r));
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(cb_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0;
	__u64 off, res, len;
	unsigned long start, end;
	struct cb_rec_exec *r;
	struct cb_scratch *s;
	struct mm_struct *mm;
	struct cb_slot *cfg;
	__u32 track;
	bool absolute;

	track = track_of(task, tgid, true);
	if (!track)
		return 0;
	cfg = live_slot(track);
	if (!cfg)
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	r = (void *)s->rec;
	fill_hdr(&r->hdr, CB_REC_EXEC, 0, task, id, cfg);
	r->old_gtid = old_pid;
	r->len[CB_EXEC_FILE] = 0;
	r->len[CB_EXEC_BASE] = 0;
	r->len[CB_EXEC_ARGV] = 0;
	off = sizeof(*r);

	res = copy_kernel_str(s, off, (__u64)BPF_CORE_READ(bprm, filename));
	len = res_len(res);
	r->len[CB_EXEC_FILE] = len;
	if (res & R_TRUNC)
		r->hdr.flags |= CB_F_TRUNC(CB_EXEC_FILE);
	if (res & R_FAULT)
		r->hdr.flags |= CB_F_FAULT(CB_EXEC_FILE);
	absolute = len && s->rec[off] == '/';
	off += len;
	if (!absolute) {
		res = copy_cwd(s, off);
		len = res_len(res);
		r->len[CB_EXEC_BASE] = len;
		if (res & R_TRUNC)
			r->hdr.flags |= CB_F_TRUNC(CB_EXEC_BASE);
		if (res & R_FAULT)
			r->hdr.flags |= CB_F_FAULT(CB_EXEC_BASE);
		off += len;
	}

	/* argv as the new image got it, before any of its code ran. */
	mm = BPF_CORE_READ(task, mm);
	start = BPF_CORE_READ(mm, arg_start);
	end = BPF_CORE_READ(mm, arg_end);
	len = end > start ? end - start : 0;
	if (len > CB_ARGV_MAX) {
		len = CB_ARGV_MAX;
		r->hdr.flags |= CB_F_TRUNC(CB_EXEC_ARGV);
	}
	barrier_var(len);
	if (off <= CB_OFF_LIMIT && len) {
		if (bpf_probe_read_user(s->rec + off, len, (void *)start)) {
			r->hdr.flags |= CB_F_FAULT(CB_EXEC_ARGV);
		} else {
			r->len[CB_EXEC_ARGV] = len;
			off += len;
		}
	}
	if (off > sizeof(s->rec))
		return 0;
	r->hdr.size = off;
	emit(CB_TRACK_SLOT(track), s->rec, off);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(cb_exit, struct task_struct *task)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, track;
	struct cb_rec_exit *r;
	struct cb_slot *cfg;

	track = track_of(task, tgid, false);
	if (!track)
		return 0;
	/* do_exit() has already counted this thread out of signal->live. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	bpf_map_delete_elem(&tracked, &tgid);
	cfg = live_slot(track);
	if (!cfg)
		return 0;
	r = reserve(CB_TRACK_SLOT(track), sizeof(*r));
	if (!r)
		return 0;
	fill_hdr(&r->hdr, CB_REC_EXIT, sizeof(*r), task, id, cfg);
	r->status = BPF_CORE_READ(task, exit_code);
	r->pad = 0;
	submit(CB_TRACK_SLOT(track), r, sizeof(*r));
	return 0;
}

SEC("raw_tp/io_uring_submit_req")
int BPF_PROG(cb_io_uring, struct io_kiocb *req)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct cb_rec_io_uring *r;
	struct cb_slot *cfg;
	__u32 track;

	/* An SQPOLL thread belongs to the submitting process's thread group. */
	track = track_of(NULL, id >> 32, false);
	if (!track)
		return 0;
	cfg = live_slot(track);
	if (!cfg || !may_see(cfg, (void *)bpf_get_current_task()))
		return 0;
	r = reserve(CB_TRACK_SLOT(track), sizeof(*r));
	if (!r)
		return 0;
	fill_hdr(&r->hdr, CB_REC_IO_URING, sizeof(*r), (void *)bpf_get_current_task(), id, cfg);
	r->opcode = BPF_CORE_READ(req, opcode);
	r->user_data = BPF_CORE_READ(req, cqe.user_data);
	r->req_flags = BPF_CORE_READ_BITFIELD_PROBED(req, flags);
	__builtin_memset(r->pad, 0, sizeof(r->pad));
	submit(CB_TRACK_SLOT(track), r, sizeof(*r));
	return 0;
}
