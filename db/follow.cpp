#include "db/follow.h"

#include <cerrno>
#include <iostream>
#include <thread>

#include "db/json.h"
#include "db/report.h"

namespace cb::db {
namespace {

constexpr int64_t kPage = 1000;

bool stopped(const FollowOptions& o) { return o.stop && o.stop->load(); }

void sleep_for(const FollowOptions& o, std::chrono::milliseconds d) {
  // In short steps, so that a stop is noticed promptly.
  auto until = std::chrono::steady_clock::now() + d;
  while (!stopped(o) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::min(d, std::chrono::milliseconds(50)));
}

std::string text_line(const StoredEvent& e) {
  const EventRow& r = e.row;
  std::string d = r.allowed ? "allow" : "DENY";
  if (r.verdict.decision == Decision::Ask) d = "ask->" + d;
  if (r.verdict.decision == Decision::Log) d = "log";
  if (!r.enforced && !r.allowed) d = "would " + d;
  std::string line = std::to_string(e.id) + " " + iso8601_utc(r.ev.ts_ns) + " session " + std::to_string(e.session) +
                     " pid " + std::to_string(r.ev.pid) + " " + escape_for_terminal(r.ev.proc ? r.ev.proc->comm : "") +
                     " " + std::string(action_name(r.ev.action)) + " " + d + " " +
                     (r.verdict.rule_id.empty() ? "-" : escape_for_terminal(r.verdict.rule_id)) + " " +
                     escape_for_terminal(r.ev.path);
  if (!r.ev.target.empty()) line += " -> " + escape_for_terminal(r.ev.target);
  return line;
}

}  // namespace

int follow_events(const std::string& path, const FollowOptions& o, std::ostream& out) {
  std::unique_ptr<Reader> reader;
  while (!reader) {
    if (stopped(o)) return 0;
    auto r = Reader::open(path);
    if (r) {
      reader = std::move(*r);
    } else if (r.error().err == ENOENT || r.error().err == ENODATA) {
      sleep_for(o, o.poll);  // no database yet, or not filled yet: the first session makes it
    } else {
      return report_error(r.error());
    }
  }
  EventQuery q = o.query;
  q.limit = kPage;
  int64_t printed = 0;
  while (!stopped(o)) {
    auto page = reader->events(q);
    if (!page) return report_error(page.error());
    for (const auto& e : *page) {
      if (o.json)
        out << event_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      else
        out << text_line(e) << '\n';
      q.after_id = e.id;
      if (o.stop_after && ++printed >= o.stop_after) break;
    }
    out.flush();
    if (!out) return 0;  // the reader went away
    if (o.stop_after && printed >= o.stop_after) return 0;
    if (static_cast<int64_t>(page->size()) < kPage) sleep_for(o, o.poll);
  }
  return 0;
}

}  // namespace cb::db
