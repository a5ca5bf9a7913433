#include "gui/changescontroller.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <QApplication>
#include <set>

#include "gui/text.h"
#include "keep/fsutil.h"
#include "policy/glob.h"

namespace cb::gui {
namespace {

// The file at `path` now, when it is a regular file of at most `limit`
// bytes; `why` otherwise.
std::optional<std::string> readNow(const std::string& path, uint64_t limit, QString* why) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!fd || fstat(fd.get(), &st) != 0) {
    *why = errno == ENOENT ? QApplication::tr("it is not there now") : QApplication::tr("it cannot be read now");
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = QApplication::tr("it is not a regular file now");
    return std::nullopt;
  }
  if (static_cast<uint64_t>(st.st_size) > limit) {
    *why = QApplication::tr("it is too large to compare here");
    return std::nullopt;
  }
  auto data = keep::read_all(fd.get());
  if (!data) {
    *why = qs(data.error().message);
    return std::nullopt;
  }
  return std::move(*data);
}

QString modeText(uint32_t m) { return QStringLiteral("%1").arg(m & 07777, 4, 8, QLatin1Char('0')); }

}  // namespace

ChangesController::ChangesController(QObject* parent) : QObject(parent), m_model(new ChangesModel(this)) {}
ChangesController::~ChangesController() = default;

bool ChangesController::load(const QString& dbPath, int64_t id, QString* error) {
  m_dbPath = dbPath;
  m_id = id;
  return reload(error);
}

bool ChangesController::reload(QString* error) {
  auto reader = db::Reader::open(bytes(m_dbPath));
  if (!reader) {
    if (error) *error = qs(reader.error().message);
    clear();
    return false;
  }
  auto s = keep::load_session(**reader, m_id);
  if (!s) {
    if (error) *error = qs(s.error().message);
    clear();
    return false;
  }
  m_session = std::make_unique<keep::RecordedSession>(std::move(*s));
  m_model->setSession(*m_session);
  emit reloaded();
  return true;
}

void ChangesController::clear() {
  m_session.reset();
  m_model->clear();
}

bool ChangesController::canRestore(QString* why) const {
  if (!m_session) {
    if (why) *why = tr("No session loaded.");
    return false;
  }
  if (m_session->summary.state == SessionState::Running) {
    if (why) *why = tr("The session is still running: restore once it has ended.");
    return false;
  }
  return true;
}

ChangesController::Preview ChangesController::preview(const QModelIndex& index) const {
  Preview p;
  if (!m_session || !index.isValid()) return p;
  const keep::ChangeLine* l = m_model->line(index);
  if (!l) {
    p.title = m_model->data(m_model->index(index.row(), ChangesModel::PathColumn)).toString();
    p.note = tr("Select a file to see what changed. Restore on this row undoes every change of the command.");
    return p;
  }
  p.title = safe(l->path);
  switch (l->undo) {
    case keep::Undo::MoveBack:
      p.title += QStringLiteral("  →  ") + safe(l->target);
      p.note = tr("Renamed by this command. Restore moves it back.");
      return p;
    case keep::Undo::Cannot: p.note = tr("Not kept: %1").arg(qs(l->reason)); return p;
    case keep::Undo::Created: {
      p.note = tr("Created by this command. Restore removes it (refused if it changed since the session).");
      QString why;
      auto now = readNow(l->path, kPreviewLimit, &why);
      if (now && looks_like_text(*now)) {
        p.diff = diff_lines("", *now);
        p.hasDiff = true;
      } else if (!now) {
        p.note += QStringLiteral(" ") + tr("Now %1.").arg(why);
      }
      return p;
    }
    case keep::Undo::Restore: break;
  }
  auto c = keep::candidate_for(*m_session, l->command, l->path);
  if (!c) return p;
  const keep::Snapshot& before = c->previous;
  QStringList notes;
  if (before.type == keep::FileType::Directory) notes << tr("A directory: Restore makes it again with its metadata.");
  if (before.type == keep::FileType::Symlink) notes << tr("A symlink to %1.").arg(safe(before.target));
  if (c->metadata_only) notes << tr("Only its metadata changed (mode %1 before).").arg(modeText(before.mode));
  if (before.type == keep::FileType::Regular && !c->metadata_only) {
    QString whyNow;
    auto kept = keep::read_kept(*m_session, before, kPreviewLimit);
    auto now = readNow(l->path, kPreviewLimit, &whyNow);
    if (!kept) {
      notes << tr("The kept content cannot be shown: %1.").arg(qs(kept.error().message));
    } else if (!looks_like_text(*kept) || (now && !looks_like_text(*now))) {
      notes << tr("Binary content (%1 bytes before): no line diff.").arg(before.size);
    } else {
      p.diff = diff_lines(*kept, now ? *now : std::string());
      p.hasDiff = true;
      if (!now) notes << tr("Now %1: every line is shown as removed.").arg(whyNow);
    }
  }
  notes << tr("Restore brings back the state before this command (refused if the file changed since the session).");
  p.note = notes.join(QStringLiteral(" "));
  return p;
}

