#include "trace/core_btf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/fd.h"
#include "base/paths.h"

namespace cb {
namespace {

constexpr const char* kKernelBtf = "/sys/kernel/btf/vmlinux";

struct BtfDeleter {
  void operator()(btf* b) const { btf__free(b); }
};
using BtfPtr = std::unique_ptr<btf, BtfDeleter>;

// libbpf's "essential" name: a local `task_struct___v2` stands for the
// kernel's `task_struct`.
std::string_view essential(std::string_view name) {
  auto cut = name.find("___");
  return cut == std::string_view::npos ? name : name.substr(0, cut);
}

bool is_named_root(const btf_type* t) {
  switch (btf_kind(t)) {
    case BTF_KIND_STRUCT:
    case BTF_KIND_UNION:
    case BTF_KIND_ENUM:
    case BTF_KIND_ENUM64:
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_FWD: return true;
    default: return false;
  }
}

class Builder {
 public:
  explicit Builder(const btf* k) : k_(k) {}

  // The closure of `id` through everything but pointers: a pointer is
  // `void *` in the result, so what it points to is not needed.
  void include(uint32_t root) {
    std::vector<uint32_t> work{root};
    while (!work.empty()) {
      uint32_t id = work.back();
      work.pop_back();
      if (id == 0 || newid_.count(id)) continue;
      const btf_type* t = btf__type_by_id(k_, id);
      if (!t) continue;
      if (btf_is_ptr(t)) continue;  // mapped to the shared void *
      newid_[id] = 0;               // numbered in emission order below
      order_.push_back(id);
      switch (btf_kind(t)) {
        case BTF_KIND_ARRAY: {
          const struct btf_array* a = btf_array(t);
          work.push_back(a->type);
          work.push_back(a->index_type);
          break;
        }
        case BTF_KIND_STRUCT:
        case BTF_KIND_UNION: {
          const btf_member* m = btf_members(t);
          for (uint16_t i = 0; i < btf_vlen(t); ++i) work.push_back(m[i].type);
          break;
        }
        case BTF_KIND_FUNC_PROTO: {
          work.push_back(t->type);
          const btf_param* p = btf_params(t);
          for (uint16_t i = 0; i < btf_vlen(t); ++i) work.push_back(p[i].type);
          break;
        }
        case BTF_KIND_TYPEDEF:
        case BTF_KIND_VOLATILE:
        case BTF_KIND_CONST:
        case BTF_KIND_RESTRICT:
        case BTF_KIND_TYPE_TAG: work.push_back(t->type); break;
        default: break;
      }
    }
  }

  bool empty() const { return order_.empty(); }

  Result<std::string> emit() {
    BtfPtr out(btf__new_empty());
    if (!out) return Error::from_errno("btf__new_empty");
    btf* o = out.get();
    int void_ptr = btf__add_ptr(o, 0);
    if (void_ptr != 1) return Error{EINVAL, "cannot start the cut-down BTF"};
    // Ids are known before anything is added: members may name types that
    // come later, which BTF allows.
    uint32_t next = 2;
    for (uint32_t id : order_) newid_[id] = next++;
    auto map = [&](uint32_t id) -> int {
      if (id == 0) return 0;
      const btf_type* t = btf__type_by_id(k_, id);
      if (t && btf_is_ptr(t)) return void_ptr;
      auto it = newid_.find(id);
      return it == newid_.end() ? 0 : static_cast<int>(it->second);
    };
    for (uint32_t id : order_) {
      const btf_type* t = btf__type_by_id(k_, id);
      const char* name = btf__name_by_offset(k_, t->name_off);
      if (!name) name = "";
      int got = -1;
      switch (btf_kind(t)) {
        case BTF_KIND_INT: got = btf__add_int(o, name, t->size, btf_int_encoding(t)); break;
        case BTF_KIND_FLOAT: got = btf__add_float(o, name, t->size); break;
        case BTF_KIND_ARRAY: {
          const struct btf_array* a = btf_array(t);
          got = btf__add_array(o, map(a->index_type), map(a->type), a->nelems);
          break;
        }
        case BTF_KIND_STRUCT:
        case BTF_KIND_UNION: {
          got = btf_is_struct(t) ? btf__add_struct(o, name, t->size) : btf__add_union(o, name, t->size);
          const btf_member* m = btf_members(t);
          for (uint16_t i = 0; got > 0 && i < btf_vlen(t); ++i) {
            const char* mn = btf__name_by_offset(k_, m[i].name_off);
            if (btf__add_field(o, mn ? mn : "", map(m[i].type), btf_member_bit_offset(t, i),
                               btf_member_bitfield_size(t, i)) != 0)
              got = -1;
          }
          break;
        }
        case BTF_KIND_ENUM: {
          got = btf__add_enum(o, name, t->size);
          const struct btf_enum* e = btf_enum(t);
          for (uint16_t i = 0; got > 0 && i < btf_vlen(t); ++i) {
            const char* en = btf__name_by_offset(k_, e[i].name_off);
            if (btf__add_enum_value(o, en ? en : "", e[i].val) != 0) got = -1;
          }
          break;
        }
        case BTF_KIND_ENUM64: {
          got = btf__add_enum64(o, name, t->size, btf_kflag(t));
          const struct btf_enum64* e = btf_enum64(t);
          for (uint16_t i = 0; got > 0 && i < btf_vlen(t); ++i) {
            const char* en = btf__name_by_offset(k_, e[i].name_off);
            if (btf__add_enum64_value(o, en ? en : "", btf_enum64_value(&e[i])) != 0) got = -1;
          }
          break;
        }
        case BTF_KIND_FWD: got = btf__add_fwd(o, name, btf_kflag(t) ? BTF_FWD_UNION : BTF_FWD_STRUCT); break;
        case BTF_KIND_TYPEDEF: got = btf__add_typedef(o, name, map(t->type)); break;
        case BTF_KIND_VOLATILE: got = btf__add_volatile(o, map(t->type)); break;
        case BTF_KIND_CONST: got = btf__add_const(o, map(t->type)); break;
        case BTF_KIND_RESTRICT: got = btf__add_restrict(o, map(t->type)); break;
        case BTF_KIND_TYPE_TAG: got = btf__add_type_tag(o, name, map(t->type)); break;
        case BTF_KIND_FUNC_PROTO: {
          got = btf__add_func_proto(o, map(t->type));
          const btf_param* p = btf_params(t);
          for (uint16_t i = 0; got > 0 && i < btf_vlen(t); ++i) {
            const char* pn = btf__name_by_offset(k_, p[i].name_off);
            if (btf__add_func_param(o, pn ? pn : "", map(p[i].type)) != 0) got = -1;
          }
          break;
        }
        default:
          // VAR, DATASEC, FUNC, DECL_TAG: nothing embeds them.  Keep the
          // numbering by standing in an int.
          got = btf__add_int(o, "int", 4, BTF_INT_SIGNED);
          break;
      }
      if (got != static_cast<int>(newid_[id]))
        return Error{EINVAL, std::string("cannot copy kernel type ") + name + " into the cut-down BTF"};
    }
    uint32_t size = 0;
    const void* raw = btf__raw_data(o, &size);
    if (!raw) return Error::from_errno("btf__raw_data");
    return std::string(static_cast<const char*>(raw), size);
  }

