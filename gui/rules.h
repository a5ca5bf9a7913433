// "Always" answers become rules in the user's rules file, which the next
// `cottonbox run` loads before the shipped defaults.  The rule is proposed
// as text, shown and editable before anything is written, and the file is
// only replaced (atomically) when the result still loads.
#pragma once

#include <QDateTime>
#include <QString>
#include <map>
#include <string>

#include "proto/protocol.h"

namespace cb::gui {

// $XDG_CONFIG_HOME/cottonbox/rules.yaml (~/.config/...): the same file as
// cottonbox's user_rules_path().
QString userRulesPath();

struct RuleContext {
  QString sessionLabel;  // for the comment: who asked, where
  std::string cwd;       // the session's
  QString existingText;  // the rules file as it is (ids must be fresh)
  QDateTime now = QDateTime::currentDateTime();
};

// One entry of the `rules:` list, indented by two spaces:
//   - id: gui-allow-file-delete-20261129-215233
//     action: file.delete
//     path: ["/home/u/proj/build/**"]      (the exact path, or dir/** when folded)
//     process: ["tar"]
//     decision: allow
QString proposeRule(const proto::AskMsg& ask, bool allow, const RuleContext& ctx);

// The file with `ruleYaml` added to its rules list (creating `version: 1`
// and `rules:` when missing), re-indented to match the entries there.
QString withRule(const QString& existingText, const QString& ruleYaml);

// Checks, then atomically writes `path` with the rule added.  `vars` are
// the ${VARS} the loader knows (CWD, HOME, USER).  On failure nothing is
// written and `error` says why (the loader's file:line:col diagnostics).
bool appendRule(const QString& path, const QString& ruleYaml, const std::map<std::string, std::string>& vars,
                QString* error);

// A path as a glob that matches exactly it (wildcards escaped; bytes YAML
// cannot carry become '?').
std::string exactGlob(std::string_view path);
// A YAML double-quoted scalar.
QString yamlQuote(std::string_view text);

}  // namespace cb::gui
