// A classic-BPF interpreter for seccomp filters, so that tests can run the
// program cottonbox builds on chosen syscalls, as the kernel would, without
// installing it.  Covers the instruction set seccomp accepts.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace cb::test {

inline uint32_t run_seccomp_bpf(const std::vector<sock_filter>& prog, const seccomp_data& data) {
  uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = {};
  auto word = [&](uint32_t off) {
    if (off + 4 > sizeof data || off % 4) throw std::runtime_error("bad seccomp_data offset");
    uint32_t v;
    std::memcpy(&v, reinterpret_cast<const char*>(&data) + off, 4);
    return v;
  };
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const sock_filter& i = prog[pc];
    uint32_t src = BPF_SRC(i.code) == BPF_X ? X : i.k;
    switch (BPF_CLASS(i.code)) {
      case BPF_LD:
        switch (BPF_MODE(i.code)) {
          case BPF_ABS: A = word(i.k); break;
          case BPF_IMM: A = i.k; break;
          case BPF_MEM: A = M[i.k % BPF_MEMWORDS]; break;
          case BPF_LEN: A = sizeof data; break;
          default: throw std::runtime_error("unsupported BPF_LD mode");
        }
        break;
      case BPF_LDX:
        switch (BPF_MODE(i.code)) {
          case BPF_IMM: X = i.k; break;
          case BPF_MEM: X = M[i.k % BPF_MEMWORDS]; break;
          case BPF_LEN: X = sizeof data; break;
          default: throw std::runtime_error("unsupported BPF_LDX mode");
        }
        break;
      case BPF_ST: M[i.k % BPF_MEMWORDS] = A; break;
      case BPF_STX: M[i.k % BPF_MEMWORDS] = X; break;
      case BPF_ALU:
        switch (BPF_OP(i.code)) {
          case BPF_ADD: A += src; break;
          case BPF_SUB: A -= src; break;
          case BPF_MUL: A *= src; break;
          case BPF_DIV: A = src ? A / src : 0; break;
          case BPF_MOD: A = src ? A % src : 0; break;
          case BPF_OR: A |= src; break;
          case BPF_AND: A &= src; break;
          case BPF_XOR: A ^= src; break;
          case BPF_LSH: A <<= src; break;
          case BPF_RSH: A >>= src; break;
          case BPF_NEG: A = -A; break;
          default: throw std::runtime_error("unsupported BPF_ALU op");
        }
        break;
      case BPF_JMP: {
        bool t = false;
        switch (BPF_OP(i.code)) {
          case BPF_JA: pc += i.k; continue;
          case BPF_JEQ: t = A == src; break;
          case BPF_JGT: t = A > src; break;
          case BPF_JGE: t = A >= src; break;
          case BPF_JSET: t = (A & src) != 0; break;
          default: throw std::runtime_error("unsupported BPF_JMP op");
        }
        pc += t ? i.jt : i.jf;
        break;
      }
      case BPF_RET: return BPF_RVAL(i.code) == BPF_A ? A : i.k;
      case BPF_MISC:
        if (BPF_MISCOP(i.code) == BPF_TAX)
          X = A;
        else
          A = X;
        break;
      default: throw std::runtime_error("unsupported BPF class");
    }
  }
  throw std::runtime_error("the program ran off its end");
}

}  // namespace cb::test
