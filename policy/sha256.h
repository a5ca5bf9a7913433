// A small SHA-256 (FIPS 180-2) for the policy hash, so cb_policy needs no
// crypto library.  Not for secrets: no constant-time guarantees are needed.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cb {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  std::array<uint8_t, 32> finish();  // the object must not be updated afterwards
  std::string finish_hex();

 private:
  void block(const uint8_t* p);

  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buf_len_ = 0;
  uint64_t total_ = 0;  // bytes
};

std::string sha256_hex(std::string_view data);

}  // namespace cb
