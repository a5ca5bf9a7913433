#include "net/dns_wire.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

namespace cb::net {
namespace {

constexpr size_t kMaxLabel = 63;

bool printable(uint8_t c) { return c > 0x20 && c < 0x7f; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

class WireReader {
 public:
  explicit WireReader(std::span<const uint8_t> m) : m_(m) {}

  size_t pos() const { return pos_; }
  size_t size() const { return m_.size(); }
  const Error& error() const { return error_; }

  bool fail(size_t at, std::string what) {
    if (error_.message.empty()) error_ = Error{0, "byte " + std::to_string(at) + ": " + std::move(what)};
    return false;
  }

  bool need(size_t n, const char* what) {
    if (m_.size() - pos_ >= n) return true;
    return fail(pos_, std::string("the message ends inside ") + what);
  }
  bool u8(uint8_t& v, const char* what) {
    if (!need(1, what)) return false;
    v = m_[pos_++];
    return true;
  }
  bool u16(uint16_t& v, const char* what) {
    if (!need(2, what)) return false;
    v = static_cast<uint16_t>(m_[pos_] << 8 | m_[pos_ + 1]);
    pos_ += 2;
    return true;
  }
  bool u32(uint32_t& v, const char* what) {
    if (!need(4, what)) return false;
    v = static_cast<uint32_t>(m_[pos_]) << 24 | static_cast<uint32_t>(m_[pos_ + 1]) << 16 |
        static_cast<uint32_t>(m_[pos_ + 2]) << 8 | m_[pos_ + 3];
    pos_ += 4;
    return true;
  }

  // A name at pos_, which advances past its bytes here (not past what
  // pointers lead to).  With `compressed` false a pointer is an error (SVCB
  // targets, RFC 9460 2.2).  `end` bounds the bytes the name may use where
  // it starts (the rdata it lies in).
  bool name(DnsName& out, const char* what, size_t end, bool compressed = true) {
    out.labels.clear();
    size_t p = pos_;
    size_t segment = p;  // every pointer must lead below the lowest place read so far
    size_t wire = 0;
    bool jumped = false;
    for (;;) {
      size_t limit = jumped ? m_.size() : end;
      if (p >= limit) return fail(p, std::string("the message ends inside ") + what);
      uint8_t len = m_[p];
      if ((len & 0xc0) == 0xc0) {
        if (!compressed) return fail(p, std::string("a compression pointer in ") + what + ", where none may be");
        if (p + 1 >= limit) return fail(p, std::string("the message ends inside ") + what);
        size_t target = static_cast<size_t>(len & 0x3f) << 8 | m_[p + 1];
        if (!jumped) pos_ = p + 2;
        if (target < kHeaderSize) return fail(p, std::string("a compression pointer into the header in ") + what);
        if (target >= segment)
          return fail(
              p, std::string("a compression pointer in ") + what + " that does not point backwards (it could loop)");
        segment = target;
        p = target;
        jumped = true;
        continue;
      }
      if (len & 0xc0) return fail(p, "label type 0x" + std::string(len & 0x80 ? "80" : "40") + " is not supported");
      wire += 1 + len;
      if (wire > kMaxNameWire) return fail(p, std::string(what) + " is longer than 255 bytes");
      if (len == 0) {
        if (!jumped) pos_ = p + 1;
        return true;
      }
      if (p + 1 + len > limit) return fail(p, std::string("the message ends inside ") + what);
      out.labels.emplace_back(reinterpret_cast<const char*>(m_.data() + p + 1), len);
      p += 1 + len;
    }
  }

  std::span<const uint8_t> bytes(size_t from, size_t n) const { return m_.subspan(from, n); }
  void skip(size_t n) { pos_ += n; }

 private:
  std::span<const uint8_t> m_;
  size_t pos_ = 0;
  Error error_;
};

bool parse_svcb(WireReader& r, DnsRecord& rec, size_t end) {
  uint16_t priority;
  if (!r.u16(priority, "an SVCB record")) return false;
  if (!r.name(rec.target, "an SVCB target", end, /*compressed=*/false)) return false;
  uint16_t last_key = 0;
  bool first = true;
  while (r.pos() < end) {
    size_t at = r.pos();
    uint16_t key, len;
    if (!r.u16(key, "an SVCB parameter") || !r.u16(len, "an SVCB parameter")) return false;
    if (r.pos() > end || end - r.pos() < len) return r.fail(at, "an SVCB parameter runs past its record");
    // RFC 9460 2.2: keys in strictly increasing order.
    if (!first && key <= last_key) return r.fail(at, "SVCB parameters out of order or repeated");
    first = false;
    last_key = key;
    auto value = r.bytes(r.pos(), len);
    if (key == 4 || key == 6) {  // ipv4hint, ipv6hint
      size_t unit = key == 4 ? 4 : 16;
      if (len == 0 || len % unit != 0) return r.fail(at, "an SVCB address hint of a bad length");
      for (size_t i = 0; i < len; i += unit)
        rec.hints.push_back(key == 4 ? IpAddr::v4(value.data() + i) : IpAddr::v6(value.data() + i));
    }
    r.skip(len);
  }
  return true;
}

bool parse_record(WireReader& r, DnsRecord& rec, const char* section) {
  if (!r.name(rec.name, "a record's name", r.size())) return false;
  uint16_t rdlength;
  if (!r.u16(rec.type, section) || !r.u16(rec.cls, section) || !r.u32(rec.ttl, section) || !r.u16(rdlength, section))
    return false;
  size_t start = r.pos();
  if (!r.need(rdlength, section)) return false;
  size_t end = start + rdlength;
  auto rdata = r.bytes(start, rdlength);
  rec.rdata.assign(rdata.begin(), rdata.end());
  if (rec.cls == kClassIn && (rec.type == dns_type::A || rec.type == dns_type::AAAA)) {
    size_t want = rec.type == dns_type::A ? 4 : 16;
    if (rdlength != want)
      return r.fail(start, std::string(rec.type == dns_type::A ? "an A" : "an AAAA") + " record of " +
                               std::to_string(rdlength) + " bytes");
    // An AAAA record of an IPv4-mapped address names the IPv4 host.
    rec.addr = rec.type == dns_type::A ? IpAddr::v4(rdata.data()) : IpAddr::v6(rdata.data());
  } else if (rec.type == dns_type::CNAME) {
    if (!r.name(rec.target, "a CNAME target", end)) return false;
    if (r.pos() != end) return r.fail(r.pos(), "bytes after the CNAME target inside its record");
  } else if (rec.type == dns_type::SVCB || rec.type == dns_type::HTTPS) {
    if (!parse_svcb(r, rec, end)) return false;
    if (r.pos() != end) return r.fail(r.pos(), "an SVCB record runs past its length");
  }
  // Other types are kept as bytes: the resolver records no address from them.
  r.skip(end - r.pos());
  return true;
}

void put16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}
void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, static_cast<uint16_t>(v >> 16));
  put16(out, static_cast<uint16_t>(v));
}

