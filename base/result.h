// cb::Result<T>: a value or an Error, for recoverable failures.
//
// Convention for the whole project (after bpftrace and crun): functions that can
// fail for reasons the caller may handle return Result<T>; an Error carries the
// errno (0 when none applies) and a sentence for the user.  Exceptions are kept
// for the edge: `main` turns a FatalError into exit status 125.
// Shaped so it can become std::expected<T, Error> when the toolchain has it.
#pragma once

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace cb {

struct Error {
  int err = 0;          // errno, or 0
  std::string message;  // a sentence, no trailing newline

  static Error from_errno(std::string what, int e = errno) {
    return Error{e, std::move(what) + ": " + std::strerror(e)};
  }
};

// Thrown only where nothing sensible can continue; main() maps it to exit 125.
class FatalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Ok {};

template <typename T = Ok>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error e) : v_(std::move(e)) {}      // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace cb
