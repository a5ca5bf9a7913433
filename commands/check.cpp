#include "commands/check.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "keep/store.h"
#include "notify/carry.h"
#include "plan/kernel_only.h"
#include "plan/plan.h"
#include "policy/trust.h"
#include "session/session.h"
#include "trace/core_btf.h"
#include "trace/tracer_service.h"

namespace cb {
namespace {

std::vector<std::string> action_list(ActionMask m) {
  std::vector<std::string> v;
  for (int i = 0; i < static_cast<int>(Action::Count); ++i)
    if (m & (ActionMask{1} << i)) v.emplace_back(action_name(static_cast<Action>(i)));
  return v;
}

std::vector<std::string> notified_families(const FilterSpec& f) {
  std::vector<std::string> v;
  auto add = [&](bool on, Gate g) {
    if (on) v.emplace_back(gate_name(g));
  };
  // Every open covers the narrower opens.
  add(f.has(Gate::ReadOpens), Gate::ReadOpens);
  add(!f.has(Gate::ReadOpens) && f.has(Gate::WriteOpens), Gate::WriteOpens);
  add(!f.has(Gate::ReadOpens) && !f.has(Gate::WriteOpens) && f.has(Gate::CreateOpens), Gate::CreateOpens);
  for (Gate g :
       {Gate::Deletes, Gate::Renames, Gate::HardLinks, Gate::Symlinks, Gate::Creates, Gate::Truncates, Gate::Attrs})
    add(f.has(g), g);
  add(f.any_file(), Gate::FileObjects);
  for (Gate g : {Gate::Execs, Gate::Signals, Gate::Net, Gate::CredChanges}) add(f.has(g), g);
  add(true, Gate::Always);
  return v;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> v;
  size_t start = 0;
  for (size_t c; (c = s.find(',', start)) != std::string::npos; start = c + 1) v.push_back(s.substr(start, c - start));
  v.push_back(s.substr(start));
  return v;
}

}  // namespace

int run_check(const std::vector<std::string>& policy_files, const std::map<std::string, std::string>& vars,
              const std::string& db_path, bool json, std::ostream& out, bool keep, const Layers& layers) {
  std::vector<std::string> files = policy_files.empty() ? default_policy_files() : policy_files;
  auto p = load_policies(files, vars);
  if (!p) return 125;
  // Without the notify layer nothing can hold a call while someone answers.
  std::vector<std::string> asks_denied = layers.notify ? std::vector<std::string>{} : asks_become_denials(*p);
  keep = keep && layers.notify;

  // The same built-ins `run` adds, for the same files.
  SelfProtection sp;
  sp.add_trail(db_path);
  for (auto& f : p->files) sp.protected_files.push_back(f);
  if (const char* rt = getenv("XDG_RUNTIME_DIR"); rt && *rt)
    sp.protected_dirs.push_back(std::string(rt) + "/cottonbox");
  if (struct stat st; stat(core_btf_dir().c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    sp.protected_dirs.push_back(core_btf_dir());
  sp.config_paths = config_paths();
  if (keep) sp.protected_dirs.push_back(keep::Store::dir_beside(db_path));
  add_self_protection(*p, sp);

  PlanInput in;
  in.keep = keep;
  in.root = getuid() == 0;
  in.mount_layer = layers.mounts;  // user namespaces or root; `run` falls back and says so if not
  // Root loads the tracer or starts the service; anyone else's session is
  // recorded when the service answers.
  in.ebpf = layers.tracer && (in.root || connect_tracer_service().ok());
  in.listener = layers.notify;
  // A pid namespace (root's, or a plain user's with a mount namespace) or Landlock's scope.
  in.signals_scoped = in.mount_layer || in.root || layers.landlock;
  in.self_files = sp.protected_files;
  in.trail_files = sp.trail_files;
  in.blocker_file = "(an empty read-only file)";  // shown, never mounted here
  in.hidden_dirs = sp.protected_dirs;
  Plan plan = make_plan(*p, in);
  std::vector<std::string> carried;
  for (int a = 0; a < static_cast<int>(Action::Count); ++a)
    if (plan.kernel_carried & bit(static_cast<Action>(a))) carried.emplace_back(action_name(static_cast<Action>(a)));

  // With the tracer recording, these continue as soon as the supervisor
  // has seen where they land (notify/carry.h).
  std::vector<std::string> at_once;
  if (in.ebpf) {
    auto allowed = [&](CarryShape::Kind kind, bool check_final) {
      return short_way_allowed(plan.kernel_carried, CarryShape{kind, 0, 0, check_final});
    };
    if (allowed(CarryShape::Create, true))
      at_once.emplace_back("opens that create, mkdir and symlink outside every read-only tree");
    else if (allowed(CarryShape::Create, false))
      at_once.emplace_back("O_EXCL opens, mkdir and symlink outside every read-only tree");
  }

  auto layer_of = [&](const Rule& r) -> std::pair<std::string, std::string> {
    for (const auto& l : plan.layers)
      if (l.rule_id == r.id) return {std::string(enforcement_name(l.layer)), l.detail};
    if (r.decision == Decision::Allow) return {"none", "allowing needs no enforcement"};
    if (r.decision == Decision::Log && !in.ebpf && !in.listener)
      return {"none", "not recorded: neither the eBPF tracer nor the supervisor is there"};
    if (r.decision == Decision::Log)
      return {in.ebpf ? "tracer" : "notify", in.ebpf ? "recorded by the eBPF tracer" : "recorded by the supervisor"};
    return {"notify", ""};
  };

  const std::string off = layers_off(layers);
  if (json) {
    nlohmann::json j;
    j["layers_off"] = off.empty() ? nlohmann::json::array() : nlohmann::json(split_commas(off));
    j["files"] = p->files;
    j["hash"] = p->hash;
    j["default"] = std::string(decision_name(p->default_decision));
    j["rules"] = nlohmann::json::array();
    for (const Rule& r : p->rules) {
      nlohmann::json jr;
      jr["id"] = r.id;
      jr["decision"] = std::string(decision_name(r.decision));
      jr["actions"] = action_list(r.actions);
      std::vector<std::string> paths;
      for (const auto& g : r.paths) paths.push_back(g.text());
      jr["paths"] = paths;
      std::vector<std::string> hosts, ports;
      for (const auto& h : r.hosts) hosts.push_back(h.text);
      for (const auto& pr : r.ports) ports.push_back(pr.text());
      jr["hosts"] = hosts;
      jr["ports"] = ports;
      jr["processes"] = r.processes;
      jr["when"] = r.when_text.empty() ? nlohmann::json() : nlohmann::json(r.when_text);
      jr["message"] = r.message;
      jr["builtin"] = r.builtin();
      if (r.loc.line) jr["location"] = r.loc.file + ":" + std::to_string(r.loc.line) + ":" + std::to_string(r.loc.col);
      auto [layer, detail] = layer_of(r);
      jr["layer"] = layer;
      jr["layer_detail"] = detail;
      j["rules"].push_back(jr);
    }
    j["notified"] = notified_families(plan.filter);
    nlohmann::json mounts = nlohmann::json::array();
    for (const auto& m : plan.mounts) {
      mounts.push_back({{"kind", mount_kind_name(m.kind)}, {"path", m.path}});
    }
    j["mounts"] = mounts;
    j["kernel_carried"] = carried;
    j["continued_at_once"] = at_once;
    j["notes"] = plan.notes;
    j["weakened"] = plan.weakened;
    j["warnings"] = trust_warnings(*p);
    out << j.dump(2) << "\n";
    return 0;
  }

  out << "policy OK: " << p->files.size() << (p->files.size() == 1 ? " file" : " files") << ", " << p->rules.size()
      << " rules (with cottonbox's built-ins), default " << decision_name(p->default_decision) << "\n";
  for (auto& f : p->files) out << "  " << f << "\n";
  out << "\n";
  for (const Rule& r : p->rules) {
    out << describe_rule(r);
    auto [layer, detail] = layer_of(r);
    out << "  layer:    " << layer << (detail.empty() ? "" : " — " + detail) << "\n\n";
  }
  if (!off.empty()) out << "Layers switched off (--layers): " << off << "\n\n";
  out << "Kernel layers in a session:\n";
  for (const auto& m : plan.mounts) {
    std::string kind(mount_kind_name(m.kind));
    kind.resize(std::max<size_t>(kind.size(), 16), ' ');
    out << "  " << kind << "  " << m.path << "\n";
  }
  if (plan.mounts.empty()) out << "  (no mounts)\n";
  if (!plan.filter.notify) {
    out << "\nReaching the supervisor: nothing (no notify layer)\n";
    if (!plan.filter.refusals.empty()) {
      out << "\nRefused in the seccomp filter:\n ";
      std::vector<std::string_view> names;
      for (const auto& r : plan.filter.refusals)
        if (const Syscall* row = find_syscall(r.nr))
          if (std::find(names.begin(), names.end(), row->name) == names.end()) names.push_back(row->name);
      for (auto n : names) out << " " << n;
      out << "\n";
    }
  } else {
    out << "\nReaching the supervisor (everything else never leaves the kernel):\n";
    for (const auto& f : notified_families(plan.filter)) out << "  " << f << "\n";
  }
  if (!carried.empty()) {
    out << "\nAllowed, then carried out by the kernel itself (every refusal of them is a read-only mount's):\n ";
    for (const auto& a : carried) out << " " << a;
    out << "\n";
  }
  if (!at_once.empty()) {
    out << "\nOf what reaches it, let through at once while the eBPF tracer records (the tracer's record\n"
           "is the audit row; not when another mount shows a protected tree):\n";
    for (const auto& a : at_once) out << "  " << a << "\n";
  }
  for (const auto& n : plan.notes) out << "\nnote: " << n << "\n";
  if (!asks_denied.empty()) {
    std::string ids;
    for (const auto& id : asks_denied) ids += (ids.empty() ? "" : ", ") + id;
    out << "\nweakened: ask rules are deny rules without the notify layer: " << ids << "\n";
  }
  for (const auto& w : plan.weakened) out << "\nweakened: " << w << "\n";
  for (const auto& w : trust_warnings(*p)) out << "\nwarning: " << w << "\n";
  return 0;
}

}  // namespace cb
