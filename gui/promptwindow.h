// The prompt on screen: a thin view of PromptController.  It comes to the
// front for every new prompt and answers with one key:
//   A allow once      T allow this process tree      Y always allow…
//   D deny once (Esc) B block this process tree      N never (always deny…)
#pragma once

#include <QDialog>
#include <QWidget>

#include "gui/promptcontroller.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace cb::gui {

class PromptWindow : public QWidget {
  Q_OBJECT
 public:
  explicit PromptWindow(PromptController* controller, QWidget* parent = nullptr);

  // Shows, raises and activates the window (a new prompt must be seen).
  void bringToFront();
  // Opens the "always" dialog for the current prompt (Y / N).
  void askAlways(bool allow);

  QPushButton* button(const QString& key) const;  // "A", "D", "T", "B", "Y", "N"

 signals:
  // The rule dialog is open (tests and screenshots reach it through this).
  void ruleDialogOpened(QDialog* dialog);

 private:
  void refresh();
  void refreshSummary();
  void refreshCountdown(int secondsLeft);
  void refreshQueue(int waiting);

  PromptController* m_c;
  QLabel* m_session;
  QLabel* m_queue;
  QLabel* m_title;
  QLabel* m_rule;
  QLabel* m_paths;
  QLabel* m_chain;
  QProgressBar* m_progress;
  QLabel* m_countdown;
  QPushButton *m_allowOnce, *m_allowTree, *m_allowAlways, *m_denyOnce, *m_denyTree, *m_denyAlways;
};

// Shows the rule an "always" answer writes; the user may edit it or cancel.
class RuleDialog : public QDialog {
  Q_OBJECT
 public:
  RuleDialog(PromptController* controller, bool allow, QWidget* parent = nullptr);
  QPlainTextEdit* editor() const { return m_editor; }
  QLabel* errorLabel() const { return m_error; }
  void save();

 private:
  PromptController* m_c;
  bool m_allow;
  PromptKey m_key;
  QPlainTextEdit* m_editor;
  QLabel* m_error;
};

}  // namespace cb::gui
