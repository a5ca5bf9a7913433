// The supervisor's side of the GUI connection (docs/protocol.md).
//
// `cottonbox run --ask gui` connects to the socket a GUI (or any program
// speaking the protocol: an orchestrator, a chat bot) listens on, announces
// its session, streams its events and processes, sends ask requests and
// receives decisions.  All socket I/O happens on the client's own thread:
// the supervisor only enqueues, and a slow or vanished GUI never stalls a
// decision (events beyond a bounded queue are dropped for the GUI and
// counted; the audit database keeps everything; asks are never dropped).
#pragma once

#include <memory>
#include <string>

#include "ask/ask.h"
#include "base/result.h"
#include "record/record.h"
#include "record/sink.h"

namespace cb {

// $XDG_RUNTIME_DIR/cottonbox/gui.sock
std::string default_gui_socket_path();

class GuiClient : public AskBackend, public Sink {
 public:
  // Connects and sends the session announcement; fails (ECONNREFUSED,
  // ENOENT) when nothing listens, so the caller can fall back.
  static Result<std::unique_ptr<GuiClient>> connect(const std::string& socket_path, const SessionStart& session,
                                                    int64_t session_id);
  ~GuiClient() override;

  // AskBackend
  std::string name() const override;
  void ask(const AskRequest& req) override;
  void update(uint64_t ask_id, uint32_t count) override;
  void cancel(uint64_t ask_id) override;

  // Sink
  void event(const EventRow& row) override;
  void process(const ProcessRow& row) override;
  void process_exec(const ProcessExec& e) override;
  void process_exit(const ProcessExit& e) override;
  void approval(const ApprovalRow& a) override;
  void degraded(const std::string& reason) override;

  // The session is over: sends the end and flushes (bounded wait).
  void session_end(const SessionEnd& end);
  bool connected() const;

 private:
  struct Impl;
  explicit GuiClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cb
