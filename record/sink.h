// Where records go as they are produced: the store, the GUI connection.
// The supervisor feeds every sink from its one loop thread.
#pragma once

#include <cstdint>
#include <string>

#include "record/record.h"

namespace cb {

// Receives every record as it is produced (the store, the GUI connection).
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void event(const EventRow& row) = 0;
  // A row nothing else will read: a sink that keeps rows may take it whole.
  virtual void event(EventRow&& row) { event(static_cast<const EventRow&>(row)); }
  virtual void process(const ProcessRow& row) { (void)row; }
  virtual void process_exec(const ProcessExec& e) { (void)e; }
  virtual void process_exit(const ProcessExit& e) { (void)e; }
  virtual void approval(const ApprovalRow& a) { (void)a; }
  virtual void lookup(const LookupRow& l) { (void)l; }
  virtual void degraded(const std::string& reason) { (void)reason; }
  // A refusal before the kernel is told of it (the row then follows through
  // event()): what the user must read before the refused program speaks.
  virtual void refusing(const EventRow& row) { (void)row; }
  // The tracer's running total of records it had no room for.
  virtual void events_lost(uint64_t total) { (void)total; }
};

}  // namespace cb
