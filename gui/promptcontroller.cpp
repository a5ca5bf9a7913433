#include "gui/promptcontroller.h"

#include <QFile>
#include <chrono>

#include "gui/rules.h"
#include "gui/text.h"

namespace cb::gui {
namespace {

int64_t wallNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string envOr(const char* k, const std::string& d) {
  const char* v = getenv(k);
  return v && *v ? v : d;
}

}  // namespace

PromptController::PromptController(QObject* parent) : QObject(parent), m_rulesFile(userRulesPath()), m_now(wallNs) {
  m_tick.setInterval(200);
  connect(&m_tick, &QTimer::timeout, this, &PromptController::onTick);
}

void PromptController::enqueue(Prompt p) {
  for (const auto& q : m_queue)
    if (q.connection == p.connection && q.ask.ask_id == p.ask.ask_id) return;  // said twice
  m_queue.push_back(std::move(p));
  emit promptArrived(m_queue.back());
  if (m_queue.size() == 1) {
    m_lastSecond = -1;
    m_tick.start();
    emit currentChanged();
    onTick();
  }
  emit queueChanged(waiting());
}

void PromptController::update(quint64 connection, uint64_t askId, uint32_t count, const std::string& summary) {
  for (size_t i = 0; i < m_queue.size(); ++i) {
    Prompt& p = m_queue[i];
    if (p.connection != connection || p.ask.ask_id != askId) continue;
    p.ask.count = count;
    if (!summary.empty()) p.ask.summary = summary;
    if (i == 0) emit countChanged();
    return;
  }
}

void PromptController::cancel(quint64 connection, uint64_t askId) {
  for (size_t i = 0; i < m_queue.size(); ++i) {
    if (m_queue[i].connection != connection || m_queue[i].ask.ask_id != askId) continue;
    if (i == 0) {
      popFront();
    } else {
      m_queue.erase(m_queue.begin() + static_cast<ptrdiff_t>(i));
      emit queueChanged(waiting());
    }
    return;
  }
}

void PromptController::dropConnection(quint64 connection) {
  bool front = !m_queue.empty() && m_queue.front().connection == connection;
  std::erase_if(m_queue, [&](const Prompt& p) { return p.connection == connection; });
  if (front) {
    m_lastSecond = -1;
    if (m_queue.empty()) m_tick.stop();
    emit currentChanged();
  }
  emit queueChanged(waiting());
}

void PromptController::popFront() {
  m_queue.pop_front();
  m_lastSecond = -1;
  if (m_queue.empty()) m_tick.stop();
  emit currentChanged();
  emit queueChanged(waiting());
  if (!m_queue.empty()) onTick();
}

qint64 PromptController::msLeft() const {
  if (m_queue.empty()) return 0;
  return std::max<int64_t>(0, (m_queue.front().ask.deadline_ns - m_now()) / 1000000);
}

int PromptController::secondsLeft() const { return static_cast<int>((msLeft() + 999) / 1000); }

qint64 PromptController::totalMs() const {
  if (m_queue.empty()) return 0;
  const auto& a = m_queue.front().ask;
  return std::max<int64_t>(1, (a.deadline_ns - a.asked_ns) / 1000000);
}

void PromptController::onTick() {
  // Prompts waiting behind the current one can run out too: the supervisor
  // has denied them by then, and they must not show up afterwards.
  int64_t now = m_now();
  for (size_t i = 1; i < m_queue.size();) {
    if (m_queue[i].ask.deadline_ns && m_queue[i].ask.deadline_ns <= now) {
      Prompt p = m_queue[i];
      m_queue.erase(m_queue.begin() + static_cast<ptrdiff_t>(i));
      emit answered(p, proto::Answer{p.ask.ask_id, false, proto::Scope::Once, {}, {}, true});
      emit queueChanged(waiting());
    } else {
      ++i;
    }
  }
  if (m_queue.empty()) return;
  if (m_queue.front().ask.deadline_ns && msLeft() <= 0) {
    answer(proto::Answer{m_queue.front().ask.ask_id, false, proto::Scope::Once, {}, {}, true});
    return;
  }
  int s = secondsLeft();
  if (s != m_lastSecond) {
    m_lastSecond = s;
    emit tick(s);
  }
}

void PromptController::answer(proto::Answer a) {
  if (m_queue.empty()) return;
  Prompt p = m_queue.front();
  a.ask_id = p.ask.ask_id;
  emit answered(p, a);
  popFront();
}

void PromptController::allowOnce() { answer({0, true, proto::Scope::Once, {}, {}, false}); }
void PromptController::denyOnce() { answer({0, false, proto::Scope::Once, {}, {}, false}); }
void PromptController::allowTree() { answer({0, true, proto::Scope::Tree, {}, {}, false}); }
void PromptController::denyTree() { answer({0, false, proto::Scope::Tree, {}, {}, false}); }

QString PromptController::proposedRule(bool allow) const {
  if (m_queue.empty()) return QString();
  const Prompt& p = m_queue.front();
  RuleContext ctx;
  ctx.sessionLabel = p.sessionLabel;
  ctx.cwd = p.cwd;
  QFile f(m_rulesFile);
  if (f.open(QIODevice::ReadOnly)) ctx.existingText = QString::fromUtf8(f.readAll());
  return proposeRule(p.ask, allow, ctx);
}

PromptKey PromptController::currentKey() const {
  return m_queue.empty() ? PromptKey{} : PromptKey{m_queue.front().connection, m_queue.front().ask.ask_id};
}

bool PromptController::answerAlways(bool allow, const QString& ruleYaml, QString* error,
                                    std::optional<PromptKey> expected) {
  if (m_queue.empty() || (expected && !(currentKey() == *expected))) {
    if (error)
      *error =
          tr("The prompt ended before the rule was saved (it timed out or its process is gone); nothing was written.");
    return false;
  }
  const Prompt& p = m_queue.front();
  std::map<std::string, std::string> vars{{"CWD", p.cwd}, {"HOME", envOr("HOME", "/")}, {"USER", envOr("USER", "")}};
  if (!appendRule(m_rulesFile, ruleYaml, vars, error)) return false;
  answer({0, allow, proto::Scope::Always, bytes(ruleYaml), {}, false});
  return true;
}

}  // namespace cb::gui
