// The cut-down kernel BTF the tracer's programs are placed against
// (tracer/core_btf.h), built from this machine's real kernel BTF and the
// real tracer object.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cottonbox.skel.h"
#include "trace/core_btf.h"

namespace cb {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKernelBtf = "/sys/kernel/btf/vmlinux";

struct BtfFree {
  void operator()(btf* b) const { btf__free(b); }
};
struct ObjClose {
  void operator()(bpf_object* o) const { bpf_object__close(o); }
};

// A type with typedefs and modifiers looked through.
const btf_type* resolved(const btf* b, uint32_t id, uint32_t* out_id = nullptr) {
  const btf_type* t = btf__type_by_id(b, id);
  while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
    id = t->type;
    t = btf__type_by_id(b, id);
  }
  if (out_id) *out_id = id;
  return t;
}

std::string name_of(const btf* b, const btf_type* t) {
  const char* n = t ? btf__name_by_offset(b, t->name_off) : nullptr;
  return n ? n : "";
}

class CoreBtf : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kKernelBtf, R_OK) != 0) GTEST_SKIP() << "no kernel BTF at " << kKernelBtf;
    kernel_.reset(btf__parse(kKernelBtf, nullptr));
    ASSERT_TRUE(kernel_);
    elf_ = cottonbox_bpf__elf_bytes(&elf_size_);
    obj_.reset(bpf_object__open_mem(elf_, elf_size_, nullptr));
    ASSERT_TRUE(obj_);
    local_ = bpf_object__btf(obj_.get());
    ASSERT_TRUE(local_);
  }
  std::unique_ptr<btf, BtfFree> kernel_;
  std::unique_ptr<bpf_object, ObjClose> obj_;
  const btf* local_ = nullptr;
  const void* elf_ = nullptr;
  size_t elf_size_ = 0;
};

// Every struct and union the programs name has, in the cut-down BTF, the
// kernel's size and every member at the kernel's bit offset, of a type of
// the same kind and name (pointers: a pointer).  That is everything a CO-RE
// field or size relocation reads of it.
TEST_F(CoreBtf, CutDownKeepsEveryMemberTheProgramsCanPlace) {
  auto raw = minimal_core_btf(kernel_.get(), local_);
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  std::unique_ptr<btf, BtfFree> small(btf__new(raw->data(), raw->size()));
  ASSERT_TRUE(small) << "the cut-down BTF does not parse";
  EXPECT_LT(btf__type_cnt(small.get()) * 20, btf__type_cnt(kernel_.get()))
      << "cut-down: " << btf__type_cnt(small.get()) << " types, kernel: " << btf__type_cnt(kernel_.get());

  int checked = 0;
  for (uint32_t id = 1; id < btf__type_cnt(local_); ++id) {
    const btf_type* lt = btf__type_by_id(local_, id);
    if (!btf_is_composite(lt)) continue;
    std::string name = name_of(local_, lt);
    if (name.empty()) continue;
    int kid = btf__find_by_name_kind(kernel_.get(), name.c_str(), btf_kind(lt));
    if (kid <= 0) continue;  // the object's own types (records, map values)
    int sid = btf__find_by_name_kind(small.get(), name.c_str(), btf_kind(lt));
    ASSERT_GT(sid, 0) << name << " is missing from the cut-down BTF";
    const btf_type* kt = btf__type_by_id(kernel_.get(), kid);
    const btf_type* st = btf__type_by_id(small.get(), sid);
    SCOPED_TRACE(name);
    ASSERT_EQ(st->size, kt->size);
    ASSERT_EQ(btf_vlen(st), btf_vlen(kt));
    const btf_member* km = btf_members(kt);
    const btf_member* sm = btf_members(st);
    for (uint16_t i = 0; i < btf_vlen(kt); ++i) {
      SCOPED_TRACE("member " + std::to_string(i) + " " +
                   std::string(btf__name_by_offset(kernel_.get(), km[i].name_off)));
      EXPECT_STREQ(btf__name_by_offset(small.get(), sm[i].name_off),
                   btf__name_by_offset(kernel_.get(), km[i].name_off));
      EXPECT_EQ(btf_member_bit_offset(st, i), btf_member_bit_offset(kt, i));
      EXPECT_EQ(btf_member_bitfield_size(st, i), btf_member_bitfield_size(kt, i));
      const btf_type* kmt = resolved(kernel_.get(), km[i].type);
      const btf_type* smt = resolved(small.get(), sm[i].type);
      ASSERT_TRUE(kmt && smt);
      EXPECT_EQ(btf_kind(smt), btf_kind(kmt));
      if (btf_is_ptr(kmt)) continue;
      EXPECT_EQ(name_of(small.get(), smt), name_of(kernel_.get(), kmt));
      if (!btf_is_array(kmt)) {
        EXPECT_EQ(smt->size, kmt->size);
      }
    }
    ++checked;
  }
  // task_struct, dentry, file, mount, pid, ... : the programs read dozens.
  EXPECT_GE(checked, 15);
}

TEST_F(CoreBtf, FileIsMadeOnceAndRemadeWhenSomeoneElseCouldHaveWrittenIt) {
  std::string dir = fs::temp_directory_path() / ("cbcore-" + std::to_string(getpid()));
  fs::remove_all(dir);
  bool made = false;
  auto first = core_btf_file(elf_, elf_size_, dir, &made);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(made);
  struct stat st {};
  ASSERT_EQ(stat(first->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(st.st_uid, geteuid());

  auto again = core_btf_file(elf_, elf_size_, dir, &made);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(made) << "a second session reads the file the first one made";
  EXPECT_EQ(*again, *first);

  // A file others can write may have been rewritten: made afresh.
  ASSERT_EQ(chmod(first->c_str(), 0666), 0);
  auto remade = core_btf_file(elf_, elf_size_, dir, &made);
  ASSERT_TRUE(remade.ok());
  EXPECT_TRUE(made);
  ASSERT_EQ(stat(remade->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);

  // So is a directory others can write: refused outright.
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  auto refused = core_btf_file(elf_, elf_size_, dir, &made);
  EXPECT_FALSE(refused.ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cb