class WireWriter {
 public:
  std::vector<uint8_t> out;

  // Names are compressed against every suffix written before (exact bytes,
  // so the case of each name survives).
  void name(const DnsName& n) {
    for (size_t i = 0; i < n.labels.size(); ++i) {
      std::string key = suffix_key(n, i);
      if (auto it = seen_.find(key); it != seen_.end()) {
        put16(out, static_cast<uint16_t>(0xc000 | it->second));
        return;
      }
      if (out.size() < 0x4000) seen_.emplace(std::move(key), out.size());
      out.push_back(static_cast<uint8_t>(n.labels[i].size()));
      out.insert(out.end(), n.labels[i].begin(), n.labels[i].end());
    }
    out.push_back(0);
  }

 private:
  static std::string suffix_key(const DnsName& n, size_t from) {
    std::string k;
    for (size_t i = from; i < n.labels.size(); ++i) {
      k += static_cast<char>(n.labels[i].size());
      k += n.labels[i];
    }
    return k;
  }
  std::map<std::string, size_t> seen_;
};

void write_record(WireWriter& w, const DnsRecord& r) {
  w.name(r.name);
  put16(w.out, r.type);
  put16(w.out, r.cls);
  put32(w.out, r.ttl);
  size_t len_at = w.out.size();
  put16(w.out, 0);
  size_t start = w.out.size();
  if ((r.type == dns_type::A && r.addr.family == 4) || (r.type == dns_type::AAAA && r.addr.family == 6)) {
    w.out.insert(w.out.end(), r.addr.b.begin(), r.addr.b.begin() + r.addr.size());
  } else if (r.type == dns_type::AAAA && r.addr.family == 4) {
    static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    w.out.insert(w.out.end(), kMapped, kMapped + 12);
    w.out.insert(w.out.end(), r.addr.b.begin(), r.addr.b.begin() + 4);
  } else if (r.type == dns_type::CNAME) {
    w.name(r.target);
  } else {
    w.out.insert(w.out.end(), r.rdata.begin(), r.rdata.end());
  }
  size_t len = w.out.size() - start;
  w.out[len_at] = static_cast<uint8_t>(len >> 8);
  w.out[len_at + 1] = static_cast<uint8_t>(len);
}

}  // namespace

