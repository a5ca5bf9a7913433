// One line on the terminal the first time each rule refuses something in a
// session: a tool that fails inside the session (a sandbox whose mount was
// refused, a build whose delete was) tells the user only its own error,
// which blames the kernel.  The line says which rule refused what, and how
// to allow it where a rule can.
#pragma once

#include <cstdio>
#include <set>
#include <string>

#include "record/sink.h"

namespace cb {

// The line for a refused row (empty for a row that was not refused).
std::string refusal_notice(const EventRow& row);

class RefusalNotices : public Sink {
 public:
  explicit RefusalNotices(std::FILE* out) : out_(out) {}
  // Said as the call is refused, so that it comes before the refused
  // program's own error; rows refused elsewhere (by a kernel layer, seen
  // by the tracer) are said as they are recorded.
  void refusing(const EventRow& row) override { event(row); }
  void event(const EventRow& row) override;

 private:
  std::FILE* out_;
  std::set<std::string> told_;  // rules already named
};

}  // namespace cb
