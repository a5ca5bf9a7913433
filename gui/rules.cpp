#include "gui/rules.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStringList>

#include "audit/rule_text.h"
#include "db/bytes.h"
#include "gui/text.h"
#include "policy/glob.h"
#include "policy/identity.h"
#include "policy/policy.h"

namespace cb::gui {
namespace {

std::string dirnameOf(std::string_view p) {
  size_t slash = p.rfind('/');
  if (slash == std::string_view::npos) return ".";
  return slash == 0 ? "/" : std::string(p.substr(0, slash));
}

QString homeDir() {
  if (const char* h = getenv("HOME"); h && *h) return QString::fromLocal8Bit(h);
  if (passwd* pw = getpwuid(getuid())) return QString::fromLocal8Bit(pw->pw_dir);
  return QStringLiteral("/");
}

QString loadErrors(const LoadResult& r) {
  QStringList lines;
  for (const auto& d : r.errors) lines << qs(format_diagnostic(d));
  return lines.join(QLatin1Char('\n'));
}

// The indentation of the entries under `rules:` (two spaces if none yet).
QString entryIndent(const QStringList& lines, int rulesLine) {
  static const QRegularExpression entry(QStringLiteral("^(\\s*)- "));
  for (int i = rulesLine + 1; i < lines.size(); ++i) {
    auto m = entry.match(lines[i]);
    if (m.hasMatch()) return m.captured(1);
    if (!lines[i].isEmpty() && !lines[i].front().isSpace() && !lines[i].startsWith(QLatin1Char('#'))) break;
  }
  return QStringLiteral("  ");
}

// The name a rule's `process:` can give this process by.  A rule matches
// identities (policy/identity.h), not the command name a process chose: the
// identity it already has, or else its executable's name when looking that
// name up in the system's directories finds this very file.  Empty when no
// name would mean this program.
std::string identityName(const ProcessInfo& p) {
  if (!p.names.empty()) return p.names.front();
  if (p.exe.empty() || p.exe.front() != '/') return {};
  std::string base = p.exe.substr(p.exe.rfind('/') + 1);
  struct stat exe {};
  if (base.empty() || stat(p.exe.c_str(), &exe) != 0) return {};
  std::string_view dirs = kSystemPath;
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string candidate = std::string(dirs.substr(0, colon)) + "/" + base;
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    struct stat st {};
    if (stat(candidate.c_str(), &st) != 0) continue;
    return st.st_dev == exe.st_dev && st.st_ino == exe.st_ino ? base : std::string{};
  }
  return {};
}

}  // namespace

QString userRulesPath() {
  QString config = QString::fromLocal8Bit(qgetenv("XDG_CONFIG_HOME"));
  if (config.isEmpty()) config = homeDir() + QStringLiteral("/.config");
  return config + QStringLiteral("/cottonbox/rules.yaml");
}

// The same text `cottonbox suggest` writes its rules with.
std::string exactGlob(std::string_view path) { return audit::exact_glob(path); }

QString yamlQuote(std::string_view text) { return qs(audit::yaml_quote(text)); }

