// Forensic review's source: an audit database opened read-only (db::Reader),
// shaped for the views.
#pragma once

#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "db/store.h"
#include "gui/eventmodel.h"

namespace cb::gui {

// One event on a path, and the processes behind it (nearest first).
struct Touch {
  EventItem event;
  std::vector<db::StoredProcess> chain;
};

class AuditDatabase {
 public:
  AuditDatabase();
  ~AuditDatabase();

  bool open(const QString& path, QString* error);
  void close();
  bool isOpen() const { return m_reader != nullptr; }
  QString path() const { return m_path; }

  std::optional<std::vector<db::SessionSummary>> sessions(QString* error);
  // At most `limit` events (the newest are dropped first: review starts at the beginning).
  std::vector<EventItem> events(int64_t session, size_t limit, bool* truncated, QString* error);
  std::vector<db::StoredProcess> processes(int64_t session, QString* error);
  // Every event whose path or target matches `glob` (the rules' globs), in
  // one session or all, with the process chain behind each.  `changesOnly`
  // keeps the file changes (file.mutate), without reads and execs.
  std::vector<Touch> whoTouched(std::optional<int64_t> session, const std::string& glob, size_t limit, QString* error,
                                bool changesOnly = false);
  // What `cottonbox hosts` shows for a session (db::Reader::hosts).
  std::vector<db::HostContact> hosts(int64_t session, QString* error);
  std::vector<db::StoredLookup> lookups(int64_t session, QString* error);
  // "Who contacted this host?": every network event whose address or
  // resolved names match `host` (a name, *.example.com, an address or a
  // block: db::parse_host_query), in one session or all, with the chain
  // behind each.
  std::vector<Touch> whoContacted(std::optional<int64_t> session, const std::string& host, size_t limit,
                                  QString* error);
  // Why event `id` was decided as it was: `cottonbox why ID`'s text.
  QString why(int64_t id, QString* error);

 private:
  std::vector<Touch> touches(const db::EventQuery& q, QString* error);

  std::unique_ptr<db::Reader> m_reader;
  QString m_path;
};

}  // namespace cb::gui
