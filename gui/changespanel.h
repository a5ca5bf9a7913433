// The Changes tab of a session: its commands and the files each changed,
// a preview of the selected change (the kept content against the file now,
// as a line diff for text), and Restore for a selection: a dry run shown
// first, conflicts refused and named, Force a separate, confirmed action.
#pragma once

#include <QWidget>
#include <optional>

#include "gui/changescontroller.h"

class QDialog;
class QLabel;
class QPushButton;
class QTextEdit;
class QTreeView;

namespace cb::gui {

class ChangesPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ChangesPanel(QWidget* parent = nullptr);

  // The session to show (loaded now when visible, else when shown).
  void setSession(const QString& dbPath, int64_t id);
  void clear(const QString& why);

  ChangesController* controller() const { return m_controller; }
  QTreeView* view() const { return m_view; }
  QTextEdit* diffView() const { return m_diff; }
  QPushButton* restoreButton() const { return m_restore; }
  bool selectLine(uint64_t command, const std::string& path);

  // Opens the Restore dialog for the selection (window-modal, returns at once).
  void restoreSelected();

 signals:
  void status(const QString& message);
  void restoreDialogOpened(QDialog* dialog);
  void restored(const QString& summary);

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  void load();
  void showPreview();
  void updateButtons();
  void carryOut(const keep::UndoRequest& request, bool force);

  ChangesController* m_controller;
  QString m_dbPath;
  std::optional<int64_t> m_id;
  bool m_stale = false;
  QLabel* m_summary;
  QPushButton* m_refresh;
  QPushButton* m_restore;
  QTreeView* m_view;
  QLabel* m_title;
  QLabel* m_note;
  QTextEdit* m_diff;
};

}  // namespace cb::gui
