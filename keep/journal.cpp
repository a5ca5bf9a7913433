#include "keep/journal.h"

#include <array>
#include <charconv>
#include <cstdio>

namespace cb::keep {
namespace {

constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kCrcTable = make_crc_table();

constexpr char kHex[] = "0123456789ABCDEF";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Builds one line: the kind, then key=value fields, then the CRC.
class Line {
 public:
  explicit Line(char kind) { s_ += kind; }
  Line& raw(std::string_view key, std::string_view encoded) {
    s_ += '\t';
    s_ += key;
    s_ += '=';
    s_ += encoded;
    return *this;
  }
  Line& str(std::string_view key, std::string_view v) { return raw(key, escape(v)); }
  Line& num(std::string_view key, uint64_t v) { return raw(key, std::to_string(v)); }
  Line& snum(std::string_view key, int64_t v) { return raw(key, std::to_string(v)); }
  Line& oct(std::string_view key, uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "%o", v);
    return raw(key, b);
  }
  Line& time(std::string_view key, Timespec t) {
    char b[48];
    std::snprintf(b, sizeof b, "%lld.%09lld", static_cast<long long>(t.sec), static_cast<long long>(t.nsec));
    return raw(key, b);
  }
  std::string finish() {
    char b[16];
    std::snprintf(b, sizeof b, "%08x", crc32(s_));
    s_ += "\tcrc=";
    s_ += b;
    s_ += '\n';
    return std::move(s_);
  }

 private:
  std::string s_;
};

void fingerprint_fields(Line& l, const Fingerprint& f) {
  l.num("known", f.known ? 1 : 0)
      .str("type", file_type_name(f.type))
      .oct("mode", f.mode)
      .num("uid", f.uid)
      .num("gid", f.gid)
      .num("size", f.size)
      .time("mtime", f.mtime)
      .num("dev", f.dev)
      .num("ino", f.ino)
      .str("sha", f.sha256)
      .str("target", f.target);
}

std::string encode_xattrs(const std::vector<Xattr>& xs) {
  std::string out;
  for (const Xattr& x : xs) {
    if (!out.empty()) out += ',';
    out += escape(x.name, ",=");
    out += '=';
    out += escape(x.value, ",=");
  }
  return out;
}

// ---------------------------------------------------------------- parsing --

struct Fields {
  char kind = 0;
  std::map<std::string, std::string, std::less<>> kv;  // values still escaped

  const std::string* get(std::string_view k) const {
    auto it = kv.find(k);
    return it == kv.end() ? nullptr : &it->second;
  }
};

bool split_line(std::string_view line, Fields& out) {
  // The CRC covers everything before "\tcrc=".
  size_t c = line.rfind("\tcrc=");
  if (c == std::string_view::npos || line.size() - c != 5 + 8) return false;
  uint32_t want = 0;
  auto crc_text = line.substr(c + 5);
  if (std::from_chars(crc_text.data(), crc_text.data() + crc_text.size(), want, 16).ec != std::errc()) return false;
  std::string_view body = line.substr(0, c);
  if (crc32(body) != want || body.empty()) return false;
  out.kind = body[0];
  size_t pos = 1;
  while (pos < body.size()) {
    if (body[pos] != '\t') return false;
    size_t end = body.find('\t', pos + 1);
    if (end == std::string_view::npos) end = body.size();
    std::string_view field = body.substr(pos + 1, end - pos - 1);
    size_t eq = field.find('=');
    if (eq == std::string_view::npos) return false;
    out.kv.emplace(std::string(field.substr(0, eq)), std::string(field.substr(eq + 1)));
    pos = end;
  }
  return true;
}

template <typename T>
bool parse_int(const std::string* s, T& out, int base = 10) {
  if (!s) return false;
  auto r = std::from_chars(s->data(), s->data() + s->size(), out, base);
  return r.ec == std::errc() && r.ptr == s->data() + s->size();
}

bool parse_time(const std::string* s, Timespec& t) {
  if (!s) return false;
  size_t dot = s->find('.');
  if (dot == std::string::npos) return false;
  std::string sec = s->substr(0, dot), nsec = s->substr(dot + 1);
  return parse_int(&sec, t.sec) && parse_int(&nsec, t.nsec);
}

bool parse_str(const std::string* s, std::string& out) { return s && unescape(*s, out); }

bool parse_xattrs(const std::string* s, std::vector<Xattr>& out) {
  if (!s) return false;
  std::string_view rest = *s;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) return false;
    Xattr x;
    if (!unescape(item.substr(0, eq), x.name) || !unescape(item.substr(eq + 1), x.value)) return false;
    out.push_back(std::move(x));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return true;
}

