// libFuzzer target for the DNS parser: the bytes a supervised process or an
// upstream sends.  Besides "no crash, no sanitizer report" it checks what
// the resolver relies on: a parsed message builds again and the rebuilt
// message parses with the same questions and addresses; the chain walk
// terminates; names survive text() and from_text().
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "net/dns_wire.h"
#include "net/name_map.h"

using namespace cb::net;

namespace {

void check(bool ok) {
  if (!ok) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  TcpFramer framer;
  framer.append(bytes);
  while (framer.next()) {
  }

  auto m = parse_dns(bytes);
  if (!m) return 0;
  ChainAnswer chain = follow_chain(*m);
  check(chain.chain.size() <= 17);
  for (const auto& q : m->questions) {
    auto back = DnsName::from_text(q.name.text());
    check(back.has_value() && back->labels == q.name.labels);
  }
  std::vector<uint8_t> again = build_dns(*m);
  if (again.size() > 65535) return 0;
  auto m2 = parse_dns(again);
  check(static_cast<bool>(m2));
  check(m2->questions.size() == m->questions.size());
  check(m2->answers.size() == m->answers.size());
  for (size_t i = 0; i < m->answers.size(); ++i) {
    check(m2->answers[i].addr == m->answers[i].addr);
    check(m2->answers[i].name.labels == m->answers[i].name.labels);
  }
  ChainAnswer chain2 = follow_chain(*m2);
  check(chain2.addresses.size() == chain.addresses.size());
  if (!m->questions.empty()) {
    auto reply = build_reply(*m, Rcode::Refused);
    check(static_cast<bool>(parse_dns(reply)));
  }
  return 0;
}
