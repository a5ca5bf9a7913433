/* cb_wire.h: the records cottonbox's BPF programs hand to user space.
 *
 * Plain C, included by both sides: the BPF programs (after vmlinux.h) and the
 * tracer's decoder (trace/ebpf_decode.cpp).  Only fixed-size fields; a record
 * is one of the structs below, optionally followed by a tail of variable-length
 * blobs whose byte counts are in the struct's len[] array, in enum order, with
 * no terminators and no padding between them.  The decoder checks every length
 * against the record's size, so a garbled record is rejected, never over-read.
 *
 * Changing a layout means changing CB_WIRE_VERSION: the skeleton and the
 * decoder are built together, so they never disagree at run time, but a
 * recorded dump of raw records would.
 */
#ifndef CB_WIRE_H
#define CB_WIRE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define CB_WIRE_VERSION 1

#define CB_COMM_LEN 16
#define CB_PATH_MAX 4096 /* a path or a resolved base directory, bytes */
#define CB_ARGV_MAX 4096 /* argv blob at exec, bytes */
#define CB_ADDR_MAX 128	 /* sizeof(struct sockaddr_storage) */
#define CB_NARGS    6
#define CB_NR_MAX   512 /* syscall numbers the descriptor map covers */

enum cb_rec_kind {
	CB_REC_FORK = 1,
	CB_REC_EXEC = 2,
	CB_REC_EXIT = 3,
	CB_REC_SYSCALL = 4,
	CB_REC_IO_URING = 5,
};

/* Per-blob status bits in cb_rec_hdr.flags: blob i owns bits 2i and 2i+1. */
#define CB_F_TRUNC(i) (1u << (2 * (i)))	    /* cut at its bound (string, argv, or walk depth) */
#define CB_F_FAULT(i) (1u << (2 * (i) + 1)) /* could not be read or resolved */
/* A syscall record of an open that made its file (the kernel's FMODE_CREATED):
 * with O_CREAT alone an open may as well have opened an existing file. */
#define CB_F_CREATED (1u << 31)

struct cb_rec_hdr {
	__u32 size;	  /* whole record, tail included */
	__u16 kind;	  /* enum cb_rec_kind */
	__u16 version;	  /* CB_WIRE_VERSION */
	__u32 flags;	  /* CB_F_* of the record's blobs */
	__u32 uid;	  /* real uid of the acting thread */
	__u64 ts_ns;	  /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__s32 pid, tid;	  /* in the supervisor's pid namespace; 0 if not visible there */
	__s32 gpid, gtid; /* in the initial pid namespace */
	char comm[CB_COMM_LEN];
};

/* A new process (not a thread).  hdr: the forking thread. */
struct cb_rec_fork {
	struct cb_rec_hdr hdr;
	__s32 child_pid, child_gpid;
	__s32 ppid, gppid; /* the child's parent: the forker, or its parent after CLONE_PARENT */
};

/* A successful exec, seen at sched_process_exec (before the new image runs).
 * Tail: filename as the kernel got it, the cwd when that filename is relative,
 * and argv as NUL-separated strings read from the new image's stack. */
enum cb_exec_blob { CB_EXEC_FILE, CB_EXEC_BASE, CB_EXEC_ARGV, CB_EXEC_NBLOBS };

struct cb_rec_exec {
	struct cb_rec_hdr hdr;
	__s32 old_gtid; /* the thread that called exec (a non-leader takes over the tgid) */
	__u16 len[CB_EXEC_NBLOBS];
	__u16 pad;
};

/* The last thread of a process has exited. */
struct cb_rec_exit {
	struct cb_rec_hdr hdr;
	__s32 status; /* wait(2) status: code << 8, or the signal (| 0x80 with a core) */
	__u32 pad;
};

/* One traced syscall, emitted at sys_exit with its result.
 * Tail: the first path argument and the absolute directory it is relative to
 * (base1, present only when path1 is relative or the object is an fd), the
 * same for a second path, and the sockaddr of connect/bind. */
enum cb_sys_blob {
	CB_SYS_PATH1,
	CB_SYS_BASE1,
	CB_SYS_PATH2,
	CB_SYS_BASE2,
	CB_SYS_ADDR,
	CB_SYS_NBLOBS
};

#define CB_FD_NONE (-1000) /* a dirfd/fd field the syscall does not have */

