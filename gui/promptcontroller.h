// The prompts, without a single widget: a queue (one on screen at a time,
// first come first served), the countdown to the default (deny), folding
// updates, and the six answers.  The prompt window and the tray bind to its
// signals; tests drive it directly.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "proto/protocol.h"

namespace cb::gui {

struct Prompt {
  quint64 connection = 0;  // which supervisor asked
  QString sessionLabel;    // "agent (#12)"
  std::string cwd;         // the session's, for shorter paths
  proto::AskMsg ask;
};

struct PromptKey {
  quint64 connection = 0;
  uint64_t askId = 0;
  bool operator==(const PromptKey&) const = default;
};

class PromptController : public QObject {
  Q_OBJECT
 public:
  explicit PromptController(QObject* parent = nullptr);

  void enqueue(Prompt p);
  void update(quint64 connection, uint64_t askId, uint32_t count, const std::string& summary);
  // The supervisor ended the ask (timeout, the process is gone).
  void cancel(quint64 connection, uint64_t askId);
  // The supervisor went away: its prompts can no longer be answered.
  void dropConnection(quint64 connection);

  bool hasCurrent() const { return !m_queue.empty(); }
  const Prompt& current() const { return m_queue.front(); }
  PromptKey currentKey() const;
  int waiting() const { return m_queue.empty() ? 0 : static_cast<int>(m_queue.size()) - 1; }
  const std::deque<Prompt>& queue() const { return m_queue; }
  // Until the current prompt's deadline.
  qint64 msLeft() const;
  int secondsLeft() const;
  // The whole wait, for a progress bar.
  qint64 totalMs() const;

  // Answers to the current prompt.
  void allowOnce();
  void denyOnce();
  void allowTree();  // this process tree, for the rest of the session
  void denyTree();
  // The rule an "always" answer would write (editable before saving).
  QString proposedRule(bool allow) const;
  // Saves `ruleYaml` to the rules file, then answers.  False (and nothing
  // written or answered) when the rule does not load, or when `expected`
  // is given and that prompt is no longer current (it timed out while the
  // rule was being edited); `error` says why.
  bool answerAlways(bool allow, const QString& ruleYaml, QString* error = nullptr,
                    std::optional<PromptKey> expected = std::nullopt);

  void setRulesFile(const QString& path) { m_rulesFile = path; }
  QString rulesFile() const { return m_rulesFile; }
  // Tests: a clock in ns (CLOCK_REALTIME by default, like the deadlines).
  void setClock(std::function<int64_t()> now) { m_now = std::move(now); }

 signals:
  void currentChanged();  // another prompt is on screen, or none is left
  void countChanged();    // the current prompt folded more requests
  void queueChanged(int waiting);
  void tick(int secondsLeft);
  void promptArrived(const cb::gui::Prompt& prompt);  // every new prompt (the tray)
  void answered(const cb::gui::Prompt& prompt, const cb::proto::Answer& answer);

 private:
  void answer(proto::Answer a);
  void onTick();
  void popFront();

  std::deque<Prompt> m_queue;
  QTimer m_tick;
  QString m_rulesFile;
  std::function<int64_t()> m_now;
  int m_lastSecond = -1;
};

}  // namespace cb::gui