bool parse_fingerprint(const Fields& f, Fingerprint& fp) {
  int known = 0;
  std::string type;
  if (!parse_int(f.get("known"), known) || !parse_str(f.get("type"), type)) return false;
  auto t = file_type_from(type);
  if (!t) return false;
  fp.known = known != 0;
  fp.type = *t;
  return parse_int(f.get("mode"), fp.mode, 8) && parse_int(f.get("uid"), fp.uid) && parse_int(f.get("gid"), fp.gid) &&
         parse_int(f.get("size"), fp.size) && parse_time(f.get("mtime"), fp.mtime) && parse_int(f.get("dev"), fp.dev) &&
         parse_int(f.get("ino"), fp.ino) && parse_str(f.get("sha"), fp.sha256) && parse_str(f.get("target"), fp.target);
}

bool parse_snapshot(const Fields& f, Snapshot& s) {
  std::string op, type, kept;
  if (!parse_str(f.get("op"), op) || !parse_str(f.get("type"), type) || !parse_str(f.get("kept"), kept)) return false;
  auto o = op_from(op);
  auto t = file_type_from(type);
  auto k = kept_from(kept);
  if (!o || !t || !k) return false;
  s.op = *o;
  s.type = *t;
  s.kept = *k;
  return parse_int(f.get("seq"), s.seq) && parse_int(f.get("ts"), s.ts_ns) && parse_int(f.get("cmd"), s.command) &&
         parse_int(f.get("proc"), s.proc) && parse_int(f.get("event"), s.event) && parse_str(f.get("path"), s.path) &&
         parse_int(f.get("mode"), s.mode, 8) && parse_int(f.get("uid"), s.uid) && parse_int(f.get("gid"), s.gid) &&
         parse_int(f.get("size"), s.size) && parse_time(f.get("atime"), s.atime) &&
         parse_time(f.get("mtime"), s.mtime) && parse_int(f.get("dev"), s.dev) && parse_int(f.get("ino"), s.ino) &&
         parse_int(f.get("nlink"), s.nlink) && parse_xattrs(f.get("xattrs"), s.xattrs) &&
         parse_str(f.get("target"), s.target) && parse_str(f.get("object"), s.object) &&
         parse_str(f.get("sha"), s.sha256) && parse_str(f.get("reason"), s.reason);
}

}  // namespace

uint32_t crc32(std::string_view data) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = kCrcTable[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string escape(std::string_view s, std::string_view also) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7F || c == '%' || also.find(static_cast<char>(c)) != std::string_view::npos) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

bool unescape(std::string_view s, std::string& out) {
  out.clear();
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return false;
    int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi << 4 | lo);
    i += 2;
  }
  return true;
}

std::string encode_header(std::string_view session) {
  return Line('J').num("format", kJournalFormat).str("session", session).finish();
}

std::string encode_snapshot(const Snapshot& s) {
  return Line('K')
      .num("seq", s.seq)
      .snum("ts", s.ts_ns)
      .num("cmd", s.command)
      .num("proc", s.proc)
      .num("event", s.event)
      .str("op", op_name(s.op))
      .str("path", s.path)
      .str("type", file_type_name(s.type))
      .oct("mode", s.mode)
      .num("uid", s.uid)
      .num("gid", s.gid)
      .num("size", s.size)
      .time("atime", s.atime)
      .time("mtime", s.mtime)
      .num("dev", s.dev)
      .num("ino", s.ino)
      .num("nlink", s.nlink)
      .raw("xattrs", encode_xattrs(s.xattrs))
      .str("target", s.target)
      .str("kept", kept_name(s.kept))
      .str("object", s.object)
      .str("sha", s.sha256)
      .str("reason", s.reason)
      .finish();
}

std::string encode_settled(std::string_view staged, std::string_view sha256) {
  return Line('H').str("staged", staged).str("sha", sha256).finish();
}

std::string encode_left(const Left& l) {
  Line line('L');
  line.str("path", l.path);
  fingerprint_fields(line, l.fp);
  return line.finish();
}

Parsed parse_journal(std::string_view text) {
  Parsed p;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      p.torn_tail = true;
      break;
    }
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    if (line.empty()) continue;  // the newline that ends a torn line when the journal is reopened
    Fields f;
    bool ok = split_line(line, f);
    if (ok) {
      switch (f.kind) {
        case 'J': ok = parse_str(f.get("session"), p.session); break;
        case 'K': {
          Snapshot s;
          ok = parse_snapshot(f, s);
          if (ok) p.snapshots.push_back(std::move(s));
          break;
        }
        case 'H': {
          std::string staged, sha;
          ok = parse_str(f.get("staged"), staged) && parse_str(f.get("sha"), sha) && sha.size() == 64;
          if (ok) p.settled[staged] = sha;
          break;
        }
        case 'L': {
          Left l;
          ok = parse_str(f.get("path"), l.path) && parse_fingerprint(f, l.fp);
          if (ok) p.left.push_back(std::move(l));
          break;
        }
        default: ok = false;
      }
    }
    if (!ok) ++p.damaged;
  }
  for (Snapshot& s : p.snapshots) {
    if (s.object.size() > 2 && s.object.compare(0, 2, "s:") == 0) {
      auto it = p.settled.find(s.object.substr(2));
      if (it != p.settled.end()) {
        s.object = "o:" + it->second;
        s.sha256 = it->second;
      }
    }
  }
  return p;
}

}  // namespace cb::keep