struct cb_rec_syscall {
	struct cb_rec_hdr hdr;
	__s64 ret;	      /* the syscall's result: >= 0, or -errno */
	__u64 args[CB_NARGS]; /* as passed; openat2: [2], [3], [4] = how.flags, how.mode,
				 how.resolve */
	__s32 nr;	      /* x86_64 syscall number */
	__s32 dirfd1;	      /* dirfd of path1 as passed (AT_FDCWD = -100), or CB_FD_NONE */
	__s32 dirfd2;
	__s32 fd;	  /* the object fd (ftruncate, fchmod, ...) or socket (connect, bind) */
	__s32 target_pid; /* pidfd_send_signal: the target in the supervisor's pidns (0: unknown) */
	__s32 target_gpid;
	__u16 sock_type;  /* connect/bind: SOCK_STREAM, SOCK_DGRAM, ... (0: unknown) */
	__u16 sock_proto; /* connect/bind: IPPROTO_TCP, ... */
	__u16 len[CB_SYS_NBLOBS];
	__u16 pad[3];
};

/* An io_uring request about to be issued (io_uring:io_uring_submit_req). */
struct cb_rec_io_uring {
	struct cb_rec_hdr hdr;
	__u64 user_data;
	__u64 req_flags;
	__u8 opcode; /* IORING_OP_* */
	__u8 pad[7];
};

/* How the BPF side reads one syscall's arguments: user space fills the
 * descriptor map (indexed by syscall number) from the same table the decoder
 * uses, so the kernel side carries no syscall knowledge of its own. */
#define CB_ARG_NONE   (-1) /* path/fd/addr field: the syscall has none */
#define CB_AT_CWD     (-1) /* dirfd field: a relative path is relative to the cwd */
#define CB_AT_RAW     (-2) /* dirfd field: the string is not resolved (a symlink's target) */
#define CB_OPEN_CREAT (-2) /* oflags field: the open always has O_CREAT */

struct cb_sysdesc {
	__u8 traced;
	__s8 path1;  /* arg index of the first path, or CB_ARG_NONE */
	__s8 dirfd1; /* arg index of its dirfd, CB_AT_CWD or CB_AT_RAW */
	__s8 path2;
	__s8 dirfd2;
	__s8 fd;      /* arg index of an fd that is the object: its path fills base1 */
	__s8 sock;    /* arg index of a socket fd: its type is recorded */
	__s8 addr;    /* arg index of a sockaddr, copied at sys_enter */
	__s8 addrlen; /* arg index of its length */
	__s8 how;     /* openat2: arg index of struct open_how */
	__s8 pidfd;   /* pidfd_send_signal: arg index of the pidfd */
	__s8 oflags;  /* an open: arg index of its flags; CB_OPEN_CREAT: creat(2) */
	__u8 pad[4];
};

/* Sessions one load of the programs serves at once: each has a slot, with a
 * ring buffer, counters and pid namespace of its own (a private tracer uses
 * slot 0 alone).  `tracked` maps a tgid to CB_TRACK(slot, gen); an entry
 * whose generation is not its slot's current one belongs to a session that
 * has ended, and is ignored, so that a slot reused at once never receives
 * what a straggler of the previous session does. */
#define CB_SLOTS	    256
#define CB_TRACK(slot, gen) ((__u32)(gen) << 16 | (__u32)(slot))
#define CB_TRACK_SLOT(v)    ((v)&0xffff)
#define CB_TRACK_GEN(v)	    ((v) >> 16)

struct cb_slot {
	__u32 gen;	   /* 0: free; else the live session's generation (< 1 << 16) */
	__u32 pidns_level; /* the session supervisor's pid namespace: record pids are */
	__u32 pidns_ino;   /* numbers of that namespace (level 0: the initial one) */
	__u32 owner_uid;   /* syscalls only of tasks of this effective uid; CB_ANY_UID: all */
};

/* A plain user's session is not shown the syscalls of a process of it that
 * runs as another uid (its forks, execs and exits are).  Such a session runs
 * with no_new_privs (its seccomp filter needs it), so setuid programs gain
 * nothing there; this holds should anything else change a uid. */
#define CB_ANY_UID 0xffffffffu

/* Per-CPU counters of one slot; user space sums them. */
struct cb_counters {
	__u64 lost;	     /* records the ring buffer had no room for */
	__u64 records;	     /* records submitted */
	__u64 enter_dropped; /* sys_enter arguments not saved (no memory): that syscall goes
				unrecorded */
	__u64 unwoken_bytes; /* internal: bytes submitted since the reader was last woken */
};

/* What a slot's reader learns of its losses without bpf(): one entry of a
 * mappable array (BPF_F_MMAPABLE) of its own, counted atomically. */
struct cb_lost {
	__u64 lost;	     /* as cb_counters.lost */
	__u64 enter_dropped; /* as cb_counters.enter_dropped */
};

#endif /* CB_WIRE_H */
