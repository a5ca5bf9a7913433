#include "policy/netaddr.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace cb {
namespace {

constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Exactly four decimal parts of 0..255; "010" is refused because some
// libraries read it as octal (8) and others as decimal (10).
std::optional<IpAddr> parse_v4(std::string_view s) {
  uint8_t out[4];
  size_t part = 0, i = 0;
  while (part < 4) {
    size_t start = i;
    unsigned v = 0;
    while (i < s.size() && is_digit(s[i]) && i - start < 4) v = v * 10 + static_cast<unsigned>(s[i++] - '0');
    size_t len = i - start;
    if (len == 0 || len > 3 || v > 255 || (len > 1 && s[start] == '0')) return std::nullopt;
    out[part++] = static_cast<uint8_t>(v);
    if (part < 4) {
      if (i >= s.size() || s[i] != '.') return std::nullopt;
      ++i;
    }
  }
  if (i != s.size()) return std::nullopt;
  return IpAddr::v4(out);
}

std::optional<IpAddr> parse_v6(std::string_view s) {
  if (s.size() >= INET6_ADDRSTRLEN || s.find('%') != std::string_view::npos) return std::nullopt;
  char buf[INET6_ADDRSTRLEN];
  memcpy(buf, s.data(), s.size());
  buf[s.size()] = 0;
  uint8_t b[16];
  if (inet_pton(AF_INET6, buf, b) != 1) return std::nullopt;
  return IpAddr::v6(b);
}

// Splits a name into labels, keeping "\." inside a label (the presentation
// form of a dot that is part of a label).
std::vector<std::string_view> split_labels(std::string_view name) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '\\') {
      ++i;
      continue;
    }
    if (name[i] == '.') {
      out.push_back(name.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < name.size()) out.push_back(name.substr(start));
  return out;
}