QString proposeRule(const proto::AskMsg& ask, bool allow, const RuleContext& ctx) {
  const Event& ev = ask.row.ev;
  std::string action(action_name(ev.action));
  QString base = QStringLiteral("gui-%1-%2-%3")
                     .arg(allow ? QStringLiteral("allow") : QStringLiteral("deny"),
                          qs(action).replace(QLatin1Char('.'), QLatin1Char('-')),
                          ctx.now.toString(QStringLiteral("yyyyMMdd-HHmmss")));
  QString id = base;
  for (int n = 2; ctx.existingText.contains(QStringLiteral("id: ") + id); ++n)
    id = base + QLatin1Char('-') + QString::number(n);

  // A folded ask covers a directory's worth of requests: the rule does too.
  std::string path = ask.count > 1 ? exactGlob(dirnameOf(ev.path)) + "/**" : exactGlob(ev.path);
  std::string program = ev.proc ? identityName(*ev.proc) : std::string{};
  QString cmd = !ask.chain.empty() ? commandLine(ask.chain.front().argv) : QString();

  QStringList l;
  l << QStringLiteral("  - id: %1").arg(id);
  l << QStringLiteral("    # \"Always %1\" from the cottonbox prompt, %2, session %3")
           .arg(allow ? QStringLiteral("allow") : QStringLiteral("deny"),
                ctx.now.toString(QStringLiteral("yyyy-MM-dd HH:mm")), ctx.sessionLabel);
  if (!ask.row.verdict.rule_id.empty())
    l << QStringLiteral("    # asked by rule %1 for: %2").arg(qs(ask.row.verdict.rule_id), cmd.left(100));
  else if (!cmd.isEmpty())
    l << QStringLiteral("    # asked for: %1").arg(cmd.left(100));
  l << QStringLiteral("    action: %1").arg(qs(action));
  if (action_object(ev.action) == ObjectKind::Address && ev.net.ip()) {
    // A host rule: by the name the process asked for (it then holds for the
    // addresses the session is given for that name), else by the address.
    const std::string& host = ev.net.hosts.empty() ? ev.net.addr_text : ev.net.hosts.front();
    l << QStringLiteral("    host: [%1]").arg(yamlQuote(host));
    if (ev.net.port) l << QStringLiteral("    port: [%1]").arg(ev.net.port);
  } else if (!ev.path.empty()) {
    l << QStringLiteral("    path: [%1]").arg(yamlQuote(path));
  }
  if (!program.empty())
    l << QStringLiteral("    process: [%1]").arg(yamlQuote(program));
  else if (ev.proc && !ev.proc->exe.empty())
    l << QStringLiteral("    # for any process: its program %1 is not a system program").arg(yamlQuote(ev.proc->exe));
  l << QStringLiteral("    decision: %1").arg(allow ? QStringLiteral("allow") : QStringLiteral("deny"));
  l << QStringLiteral("    message: %1")
           .arg(yamlQuote(bytes(QStringLiteral("%1 always from the cottonbox prompt on %2")
                                    .arg(allow ? QStringLiteral("Allowed") : QStringLiteral("Denied"),
                                         ctx.now.toString(QStringLiteral("yyyy-MM-dd"))))));
  return l.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QString withRule(const QString& existingText, const QString& ruleYaml) {
  QString text = existingText;
  if (text.trimmed().isEmpty()) text = QStringLiteral("version: 1\nrules:\n");
  if (!text.endsWith(QLatin1Char('\n'))) text += QLatin1Char('\n');
  QStringList lines = text.split(QLatin1Char('\n'));
  lines.removeLast();  // after the final '\n'
  static const QRegularExpression rulesKey(QStringLiteral("^rules:\\s*(#.*)?$"));
  int rulesLine = -1;
  for (int i = 0; i < lines.size(); ++i)
    if (rulesKey.match(lines[i]).hasMatch()) rulesLine = i;
  if (rulesLine < 0) {
    lines << QStringLiteral("rules:");
    rulesLine = static_cast<int>(lines.size()) - 1;
  }
  // The list ends at the next top-level key (another section after rules:).
  int insertAt = static_cast<int>(lines.size());
  for (int i = rulesLine + 1; i < lines.size(); ++i) {
    const QString& s = lines[i];
    if (!s.isEmpty() && !s.front().isSpace() && !s.startsWith(QLatin1Char('#')) && !s.startsWith(QLatin1Char('-'))) {
      insertAt = i;
      break;
    }
  }
  // Trailing blank lines and comments stay after the new rule's neighbours.
  while (insertAt > rulesLine + 1 && lines[insertAt - 1].trimmed().isEmpty()) --insertAt;

  QString indent = entryIndent(lines, rulesLine);
  QStringList rule = ruleYaml.split(QLatin1Char('\n'));
  while (!rule.isEmpty() && rule.last().trimmed().isEmpty()) rule.removeLast();
  // Proposed rules start at two spaces; the user may have typed anything.
  int minIndent = -1;
  for (const QString& r : rule) {
    if (r.trimmed().isEmpty()) continue;
    int lead = 0;
    while (lead < r.size() && r[lead] == QLatin1Char(' ')) ++lead;
    if (minIndent < 0 || lead < minIndent) minIndent = lead;
  }
  if (minIndent < 0) minIndent = 0;
  QStringList out;
  for (const QString& r : rule) out << (r.trimmed().isEmpty() ? QString() : indent + r.mid(minIndent));
  for (int i = 0; i < out.size(); ++i) lines.insert(insertAt + i, out[i]);
  return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

bool appendRule(const QString& path, const QString& ruleYaml, const std::map<std::string, std::string>& vars,
                QString* error) {
  QString existing;
  bool existed = QFileInfo::exists(path);
  if (existed) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
      if (error) *error = QObject::tr("cannot read %1: %2").arg(path, f.errorString());
      return false;
    }
    existing = QString::fromUtf8(f.readAll());
  }
  QString text = withRule(existing, ruleYaml);

  LoadOptions lo;
  lo.vars = vars;
  LoadResult r = load_policy_text({{bytes(path), bytes(text)}}, lo);
  if (!r.policy) {
    // A file that needed --vars (or was already broken) is not ours to
    // judge: then the rule alone must load, and the file must still parse
    // no worse than before.
    LoadResult before = existed ? load_policy_text({{bytes(path), bytes(existing)}}, lo) : LoadResult{};
    LoadResult alone = load_policy_text({{bytes(path), bytes(withRule(QString(), ruleYaml))}}, lo);
    if (!existed || before.policy || !alone.policy || before.errors.size() != r.errors.size()) {
      if (error) *error = loadErrors(alone.policy ? r : alone);
      return false;
    }
  }
  QDir().mkpath(QFileInfo(path).absolutePath());
  QSaveFile out(path);
  if (!out.open(QIODevice::WriteOnly)) {
    if (error) *error = QObject::tr("cannot write %1: %2").arg(path, out.errorString());
    return false;
  }
  QByteArray data = text.toUtf8();
  if (out.write(data) != data.size() || !out.commit()) {
    if (error) *error = QObject::tr("cannot write %1: %2").arg(path, out.errorString());
    return false;
  }
  return true;
}

}  // namespace cb::gui