keep::UndoRequest ChangesController::requestFor(const QModelIndexList& rows) const {
  keep::UndoRequest r;
  std::set<uint64_t> commands, whole;
  std::set<std::string> paths;
  for (const QModelIndex& i : rows) {
    auto cmd = m_model->commandOf(i);
    if (!cmd) continue;
    commands.insert(*cmd);
    const keep::ChangeLine* l = m_model->line(i);
    if (!l) {
      whole.insert(*cmd);
      for (const ChangesModel::Group& g : m_model->groups())
        if (g.command == *cmd)
          for (const keep::ChangeLine& gl : g.lines) r.created |= gl.undo == keep::Undo::Created;
      continue;
    }
    paths.insert(l->path);
    if (!l->target.empty()) paths.insert(l->target);
    r.created |= l->undo == keep::Undo::Created;
  }
  if (commands.size() == 1) r.command = *commands.begin();
  // A command's own row: all of its files, no path filter.
  if (whole.size() == 1 && commands.size() == 1) return r;
  for (uint64_t cmd : whole)
    for (const ChangesModel::Group& g : m_model->groups())
      if (g.command == cmd)
        for (const keep::ChangeLine& gl : g.lines) {
          paths.insert(gl.path);
          if (!gl.target.empty()) paths.insert(gl.target);
        }
  std::vector<std::string> escaped;
  for (const std::string& p : paths) escaped.push_back(Glob::escape(p));
  if (escaped.size() == 1) {
    r.path_glob = escaped[0];
  } else if (!escaped.empty()) {
    // One brace group of exact paths (Glob::escape escapes the commas).
    r.path_glob.push_back('{');
    for (size_t k = 0; k < escaped.size(); ++k) {
      if (k) r.path_glob.push_back(',');
      r.path_glob.append(escaped[k]);
    }
    r.path_glob.push_back('}');
  }
  return r;
}

Result<keep::UndoReport> ChangesController::dryRun(keep::UndoRequest request) const {
  if (!m_session) return Error{EINVAL, "no session loaded"};
  request.dry_run = true;
  return keep::undo_session(*m_session, request);
}

Result<keep::UndoReport> ChangesController::restore(keep::UndoRequest request, QString* recordError) {
  if (!m_session) return Error{EINVAL, "no session loaded"};
  request.dry_run = false;
  auto r = keep::undo_session(*m_session, request);
  if (!r) return r;
  if (auto id = keep::record_undo(*m_session, request, *r); !id && recordError)
    *recordError =
        tr("The restore was carried out but not recorded in the audit database: %1").arg(qs(id.error().message));
  QString ignored;
  reload(&ignored);
  return r;
}

QString undoSummary(const keep::UndoReport& r, bool dryRun) {
  size_t restore = 0, remove = 0, move = 0, conflict = 0, cannot = 0, nothing = 0, skipped = 0, failed = 0;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const keep::Step& s = r.steps[i];
    bool done = dryRun || (i < r.applied.outcomes.size() && r.applied.outcomes[i].done);
    switch (s.action) {
      case keep::Action::Restore: (done ? restore : failed) += 1; break;
      case keep::Action::Remove: (done ? remove : failed) += 1; break;
      case keep::Action::MoveBack: (done ? move : failed) += 1; break;
      case keep::Action::Conflict: ++conflict; break;
      case keep::Action::Cannot: ++cannot; break;
      case keep::Action::Nothing: ++nothing; break;
      case keep::Action::SkipCreated: ++skipped; break;
    }
  }
  QStringList parts;
  if (restore) parts << (dryRun ? QApplication::tr("%1 to restore") : QApplication::tr("%1 restored")).arg(restore);
  if (remove) parts << (dryRun ? QApplication::tr("%1 to remove") : QApplication::tr("%1 removed")).arg(remove);
  if (move) parts << (dryRun ? QApplication::tr("%1 to move back") : QApplication::tr("%1 moved back")).arg(move);
  if (conflict) parts << counted(conflict, "conflict (refused)", "conflicts (refused)");
  if (cannot) parts << QApplication::tr("%1 not kept").arg(cannot);
  if (failed) parts << QApplication::tr("%1 failed").arg(failed);
  if (skipped) parts << QApplication::tr("%1 created files left").arg(skipped);
  if (nothing) parts << QApplication::tr("%1 already as before").arg(nothing);
  return parts.isEmpty() ? QApplication::tr("nothing to restore") : parts.join(QStringLiteral(", "));
}

}  // namespace cb::gui
