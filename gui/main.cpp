// cottonbox-gui: live sessions, prompts and forensic review.  Wiring only.
#include <QApplication>
#include <QCommandLineParser>

#include "db/store.h"
#include "gui/guiserver.h"
#include "gui/mainwindow.h"
#include "gui/promptcontroller.h"
#include "gui/sessionhub.h"
#include "gui/text.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("cottonbox-gui"));
  QApplication::setApplicationVersion(cb::gui::qs(cb::proto::software_version()));
  QApplication::setQuitOnLastWindowClosed(false);
  cb::gui::applyStyle();

  QCommandLineParser cli;
  cli.setApplicationDescription(
      QApplication::tr("Watch cottonbox sessions live, answer their prompts, review audit databases."));
  cli.addHelpOption();
  cli.addVersionOption();
  QCommandLineOption dbOpt(QStringLiteral("db"),
                           QApplication::tr("The audit database to review (default: the one `cottonbox run` uses)."),
                           QStringLiteral("FILE"));
  QCommandLineOption socketOpt(QStringLiteral("socket"),
                               QApplication::tr("Listen here instead of $XDG_RUNTIME_DIR/cottonbox/gui.sock."),
                               QStringLiteral("PATH"));
  QCommandLineOption noListen(QStringLiteral("no-listen"),
                              QApplication::tr("Review only: no live sessions, no prompts."));
  cli.addOptions({dbOpt, socketOpt, noListen});
  cli.process(app);

  cb::gui::GuiServer server;
  cb::gui::PromptController prompts;
  cb::gui::SessionHub hub(&server, &prompts);
  if (!cli.isSet(noListen) && !server.listen(cli.value(socketOpt)))
    qWarning().noquote() << "cottonbox-gui: not listening:" << server.errorString();

  cb::gui::MainWindow window(&server, &hub, &prompts);
  window.openDatabase(cli.isSet(dbOpt) ? cli.value(dbOpt) : cb::gui::qs(cb::db::default_db_path()));
  window.show();
  return app.exec();
}
