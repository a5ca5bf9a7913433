#include "gui/auditdb.h"

#include <map>

#include "audit/commands.h"
#include "gui/text.h"

namespace cb::gui {
namespace {

EventItem toItem(db::StoredEvent&& e) { return EventItem{e.id, e.session, std::move(e.row), std::move(e.approval)}; }

}  // namespace

AuditDatabase::AuditDatabase() = default;
AuditDatabase::~AuditDatabase() = default;

bool AuditDatabase::open(const QString& path, QString* error) {
  auto r = db::Reader::open(bytes(path));
  if (!r) {
    if (error) *error = qs(r.error().message);
    return false;
  }
  m_reader = std::move(*r);
  m_path = path;
  return true;
}

void AuditDatabase::close() {
  m_reader.reset();
  m_path.clear();
}

std::optional<std::vector<db::SessionSummary>> AuditDatabase::sessions(QString* error) {
  if (!m_reader) return std::nullopt;
  auto r = m_reader->sessions();
  if (!r) {
    if (error) *error = qs(r.error().message);
    return std::nullopt;
  }
  return std::move(*r);
}

std::vector<EventItem> AuditDatabase::events(int64_t session, size_t limit, bool* truncated, QString* error) {
  std::vector<EventItem> out;
  if (truncated) *truncated = false;
  if (!m_reader) return out;
  db::EventQuery q;
  q.session = session;
  q.limit = static_cast<int64_t>(limit) + 1;
  auto r = m_reader->events(q);
  if (!r) {
    if (error) *error = qs(r.error().message);
    return out;
  }
  if (r->size() > limit) {
    r->resize(limit);
    if (truncated) *truncated = true;
  }
  out.reserve(r->size());
  for (auto& e : *r) out.push_back(toItem(std::move(e)));
  return out;
}

std::vector<db::StoredProcess> AuditDatabase::processes(int64_t session, QString* error) {
  if (!m_reader) return {};
  auto r = m_reader->processes(session);
  if (!r) {
    if (error) *error = qs(r.error().message);
    return {};
  }
  return std::move(*r);
}

std::vector<Touch> AuditDatabase::whoTouched(std::optional<int64_t> session, const std::string& glob, size_t limit,
                                             QString* error, bool changesOnly) {
  db::EventQuery q;
  q.session = session;
  q.path_glob = glob;
  if (changesOnly) q.action = "file.mutate";
  q.limit = static_cast<int64_t>(limit);
  return touches(q, error);
}

std::vector<Touch> AuditDatabase::whoContacted(std::optional<int64_t> session, const std::string& host, size_t limit,
                                               QString* error) {
  db::EventQuery q;
  q.session = session;
  q.host = host;
  q.limit = static_cast<int64_t>(limit);
  return touches(q, error);
}

std::vector<Touch> AuditDatabase::touches(const db::EventQuery& q, QString* error) {
  std::vector<Touch> out;
  if (!m_reader) return out;
  auto r = m_reader->events(q);
  if (!r) {
    if (error) *error = qs(r.error().message);
    return out;
  }
  // Many events share a process: each chain is read once.
  std::map<std::pair<int64_t, uint64_t>, std::vector<db::StoredProcess>> chains;
  for (auto& e : *r) {
    Touch t;
    uint64_t pid = e.row.ev.proc ? e.row.ev.proc->proc_id : 0;
    if (pid) {
      auto key = std::make_pair(e.session, pid);
      auto it = chains.find(key);
      if (it == chains.end()) {
        auto c = m_reader->process_chain(e.session, pid);
        it = chains.emplace(key, c ? std::move(*c) : std::vector<db::StoredProcess>{}).first;
      }
      t.chain = it->second;
    }
    t.event = toItem(std::move(e));
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<db::HostContact> AuditDatabase::hosts(int64_t session, QString* error) {
  if (!m_reader) return {};
  auto r = m_reader->hosts(session);
  if (!r) {
    if (error) *error = qs(r.error().message);
    return {};
  }
  return std::move(*r);
}

std::vector<db::StoredLookup> AuditDatabase::lookups(int64_t session, QString* error) {
  if (!m_reader) return {};
  auto r = m_reader->lookups(session);
  if (!r) {
    if (error) *error = qs(r.error().message);
    return {};
  }
  return std::move(*r);
}

QString AuditDatabase::why(int64_t id, QString* error) {
  if (!m_reader) {
    if (error) *error = QObject::tr("no audit database is open");
    return {};
  }
  auto r = audit::why_event(*m_reader, id);
  if (!r) {
    if (error) *error = qs(r.error().message);
    return {};
  }
  return qs(r->text);
}

}  // namespace cb::gui