 private:
  const btf* k_;
  std::unordered_map<uint32_t, uint32_t> newid_;
  std::vector<uint32_t> order_;
};

// Safe to trust: a regular file of ours that nobody else can write, in a
// directory of ours that nobody else can write.
bool trusted(const struct stat& st, bool dir) {
  if (st.st_uid != geteuid()) return false;
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return false;
  return dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

}  // namespace

Result<std::string> minimal_core_btf(const btf* kernel, const btf* local) {
  if (!kernel || !local) return Error{EINVAL, "no BTF to cut down"};
  std::unordered_set<std::string_view> wanted;
  for (uint32_t id = 1; id < btf__type_cnt(local); ++id) {
    const btf_type* t = btf__type_by_id(local, id);
    if (!t || !is_named_root(t)) continue;
    const char* name = btf__name_by_offset(local, t->name_off);
    if (name && *name) wanted.insert(essential(name));
  }
  Builder b(kernel);
  for (uint32_t id = 1; id < btf__type_cnt(kernel); ++id) {
    const btf_type* t = btf__type_by_id(kernel, id);
    if (!t || !is_named_root(t) || btf_kind(t) == BTF_KIND_FWD) continue;
    const char* name = btf__name_by_offset(kernel, t->name_off);
    if (name && *name && wanted.count(name)) b.include(id);
  }
  if (b.empty()) return Error{ENOENT, "the kernel's BTF has none of the tracer's types"};
  return b.emit();
}

Result<std::string> core_btf_file(const void* elf, size_t elf_size, const std::string& dir, bool* made) {
  if (made) *made = false;
  // The key: these programs on this boot of this kernel.  /run is emptied
  // at boot, but the boot id also covers a /run that is not.
  utsname u{};
  uname(&u);
  // Not a digest to defend anything (the file's owner and mode do that),
  // only a name: std::hash is fast enough over the object's megabyte.
  std::string_view bytes(static_cast<const char*>(elf), elf_size);
  std::string rest = boot_id() + "\n" + u.release + "\n" + u.version;
  char key[40];
  std::snprintf(key, sizeof(key), "%016zx%016zx", std::hash<std::string_view>{}(bytes),
                std::hash<std::string_view>{}(rest));
  std::string name = std::string("core-") + key + ".btf";
  std::string path = dir + "/" + name;

  struct stat st {};
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Error::from_errno("mkdir " + dir);
  if (lstat(dir.c_str(), &st) != 0 || !trusted(st, true))
    return Error{EPERM, dir + " is not a directory that only this user can write"};
  if (lstat(path.c_str(), &st) == 0) {
    if (trusted(st, false) && st.st_size > 0) return path;
    unlink(path.c_str());
  }

  // Made from the kernel's BTF, and the object's own.
  BtfPtr kernel(btf__parse(kKernelBtf, nullptr));
  if (!kernel) return Error::from_errno(std::string("cannot read ") + kKernelBtf);
  // The object's own BTF, from an open (not a load) of it.
  LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "cottonbox_core");
  std::unique_ptr<bpf_object, decltype(&bpf_object__close)> obj(bpf_object__open_mem(elf, elf_size, &oo),
                                                                &bpf_object__close);
  const btf* local = obj ? bpf_object__btf(obj.get()) : nullptr;
  if (!local) return Error{EINVAL, "cannot read the tracer object's BTF"};
  auto raw = minimal_core_btf(kernel.get(), local);
  if (!raw) return raw.error();

  // Written aside and renamed into place: a reader sees all of it or none.
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    UniqueFd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd) return Error::from_errno("cannot write " + tmp);
    if (write(fd.get(), raw->data(), raw->size()) != static_cast<ssize_t>(raw->size())) {
      unlink(tmp.c_str());
      return Error::from_errno("cannot write " + tmp);
    }
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    return Error::from_errno("cannot rename " + tmp);
  }
  // Older files are for other builds or boots.
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string_view n = e->d_name;
      if (n.starts_with("core-") && n.ends_with(".btf") && n != name) unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
  }
  if (made) *made = true;
  return path;
}

}  // namespace cb
