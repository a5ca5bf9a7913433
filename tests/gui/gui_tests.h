// The GUI's tests, run headless (QT_QPA_PLATFORM=offscreen): one binary,
// one suite per ctest entry (`test_gui models|prompt|server|e2e`).
#pragma once

#include <QObject>
#include <QString>
#include <QTemporaryDir>
#include <memory>
#include <string>

#include "db/store.h"
#include "proto/protocol.h"

namespace cb::gui::test {

// Plausible records.
std::shared_ptr<const ProcessInfo> proc(uint64_t procId, int32_t pid, const std::string& comm);
EventRow makeEvent(uint64_t seq, Action a, const std::string& path, std::shared_ptr<const ProcessInfo> p,
                   Decision verdict = Decision::Allow, bool allowed = true, const std::string& rule = {});
proto::AskMsg ask(uint64_t id, const std::string& path, int64_t deadlineFromNowMs, const std::string& rule = "ask-rule",
                  const std::string& comm = "rm");
int64_t nowNs();

class ModelsTest : public QObject {
  Q_OBJECT
 private slots:
  void eventModelStaysBoundedWithoutGhostRows();
  void eventModelInsertsInBatches();
  void eventModelPutsLateEventsInTimeOrder();
  void eventModelKeepsUpWithABurst();
  void eventFilterMatchesWhatUsersType();
  void eventFilterFollowsLiveInserts();
  void processTreeFromDatabaseAndLive();
  void sessionListMergesLiveAndStored();
  void whoTouchedModelHasChains();
  void auditDatabaseReviewAndExport();
  // hosts_test.cpp
  void hostModelReviewsWhatTheDatabaseSays();
  void hostModelFollowsLiveBatches();
  void hostsPanelAsksWhoContacted();
  // changes_test.cpp
  void lineDiffIsUnified();
  void changesModelGroupsByCommand();
  void changesControllerRestoresWithTheUndoRule();
  void changesPanelRestoresAndForcesOnlyWhenConfirmed();
};

class PromptTest : public QObject {
  Q_OBJECT
 private slots:
  void init();
  void queueIsFirstComeFirstServed();
  void eachAnswerSendsItsDecision();
  void keysAnswer();
  void buttonsAnswer();
  void timeoutDenies();
  void foldingUpdatesTheCount();
  void thePromptSaysWhyTheRuleAsks();
  void cancelAndDisconnectRemovePrompts();
  void alwaysRuleIsExactYaml();
  void alwaysWritesALoadableRule();
  void alwaysRefusesABrokenOrStaleRule();
  void alwaysDialogShowsTheRuleFirst();
  void rulesPathMatchesTheTracer();

 private:
  std::unique_ptr<QTemporaryDir> m_dir;
};

class ServerTest : public QObject {
  Q_OBJECT
 private slots:
  void init();
  void cleanup();
  void socketIsPrivate();
  void secondGuiDoesNotStealTheSocket();
  void staleSocketIsReplaced();
  void linesBecomeSessionsAndBadLinesAreSkipped();
  void otherUsersAreRefused();

 private:
  std::unique_ptr<QTemporaryDir> m_dir;
  QByteArray m_oldRuntime;
};

class EndToEndTest : public QObject {
  Q_OBJECT
 private slots:
  void init();
  void cleanup();
  void promptsAnsweredThroughTheController();
  void noGuiFallsBackAndSaysSo();

 private:
  std::unique_ptr<QTemporaryDir> m_dir;
  QByteArray m_oldRuntime;
};

}  // namespace cb::gui::test
