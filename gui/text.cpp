#include "gui/text.h"

#include <QApplication>
#include <QDateTime>
#include <QFontDatabase>
#include <QLocale>
#include <QPalette>
#include <QStyleFactory>
#include <csignal>
#include <cstring>

#include "db/report.h"

namespace cb::gui {

QString qs(std::string_view b) { return QString::fromUtf8(b.data(), static_cast<qsizetype>(b.size())); }

std::string bytes(const QString& s) { return s.toStdString(); }

QString safe(std::string_view b) { return qs(db::escape_for_terminal(b)); }

QString commandLine(const std::vector<std::string>& argv) { return qs(db::shell_join(argv)); }

QString shortPath(std::string_view path, std::string_view cwd) {
  if (!cwd.empty() && cwd != "/" && path.size() > cwd.size() + 1 && path.substr(0, cwd.size()) == cwd &&
      path[cwd.size()] == '/')
    return safe(path.substr(cwd.size() + 1));
  return safe(path);
}

QString timeOfDay(int64_t ns) {
  return QDateTime::fromMSecsSinceEpoch(ns / 1000000).toString(QStringLiteral("HH:mm:ss.zzz"));
}

QString dateTime(int64_t ns) {
  if (ns <= 0) return QString();
  return QDateTime::fromMSecsSinceEpoch(ns / 1000000).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QString duration(int64_t ns) {
  int64_t s = ns / 1000000000;
  if (s < 60) return QApplication::tr("%1 s").arg(s);
  if (s < 3600) return QApplication::tr("%1 min %2 s").arg(s / 60).arg(s % 60);
  return QApplication::tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

QString count(uint64_t n) { return QLocale(QLocale::English).toString(static_cast<qulonglong>(n)); }

QString counted(uint64_t n, const char* one, const char* many) {
  return count(n) + QLatin1Char(' ') + QApplication::tr(n == 1 ? one : many);
}

QString decisionText(const EventRow& r) {
  switch (r.verdict.decision) {
    case Decision::Ask:
      if (!r.enforced) return QApplication::tr("would ask");
      return r.allowed ? QApplication::tr("asked → allowed") : QApplication::tr("asked → denied");
    case Decision::Deny:
      if (!r.enforced) return QApplication::tr("would deny");
      return r.allowed ? QApplication::tr("allowed") : QApplication::tr("denied");
    case Decision::Log: return r.allowed ? QApplication::tr("logged") : QApplication::tr("denied");
    case Decision::Allow: return r.allowed ? QApplication::tr("allowed") : QApplication::tr("denied");
  }
  return QString();
}

QString exitText(int status, int signal) {
  if (signal > 0) {
    const char* abbrev = sigabbrev_np(signal);
    return abbrev ? QApplication::tr("killed by SIG%1").arg(QString::fromLatin1(abbrev))
                  : QApplication::tr("killed by signal %1").arg(signal);
  }
  if (status < 0) return QString();
  return QString::number(status);
}

Tone toneOf(const EventRow& r) {
  if (r.verdict.decision == Decision::Ask) return Tone::Ask;
  if (!r.allowed || r.verdict.decision == Decision::Deny) return Tone::Deny;
  if (r.verdict.decision == Decision::Log) return Tone::Log;
  return Tone::Neutral;
}

QColor toneBackground(Tone t) {
  switch (t) {
    case Tone::Deny: return QColor(0xfd, 0xec, 0xec);
    case Tone::Ask: return QColor(0xff, 0xf3, 0xd6);
    case Tone::Good: return QColor(0xe6, 0xf4, 0xea);
    case Tone::Log:
    case Tone::Neutral: break;
  }
  return QColor();
}

QColor toneForeground(Tone t) {
  switch (t) {
    case Tone::Deny: return QColor(0xb4, 0x23, 0x18);
    case Tone::Ask: return QColor(0x8a, 0x5a, 0x00);
    case Tone::Log: return QColor(0x57, 0x60, 0x6a);
    case Tone::Good: return QColor(0x1a, 0x7f, 0x37);
    case Tone::Neutral: break;
  }
  return QColor(0x1f, 0x23, 0x28);
}

QFont monospaceFont() {
  // Asked for on every painted path cell: built once.
  static const QFont f = [] {
    QFont m = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    m.setStyleHint(QFont::TypeWriter);
    m.setPointSizeF(QApplication::font().pointSizeF() * 0.95);
    return m;
  }();
  return f;
}

void applyStyle() {
  QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  QPalette p;
  const QColor window(0xf6, 0xf7, 0xf9), base(0xff, 0xff, 0xff), text(0x1f, 0x23, 0x28);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0xf8, 0xf9, 0xfb));
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, QColor(0xf0, 0xf2, 0xf5));
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xd6));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::ToolTipBase, base);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, QColor(0x8c, 0x95, 0x9f));
  p.setColor(QPalette::Mid, QColor(0xd0, 0xd7, 0xde));
  p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x8c, 0x95, 0x9f));
  p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x8c, 0x95, 0x9f));
  QApplication::setPalette(p);
  QFont f = QApplication::font();
  if (f.pointSizeF() < 10) f.setPointSizeF(10);
  QApplication::setFont(f);
}

}  // namespace cb::gui