// '*' matches any run of characters within the label.
bool match_label(std::string_view pat, std::string_view s) {
  size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
  while (i < s.size()) {
    if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = i;
    } else if (p < pat.size() && pat[p] == s[i]) {
      ++p, ++i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

struct ServiceName {
  std::string_view name;
  uint16_t port;
};
constexpr ServiceName kServices[] = {{"http", 80},   {"https", 443}, {"ssh", 22},        {"dns", 53},
                                     {"domain", 53}, {"git", 9418},  {"ftp", 21},        {"smtp", 25},
                                     {"imap", 143},  {"imaps", 993}, {"postgres", 5432}, {"mysql", 3306}};

bool fail(NetParseError* err, size_t offset, std::string message) {
  if (err) *err = NetParseError{offset, std::move(message)};
  return false;
}

std::optional<Cidr> parse_cidr(std::string_view text, NetParseError* err) {
  std::string_view addr = text, len;
  size_t slash = text.find('/');
  if (slash != std::string_view::npos) {
    addr = text.substr(0, slash);
    len = text.substr(slash + 1);
  }
  size_t addr_off = 0;
  if (addr.starts_with("[")) {
    if (!addr.ends_with("]")) {
      fail(err, 0, "'[' without a closing ']' in '" + std::string(text) + "'");
      return std::nullopt;
    }
    addr = addr.substr(1, addr.size() - 2);
    addr_off = 1;
  }
  std::optional<IpAddr> a = parse_v4(addr);
  if (!a && addr.find(':') != std::string_view::npos) a = parse_v6(addr);
  if (!a) {
    bool dotted =
        !addr.empty() && std::all_of(addr.begin(), addr.end(), [](char c) { return is_digit(c) || c == '.'; });
    fail(err, addr_off,
         "'" + std::string(addr) + "' is not an IP address" +
             (dotted ? " (an IPv4 address is four numbers 0-255 without leading zeros, e.g. 10.0.0.1)" : ""));
    return std::nullopt;
  }
  // A mapped block names IPv4 hosts: keep it in IPv4 terms like the address.
  int max = a->family == 4 ? 32 : 128;
  bool was_mapped = a->family == 4 && addr.find(':') != std::string_view::npos;
  Cidr c;
  c.net = *a;
  c.prefix = static_cast<uint8_t>(max);
  if (slash != std::string_view::npos) {
    size_t off = slash + 1;
    if (len.empty() || len.size() > 3 || !std::all_of(len.begin(), len.end(), is_digit)) {
      fail(err, off, "the prefix length after '/' must be a number");
      return std::nullopt;
    }
    int n = std::stoi(std::string(len));
    int written_max = was_mapped ? 128 : max;
    if (n > written_max) {
      fail(err, off, "prefix length " + std::to_string(n) + " is longer than " + std::to_string(written_max));
      return std::nullopt;
    }
    if (was_mapped) {
      if (n < 96) {
        fail(err, off,
             "a block of IPv4-mapped addresses needs a prefix of at least 96 (" + std::to_string(n) +
                 " reaches beyond ::ffff:0:0/96); write the IPv4 block instead");
        return std::nullopt;
      }
      n -= 96;
    }
    c.prefix = static_cast<uint8_t>(n);
  }
  Cidr masked = c;
  for (size_t i = 0; i < masked.net.size(); ++i) {
    int bits = static_cast<int>(c.prefix) - static_cast<int>(i) * 8;
    uint8_t keep = bits >= 8 ? 0xff : bits <= 0 ? 0 : static_cast<uint8_t>(0xff << (8 - bits));
    masked.net.b[i] &= keep;
  }
  if (!(masked.net == c.net)) {
    fail(err, 0, "'" + std::string(text) + "' has bits set past the prefix; did you mean " + masked.text() + "?");
    return std::nullopt;
  }
  return c;
}

}  // namespace

IpAddr IpAddr::v4(const uint8_t bytes[4]) {
  IpAddr a;
  a.family = 4;
  memcpy(a.b.data(), bytes, 4);
  return a;
}

IpAddr IpAddr::v6(const uint8_t bytes[16]) {
  if (memcmp(bytes, kMapped, sizeof kMapped) == 0) return v4(bytes + 12);
  IpAddr a;
  a.family = 6;
  memcpy(a.b.data(), bytes, 16);
  return a;
}

std::optional<IpAddr> IpAddr::parse(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  if (auto a = parse_v4(text)) return a;
  if (text.find(':') != std::string_view::npos) return parse_v6(text);
  return std::nullopt;
}

std::string IpAddr::text() const {
  char buf[INET6_ADDRSTRLEN] = "";
  if (family == 4) inet_ntop(AF_INET, b.data(), buf, sizeof buf);
  if (family == 6) inet_ntop(AF_INET6, b.data(), buf, sizeof buf);
  return buf;
}

bool IpAddr::loopback() const {
  if (family == 4) return b[0] == 127;
  if (family == 6) {
    static constexpr uint8_t kOne[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return memcmp(b.data(), kOne, 16) == 0;
  }
  return false;
}

bool Cidr::contains(const IpAddr& a) const {
  if (a.family != net.family || a.family == 0) return false;
  int bits = prefix;
  for (size_t i = 0; bits > 0; ++i, bits -= 8) {
    uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((a.b[i] & mask) != net.b[i]) return false;
  }
  return true;
}

std::string Cidr::text() const {
  int max = net.family == 4 ? 32 : 128;
  if (prefix == max) return net.text();
  return net.text() + "/" + std::to_string(prefix);
}

std::string PortRange::text() const {
  if (lo == hi) return std::to_string(lo);
  return std::to_string(lo) + "-" + std::to_string(hi);
}

std::string normalize_host_name(std::string_view name) {
  std::string out(name);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  // A final unescaped '.' (the root) is the same name.
  if (out.size() > 1 && out.back() == '.' && out[out.size() - 2] != '\\') out.pop_back();
  return out;
}

bool HostPattern::match_name(std::string_view name) const {
  if (kind != Kind::Name || name.empty()) return false;
  if (name.find('\\') == std::string_view::npos) {
    // The usual name: labels from the right, nothing allocated (decide()
    // runs this for every name of every connection a host rule meets).
    size_t end = name.size();
    for (size_t i = labels.size(); i-- > 0;) {
      if (end == 0) return false;  // fewer labels than the pattern
      size_t dot = name.rfind('.', end - 1);
      size_t start = dot == std::string_view::npos ? 0 : dot + 1;
      if (!match_label(labels[i], name.substr(start, end - start))) return false;
      end = dot == std::string_view::npos ? 0 : dot;
    }
    // What is left: nothing for an exact pattern, one label or more for "*.".
    return any_subdomain ? end > 0 : end == 0 && (labels.empty() || name.find('.') != 0);
  }
  auto have = split_labels(name);
  if (any_subdomain ? have.size() <= labels.size() : have.size() != labels.size()) return false;
  size_t skip = have.size() - labels.size();
  for (size_t i = 0; i < labels.size(); ++i)
    if (!match_label(labels[i], have[skip + i])) return false;
  return true;
}

std::optional<HostPattern> parse_host_pattern(std::string_view text, NetParseError* err) {
  if (text.empty()) {
    fail(err, 0, "empty host; write a name (example.com, *.example.com) or an address (10.0.0.0/8)");
    return std::nullopt;
  }
  if (text.starts_with("[") && text.find("]:") != std::string_view::npos) {
    size_t at = text.find("]:") + 1;
    fail(err, at,
         "'" + std::string(text) +
             "' holds a port; write the host alone and the port in 'port: " + std::string(text.substr(at + 1)) + "'");
    return std::nullopt;
  }
  bool numeric = std::all_of(text.begin(), text.end(), [](char c) { return is_digit(c) || c == '.' || c == '/'; });
  size_t colon = text.find(':');
  if (colon != std::string_view::npos && text.find(':', colon + 1) == std::string_view::npos && colon > 0 &&
      text.find('/') == std::string_view::npos) {
    // "example.com:443" or "10.0.0.1:443": a port written into the host.
    fail(err, colon,
         "'" + std::string(text) + "' holds a port; write the host alone and the port in 'port: " +
             std::string(text.substr(colon + 1)) + "'");
    return std::nullopt;
  }
  std::string_view before_slash = text.substr(0, text.find('/'));
  bool numeric_block =
      text.find('/') != std::string_view::npos && !before_slash.empty() &&
      std::all_of(before_slash.begin(), before_slash.end(), [](char c) { return is_digit(c) || c == '.'; });
  if (numeric || numeric_block || colon != std::string_view::npos || text.starts_with("[")) {
    auto c = parse_cidr(text, err);
    if (!c) return std::nullopt;
    HostPattern p;
    p.kind = HostPattern::Kind::Address;
    p.cidr = *c;
    p.text = c->text();
    return p;
  }
  HostPattern p;
  std::string name = normalize_host_name(text);
  if (name == "*") {
    p.any_subdomain = true;
    p.text = name;
    return p;
  }
  if (name.starts_with("*.")) {
    p.any_subdomain = true;
    name.erase(0, 2);
  }
  size_t base = p.any_subdomain ? 2 : 0;
  if (name.size() > 253) {
    fail(err, 0, "host name longer than 253 characters");
    return std::nullopt;
  }
  size_t start = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i < name.size() && name[i] != '.') {
      char c = name[i];
      bool ok = (c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '_' || c == '*';
      if (!ok) {
        std::string what = static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f
                               ? "a byte outside printable ASCII"
                               : std::string("'") + c + "'";
        fail(err, base + i,
             what +
                 " cannot appear in a host name (letters, digits, '-', '_' and '*'; write an "
                 "internationalized name in its xn-- form)");
        return std::nullopt;
      }
      continue;
    }
    std::string label = name.substr(start, i - start);
    if (label.empty()) {
      fail(err, base + i, "empty label in host name '" + std::string(text) + "' ('..' or a leading '.')");
      return std::nullopt;
    }
    if (label.size() > 63) {
      fail(err, base + start, "a label of a host name has at most 63 characters");
      return std::nullopt;
    }
    if (label.find("**") != std::string::npos) {
      fail(err, base + start + label.find("**"),
           "'**' is not a host pattern; a leading '*.' already matches any number of labels");
      return std::nullopt;
    }
    p.labels.push_back(std::move(label));
    start = i + 1;
  }
  p.text = p.any_subdomain ? "*." + name : name;
  return p;
}

std::optional<PortRange> parse_port_range(std::string_view text, NetParseError* err) {
  if (text.empty()) {
    fail(err, 0, "empty port; write a number (443) or a range (8000-8999)");
    return std::nullopt;
  }
  if (text == "*" || text == "any") {
    fail(err, 0, "leave 'port' out to match any port");
    return std::nullopt;
  }
  for (const auto& s : kServices) {
    if (s.name == text) {
      fail(err, 0, "'" + std::string(text) + "' is not a port number; did you mean " + std::to_string(s.port) + "?");
      return std::nullopt;
    }
  }
  auto number = [&](std::string_view s, size_t off) -> std::optional<uint16_t> {
    if (s.empty() || !std::all_of(s.begin(), s.end(), is_digit)) {
      fail(err, off, "'" + std::string(text) + "' is not a port; write a number (443) or a range (8000-8999)");
      return std::nullopt;
    }
    if (s.size() > 5 || std::stoi(std::string(s)) > 65535) {
      fail(err, off, "port " + std::string(s) + " is larger than 65535");
      return std::nullopt;
    }
    return static_cast<uint16_t>(std::stoi(std::string(s)));
  };
  size_t dash = text.find('-');
  auto lo = number(text.substr(0, dash), 0);
  if (!lo) return std::nullopt;
  PortRange r{*lo, *lo};
  if (dash != std::string_view::npos) {
    auto hi = number(text.substr(dash + 1), dash + 1);
    if (!hi) return std::nullopt;
    if (*hi < *lo) {
      fail(err, dash + 1, "the range " + std::string(text) + " ends before it starts");
      return std::nullopt;
    }
    r.hi = *hi;
  }
  return r;
}

}  // namespace cb
