// The Changes tab's logic, without widgets (testable headless): a recorded
// session's changes (keep/recorded.h), a preview of one change (the kept
// content against the file now), and Restore for a selection with the rule
// of `cottonbox undo`: a dry run first, conflicts refused, --force only when
// asked, every carried-out restore recorded in the audit database.
#pragma once

#include <QModelIndexList>
#include <QObject>
#include <QString>
#include <memory>
#include <optional>

#include "gui/changesmodel.h"
#include "gui/linediff.h"
#include "keep/recorded.h"

namespace cb::gui {

class ChangesController : public QObject {
  Q_OBJECT
 public:
  // Bytes read for a preview, per side.
  static constexpr uint64_t kPreviewLimit = 1 << 20;

  explicit ChangesController(QObject* parent = nullptr);
  ~ChangesController() override;

  // Reads session `id` from the audit database at `dbPath` (read-only) and
  // its keep journal.
  bool load(const QString& dbPath, int64_t id, QString* error);
  bool reload(QString* error);
  void clear();
  bool loaded() const { return m_session != nullptr; }
  const keep::RecordedSession* session() const { return m_session.get(); }
  ChangesModel* model() const { return m_model; }

  // Whether Restore may run at all; `why` says why not.
  bool canRestore(QString* why) const;

  struct Preview {
    QString title;               // the path, or the command
    QString note;                // what happened, what Restore would do, why not
    std::vector<DiffLine> diff;  // before (kept) -> now, when both are text
    bool hasDiff = false;
  };
  Preview preview(const QModelIndex& index) const;

  // The undo that Restore of these rows means: one command's rows undo that
  // command's changes to them; rows of several commands bring their files
  // back to before the session.  A command's row takes all its files.
  // Created files selected (or in a selected command) are removed.
  keep::UndoRequest requestFor(const QModelIndexList& rows) const;

  Result<keep::UndoReport> dryRun(keep::UndoRequest request) const;
  // Carries it out and records it; `recordError` is set when the undo was
  // done but not recorded.  Reloads the changes afterwards.
  Result<keep::UndoReport> restore(keep::UndoRequest request, QString* recordError);

 signals:
  void reloaded();

 private:
  QString m_dbPath;
  int64_t m_id = 0;
  std::unique_ptr<keep::RecordedSession> m_session;
  ChangesModel* m_model;
};

// Counts for people: "3 restored, 1 conflict".
QString undoSummary(const keep::UndoReport& report, bool dryRun);

}  // namespace cb::gui
