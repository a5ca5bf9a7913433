// How records look on screen: one place for words, colors and fonts, so the
// live table, the forensic review and the prompt say the same thing the
// same way.
#pragma once

#include <QColor>
#include <QFont>
#include <QString>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "db/store.h"

namespace cb::gui {

// UTF-8 bytes as text; invalid bytes become U+FFFD.
QString qs(std::string_view bytes);
std::string bytes(const QString& s);
// Bytes from a supervised process made safe to show on one line: control and
// bidi characters escaped (a file name cannot forge a row or reverse text).
QString safe(std::string_view bytes);
// argv as a shell would read it back, made safe.
QString commandLine(const std::vector<std::string>& argv);
// `path` relative to `cwd` when below it ("build/x.o"), else as is; made safe.
QString shortPath(std::string_view path, std::string_view cwd);

QString timeOfDay(int64_t ns);  // "21:52:33.120", local time
QString dateTime(int64_t ns);   // "2026-11-29 21:52:33", local time
QString duration(int64_t ns);   // "4 min 12 s"
QString count(uint64_t n);      // "12,345"
// "1 denial", "12,345 denials": English plurals without a translator.
QString counted(uint64_t n, const char* one, const char* many);

// What happened to an event, in one or two words: "denied", "allowed",
// "asked → denied", "would deny" (observe), "logged".
QString decisionText(const EventRow& r);
QString exitText(int status, int signal);  // "0", "1", "killed by SIGKILL"

enum class Tone { Neutral, Deny, Ask, Log, Good };
Tone toneOf(const EventRow& r);
QColor toneBackground(Tone t);  // row tint; invalid for neutral
QColor toneForeground(Tone t);  // text accent

QFont monospaceFont();
// The application's calm palette and spacing (Fusion with a light palette).
void applyStyle();

}  // namespace cb::gui
