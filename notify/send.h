// Internal to notify/: carrying out a send (OpKind::Send) on the socket
// copy, message by message, with what was checked (notify/ops.h's
// SendMessage) and the flags from the register.
//
// The kernel's answer is the caller's: bytes sent, or sendmmsg's count of
// messages sent (with each one's msg_len written back into the caller's
// array), or -errno.  The supervisor never blocks on the caller's behalf
// here: a send the caller would wait for is tried with MSG_DONTWAIT, and if
// it must wait the step says so and a worker goes on with it
// (execute_blocking).  A stream socket may take a send in pieces; the rest
// follows in later steps, as the kernel's own blocking send goes on.
#pragma once

#include "notify/ops.h"

namespace cb {

struct SendStep {
  int64_t ret = 0;           // the answer, when done
  bool would_block = false;  // not done: wait for the socket to take more (POLLOUT), then step again
};

// Sends what is left of `op`.  Never blocks.  Run with the caller's
// credentials (execute's CredScope).
SendStep send_step(Operation& op, const Call& call);

// The answer of a send that stops waiting (its timeout ran out): what it
// sent so far, or EAGAIN.
SendStep send_cut(const Operation& op);

// How far the send got (grows with every byte or message sent).
size_t send_progress(const Operation& op);

// How long the socket lets a blocking send wait (SO_SNDTIMEO), in
// milliseconds; -1: for ever.
int send_timeout_ms(const Operation& op);

}  // namespace cb
