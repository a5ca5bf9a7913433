#include "policy/event.h"

#include <array>

namespace cb {
namespace {

// The action vocabulary: each action's name and what its object is.  The
// numeric values index bitmasks and never reach the database.
struct ActionInfo {
  std::string_view name;
  ObjectKind object;
};
constexpr std::array<ActionInfo, static_cast<size_t>(Action::Count)> kActions = {{
    {"file.read", ObjectKind::Path},         {"file.write", ObjectKind::Path},
    {"file.create", ObjectKind::Path},       {"file.delete", ObjectKind::Path},
    {"file.rename", ObjectKind::Path},       {"file.truncate", ObjectKind::Path},
    {"file.link", ObjectKind::Path},         {"file.attr", ObjectKind::Path},
    {"proc.exec", ObjectKind::Path},         {"proc.signal", ObjectKind::Process},
    {"proc.trace", ObjectKind::Process},     {"net.connect", ObjectKind::Address},
    {"net.bind", ObjectKind::Address},       {"net.send", ObjectKind::Address},
    {"net.listen", ObjectKind::Address},     {"sys.mount", ObjectKind::Facility},
    {"sys.namespace", ObjectKind::Facility}, {"sys.io_uring", ObjectKind::Facility},
    {"sys.kernel", ObjectKind::Facility},
}};

ActionMask mask_with_prefix(std::string_view prefix) {
  ActionMask m = 0;
  for (size_t i = 0; i < kActions.size(); ++i)
    if (kActions[i].name.starts_with(prefix)) m |= ActionMask{1} << i;
  return m;
}

}  // namespace

std::string_view action_name(Action a) {
  auto i = static_cast<size_t>(a);
  return i < kActions.size() ? kActions[i].name : std::string_view("unknown");
}

ObjectKind action_object(Action a) {
  auto i = static_cast<size_t>(a);
  return i < kActions.size() ? kActions[i].object : ObjectKind::Facility;
}

std::optional<Action> parse_action(std::string_view name) {
  for (size_t i = 0; i < kActions.size(); ++i)
    if (kActions[i].name == name) return static_cast<Action>(i);
  return std::nullopt;
}

ActionMask parse_action_or_group(std::string_view name) {
  if (auto a = parse_action(name)) return bit(*a);
  if (name == "*" || name == "any") return kAllActions;
  if (name == "file.mutate") return kFileMutate;
  if (name == "file.*") return mask_with_prefix("file.");
  if (name == "proc.*") return mask_with_prefix("proc.");
  if (name == "net.*") return mask_with_prefix("net.");
  if (name == "sys.*") return mask_with_prefix("sys.");
  return 0;
}

std::vector<std::string_view> action_vocabulary() {
  std::vector<std::string_view> v;
  for (const auto& a : kActions) v.push_back(a.name);
  for (auto g : {"file.mutate", "file.*", "proc.*", "net.*", "sys.*", "*"}) v.emplace_back(g);
  return v;
}

std::string_view net_proto_name(NetProto p) {
  switch (p) {
    case NetProto::None: return "";
    case NetProto::Tcp: return "tcp";
    case NetProto::Udp: return "udp";
    case NetProto::Unix: return "unix";
    case NetProto::Other: return "other";
  }
  return "";
}

NetObject make_net_object(NetProto proto, const IpAddr& addr, uint16_t port) {
  NetObject n;
  n.proto = proto;
  n.addr = addr;
  n.addr_text = addr.text();
  n.port = port;
  return n;
}

NetObject net_object_from_path(std::string_view path) {
  NetObject n;
  if (path.starts_with("unix:")) {
    n.proto = NetProto::Unix;
    return n;
  }
  NetProto proto = path.starts_with("tcp:") ? NetProto::Tcp : path.starts_with("udp:") ? NetProto::Udp : NetProto::None;
  if (proto == NetProto::None) return n;
  std::string_view rest = path.substr(4);
  size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == rest.size() || rest.size() - colon - 1 > 5) return n;
  unsigned port = 0;
  for (char c : rest.substr(colon + 1)) {
    if (c < '0' || c > '9') return n;
    port = port * 10 + static_cast<unsigned>(c - '0');
  }
  auto addr = IpAddr::parse(rest.substr(0, colon));
  if (!addr || port > 65535) return n;
  return make_net_object(proto, *addr, static_cast<uint16_t>(port));
}

std::string_view decision_name(Decision d) {
  switch (d) {
    case Decision::Allow: return "allow";
    case Decision::Deny: return "deny";
    case Decision::Ask: return "ask";
    case Decision::Log: return "log";
  }
  return "unknown";
}

std::optional<Decision> parse_decision(std::string_view name) {
  if (name == "allow") return Decision::Allow;
  if (name == "deny") return Decision::Deny;
  if (name == "ask") return Decision::Ask;
  if (name == "log") return Decision::Log;
  return std::nullopt;
}

std::string_view source_name(Source s) {
  switch (s) {
    case Source::Seccomp: return "seccomp";
    case Source::Ebpf: return "ebpf";
    case Source::Supervisor: return "supervisor";
  }
  return "unknown";
}

std::string_view layer_name(Layer l) {
  switch (l) {
    case Layer::None: return "none";
    case Layer::Notify: return "notify";
    case Layer::Filter: return "filter";
    case Layer::Mount: return "mount";
    case Layer::Landlock: return "landlock";
  }
  return "unknown";
}

}  // namespace cb
