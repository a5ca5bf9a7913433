// The kernel types the tracer's CO-RE relocations are placed against, cut
// down from vmlinux's BTF.
//
// libbpf finds the candidates of each relocated type by a scan of every type
// of the BTF it is given: vmlinux has about 126,000, and reading them (5 MB
// from sysfs) plus one scan per struct the programs touch was two thirds of
// the eBPF tracer's start.  The cut-down BTF keeps the structs, unions, enums
// and typedefs the object names, with the members of each and, by value, the
// types those members embed; every pointer becomes `void *`, which is all a
// field relocation compares of a pointer member.  It is made once per boot
// and per build of the programs, kept under /run/cottonbox, and passed to
// libbpf as the object's custom BTF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/result.h"

struct btf;

namespace cb {

// The raw bytes of the cut-down BTF: every named struct, union, enum and
// typedef of `local` (the object's own BTF) that `kernel` has by the same
// name, with what it embeds.  Fails if nothing of `local` is found.
Result<std::string> minimal_core_btf(const btf* kernel, const btf* local);

// A file holding the cut-down BTF for the BPF object `elf` on the running
// kernel: DIR/core-<key>.btf, the key naming the object, the kernel and the
// boot.  Reused if it is there (and owned by us, not writable by others),
// else made from /sys/kernel/btf/vmlinux; `made` says which.  The result is
// the path to give libbpf; an Error means "use the kernel's whole BTF".
Result<std::string> core_btf_file(const void* elf, size_t elf_size, const std::string& dir, bool* made = nullptr);

// The directory those files live in.  Sessions hide and protect it (it
// serves later sessions, so none may rewrite it).
inline std::string core_btf_dir() { return "/run/cottonbox"; }

}  // namespace cb