std::string DnsName::text() const {
  if (labels.empty()) return ".";
  std::string out;
  for (const auto& l : labels) {
    for (char ch : l) {
      auto c = static_cast<uint8_t>(ch);
      if (c == '.' || c == '\\') {
        out += '\\';
        out += ch;
      } else if (printable(c)) {
        out += ch;
      } else {
        char buf[5];
        snprintf(buf, sizeof buf, "\\%03u", c);
        out += buf;
      }
    }
    out += '.';
  }
  return out;
}

std::string DnsName::key() const {
  if (labels.empty()) return "";
  std::string t = text();
  t.pop_back();
  for (char& c : t) c = lower(c);
  return t;
}

size_t DnsName::wire_size() const {
  size_t n = 1;
  for (const auto& l : labels) n += 1 + l.size();
  return n;
}

std::optional<DnsName> DnsName::from_text(std::string_view text) {
  DnsName n;
  if (text == ".") return n;
  std::string label;
  bool pending = false;  // a label has begun
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (label.empty()) return std::nullopt;
      n.labels.push_back(std::move(label));
      label.clear();
      pending = false;
      continue;
    }
    pending = true;
    if (c != '\\') {
      label += c;
      continue;
    }
    if (i + 1 >= text.size()) return std::nullopt;
    if (i + 3 < text.size() && isdigit(static_cast<unsigned char>(text[i + 1])) &&
        isdigit(static_cast<unsigned char>(text[i + 2])) && isdigit(static_cast<unsigned char>(text[i + 3]))) {
      int v = (text[i + 1] - '0') * 100 + (text[i + 2] - '0') * 10 + (text[i + 3] - '0');
      if (v > 255) return std::nullopt;
      label += static_cast<char>(v);
      i += 3;
    } else {
      label += text[++i];
    }
  }
  if (pending) n.labels.push_back(std::move(label));
  for (const auto& l : n.labels)
    if (l.empty() || l.size() > kMaxLabel) return std::nullopt;
  if (n.wire_size() > kMaxNameWire) return std::nullopt;
  return n;
}

bool DnsName::equals_ignoring_case(const DnsName& o) const {
  if (labels.size() != o.labels.size()) return false;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].size() != o.labels[i].size()) return false;
    for (size_t k = 0; k < labels[i].size(); ++k)
      if (lower(labels[i][k]) != lower(o.labels[i][k])) return false;
  }
  return true;
}

size_t DnsMessage::udp_limit() const {
  const DnsRecord* o = opt();
  if (!o) return kMaxUdpPlain;
  return std::max<size_t>(kMaxUdpPlain, o->cls);
}

const DnsRecord* DnsMessage::opt() const {
  for (const auto& r : additional)
    if (r.type == dns_type::OPT) return &r;
  return nullptr;
}

Result<DnsMessage> parse_dns(std::span<const uint8_t> bytes) {
  WireReader r(bytes);
  DnsMessage m;
  uint16_t counts[4];
  if (bytes.size() > 65535) return Error{0, "a DNS message is at most 65535 bytes"};
  if (!r.u16(m.header.id, "the header") || !r.u16(m.header.flags, "the header")) return r.error();
  for (auto& c : counts)
    if (!r.u16(c, "the header")) return r.error();
  m.questions.reserve(std::min<size_t>(counts[0], 8));
  for (uint16_t i = 0; i < counts[0]; ++i) {
    DnsQuestion q;
    if (!r.name(q.name, "a question's name", bytes.size()) || !r.u16(q.type, "a question") ||
        !r.u16(q.cls, "a question"))
      return r.error();
    m.questions.push_back(std::move(q));
  }
  const char* names[3] = {"the answer section", "the authority section", "the additional section"};
  std::vector<DnsRecord>* sections[3] = {&m.answers, &m.authority, &m.additional};
  for (int s = 0; s < 3; ++s) {
    if (s == 2) m.additional_offset = r.pos();
    for (uint16_t i = 0; i < counts[s + 1]; ++i) {
      size_t start = r.pos();
      DnsRecord rec;
      if (!parse_record(r, rec, names[s])) return r.error();
      if (rec.type == dns_type::OPT) {
        if (s != 2) return Error{0, "byte " + std::to_string(start) + ": an OPT record outside the additional section"};
        if (!m.opt_bytes.empty()) return Error{0, "byte " + std::to_string(start) + ": a second OPT record"};
        if (!rec.name.labels.empty())
          return Error{0, "byte " + std::to_string(start) + ": an OPT record not at the root"};
        auto b = r.bytes(start, r.pos() - start);
        m.opt_bytes.assign(b.begin(), b.end());
      }
      sections[s]->push_back(std::move(rec));
    }
  }
  if (r.pos() != bytes.size())
    return Error{0, "byte " + std::to_string(r.pos()) + ": " + std::to_string(bytes.size() - r.pos()) +
                        " bytes after the last record"};
  return m;
}

std::vector<uint8_t> build_dns(const DnsMessage& m) {
  WireWriter w;
  put16(w.out, m.header.id);
  put16(w.out, m.header.flags);
  put16(w.out, static_cast<uint16_t>(m.questions.size()));
  put16(w.out, static_cast<uint16_t>(m.answers.size()));
  put16(w.out, static_cast<uint16_t>(m.authority.size()));
  put16(w.out, static_cast<uint16_t>(m.additional.size()));
  for (const auto& q : m.questions) {
    w.name(q.name);
    put16(w.out, q.type);
    put16(w.out, q.cls);
  }
  for (const auto* s : {&m.answers, &m.authority, &m.additional})
    for (const auto& r : *s) write_record(w, r);
  return std::move(w.out);
}

std::vector<uint8_t> build_reply(const DnsMessage& query, Rcode rcode, bool truncated) {
  DnsMessage reply;
  reply.header.id = query.header.id;
  reply.header.flags = static_cast<uint16_t>(query.header.flags & 0x7900);  // opcode and RD
  reply.header.set_qr(true);
  reply.header.set_ra(true);
  reply.header.set_tc(truncated);
  reply.header.set_rcode(rcode);
  reply.questions = query.questions;
  return build_dns(reply);
}

std::vector<uint8_t> build_formerr(std::span<const uint8_t> bytes) {
  if (bytes.size() < kHeaderSize || (bytes[2] & 0x80)) return {};
  std::vector<uint8_t> out(kHeaderSize, 0);
  out[0] = bytes[0];
  out[1] = bytes[1];
  out[2] = static_cast<uint8_t>(0x80 | (bytes[2] & 0x79));  // QR, opcode, RD
  out[3] = static_cast<uint8_t>(0x80 | static_cast<uint8_t>(Rcode::FormErr));
  return out;
}

void TcpFramer::append(std::span<const uint8_t> bytes) {
  if (pos_ > 0 && pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  }
  buf_.insert(buf_.end(), bytes.begin(), bytes.end());
}

std::optional<std::vector<uint8_t>> TcpFramer::next() {
  if (buf_.size() - pos_ < 2) return std::nullopt;
  size_t len = static_cast<size_t>(buf_[pos_] << 8 | buf_[pos_ + 1]);
  if (buf_.size() - pos_ - 2 < len) return std::nullopt;
  std::vector<uint8_t> msg(buf_.begin() + static_cast<ptrdiff_t>(pos_ + 2),
                           buf_.begin() + static_cast<ptrdiff_t>(pos_ + 2 + len));
  pos_ += 2 + len;
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > 65536) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<ptrdiff_t>(pos_));
    pos_ = 0;
  }
  return msg;
}

std::vector<uint8_t> tcp_frame(std::span<const uint8_t> msg) {
  std::vector<uint8_t> out;
  out.reserve(msg.size() + 2);
  put16(out, static_cast<uint16_t>(msg.size()));
  out.insert(out.end(), msg.begin(), msg.end());
  return out;
}

}  // namespace cb::net
