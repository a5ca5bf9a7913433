#include "session/session.h"
#include "base/paths.h"
#include "base/temp_file.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <future>
#include <iostream>
#include <random>

#include "ask/ask_exec.h"
#include "ask/ask_tty.h"
#include "ask/gui_client.h"
#include "db/store.h"
#include "host/features.h"
#include "host/nesting.h"
#include "keep/keeper.h"
#include "launch/launch.h"
#include "plan/kernel_only.h"
#include "plan/plan.h"
#include "record/refusal_notice.h"
#include "session/session_dns.h"
#include "supervisor/supervisor.h"
#include "trace/core_btf.h"
#include "trace/ebpf.h"
#include "tracerd/start.h"

#ifndef COTTONBOX_SOURCE_RULES
#define COTTONBOX_SOURCE_RULES ""
#endif

namespace cb {
namespace {

// The real path: what the supervisor sees when a process names it through
// a symbolic link, and what self-protection must name.
std::string absolute(const std::string& p) {
  if (p.empty() || p[0] == '/') return canonical_path(p);
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return p;
  return canonical_path(std::string(cwd) + "/" + p);
}

std::string getenv_or(const char* k, const std::string& d) {
  const char* v = getenv(k);
  return v && *v ? v : d;
}

std::string home_dir() {
  if (const char* h = getenv("HOME"); h && *h) return h;
  if (passwd* pw = getpwuid(getuid())) return pw->pw_dir;
  return "/";
}

std::string user_name() {
  if (passwd* pw = getpwuid(getuid())) return pw->pw_name;
  return std::to_string(getuid());
}

std::string uuid4() {
  std::random_device rd;
  std::uniform_int_distribution<int> d(0, 15);
  const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) s += '-';
    s += hex[d(rd)];
  }
  return s;
}

int landlock_abi() {
  long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
  return v > 0 ? static_cast<int>(v) : 0;
}

// Records into the audit store.
class StoreSink : public Sink {
 public:
  StoreSink(db::Writer& w, int64_t session) : w_(w), session_(session) {}
  void event(const EventRow& row) override { w_.add_event(session_, row); }
  void event(EventRow&& row) override { w_.add_event(session_, std::move(row)); }
  void process(const ProcessRow& r) override { w_.add_process(session_, r); }
  void process_exec(const ProcessExec& e) override { w_.exec_process(session_, e); }
  void process_exit(const ProcessExit& e) override { w_.exit_process(session_, e); }
  void approval(const ApprovalRow& a) override { w_.add_approval(session_, a); }
  void lookup(const LookupRow& l) override { w_.add_lookup(session_, l); }
  void degraded(const std::string& reason) override { w_.add_degraded(session_, reason); }
  void events_lost(uint64_t total) override { w_.set_events_lost(session_, total); }

 private:
  db::Writer& w_;
  int64_t session_;
};

// Allows or denies every ask at once (--ask allow|deny).
class FixedAsker : public AskBackend {
 public:
  explicit FixedAsker(bool allow) : allow_(allow) {}
  std::string name() const override { return allow_ ? "allow" : "deny"; }
  void ask(const AskRequest& r) override {
    if (answer)
      answer(r.ask_id, allow_ ? AskAnswer::AllowOnce : AskAnswer::DenyOnce, allow_ ? "--ask allow" : "--ask deny", "");
  }

 private:
  bool allow_;
};

}  // namespace

std::string rules_dir() {
  if (const char* d = getenv("COTTONBOX_RULES_DIR"); d && *d) return d;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    std::string dir(exe);
    dir = dir.substr(0, dir.rfind('/'));
    std::string installed = dir + "/../share/cottonbox/rules";
    if (access((installed + "/default.yaml").c_str(), R_OK) == 0) return installed;
  }
  return COTTONBOX_SOURCE_RULES;
}

std::string default_policy_path() { return rules_dir() + "/default.yaml"; }

std::string user_rules_path() {
  return getenv_or("XDG_CONFIG_HOME", home_dir() + "/.config") + "/cottonbox/rules.yaml";
}

// Makes `dir` where its parent exists, owned like the parent (root's
// session must not leave a root-owned directory in a user's home).  Only
// one level: a missing ~/.config is not made (a fresh account has none,
// and a session never needs one).  Best effort: what is not made stays
// the supervisor's to guard.
static void make_dir_in_parent(const std::string& dir) {
  if (dir.size() < 2 || dir[0] != '/') return;
  struct stat st {};
  if (lstat(dir.c_str(), &st) == 0) return;
  std::string parent = dir.substr(0, dir.rfind('/'));
  if (parent.empty()) parent = "/";
  struct stat ps {};
  if (lstat(parent.c_str(), &ps) != 0 || !S_ISDIR(ps.st_mode)) return;
  if (mkdir(dir.c_str(), 0700) != 0) return;
  if (ps.st_uid != getuid() || ps.st_gid != getgid()) (void)lchown(dir.c_str(), ps.st_uid, ps.st_gid);
}

std::vector<std::string> config_paths() {
  std::string home = home_dir();
  std::string user_dir = user_rules_path();
  user_dir.resize(user_dir.rfind('/'));
  // Not ~/.pam_environment: Debian's pam_env no longer reads it
  // (user_readenv=0), and a file cannot be a read-only tree.
  std::vector<std::string> v = {user_dir, home + "/.config/cottonbox", home + "/.config/environment.d", rules_dir()};
  std::vector<std::string> out;
  for (auto& p : v) {
    std::string c = canonical_path(absolute(p));
    if (c.empty() || c == "/" || std::find(out.begin(), out.end(), c) != out.end()) continue;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> default_policy_files() {
  std::vector<std::string> files;
  std::string user = user_rules_path();
  if (access(user.c_str(), R_OK) == 0) files.push_back(user);
  files.push_back(default_policy_path());
  return files;
}

std::optional<Policy> load_policies(const std::vector<std::string>& files,
                                    const std::map<std::string, std::string>& vars) {
  LoadOptions lo;
  char cwd[PATH_MAX];
  lo.vars["CWD"] = getcwd(cwd, sizeof cwd) ? cwd : "/";
  lo.vars["HOME"] = home_dir();
  lo.vars["USER"] = user_name();
  for (auto& [k, v] : vars) lo.vars[k] = v;
  std::vector<std::string> abs;
  for (auto& f : files) abs.push_back(absolute(f));
  LoadResult r = load_policy_files(abs, lo);
  if (!r.policy) {
    for (auto& d : r.errors) std::cerr << format_diagnostic(d) << "\n";
    std::cerr << "cottonbox: " << r.errors.size() << (r.errors.size() == 1 ? " error" : " errors")
              << " in the policy; nothing was run\n";
    return std::nullopt;
  }
  return std::move(r.policy);
}

int run_session(const RunOptions& o) {
  // A full disk or a closed pipe must not kill the supervisor: writes fail
  // with EFBIG/EPIPE instead, and the command keeps its own dispositions.
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
  // Blocked before any thread exists, so that no thread (the store's writer)
  // takes them with their default action: the supervisor reads them from a
  // signalfd and passes them on.  The command gets the mask cottonbox had.
  sigset_t sigs;
  sigemptyset(&sigs);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&sigs, s);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  // Inside another supervisor no listener can be had: the session then has
  // kernel layers alone (plan/kernel_only.h).
  // `--layers` without notify takes the same path.
  const ListenerProbe listener = o.layers.notify ? probe_listener() : ListenerProbe{};
  const bool kernel_only = !listener.available;
  const std::string no_listener_why = o.layers.notify ? listener.why : "--layers leaves the notify layer out";
  const std::string off_layers = layers_off(o.layers);

  std::vector<std::string> files = o.policies.empty() ? default_policy_files() : o.policies;
  for (auto& f : files) f = absolute(f);
  std::string db_path = absolute(o.db.empty() ? db::default_db_path() : o.db);
  if (o.db.empty())
    if (std::string usable = absolute(db::usable_default_db_path()); usable != db_path) {
      if (!o.quiet)
        std::cerr << "cottonbox: the audit database " << db_path
                  << " is hidden here (this runs inside another cottonbox session); recording into " << usable << "\n";
      db_path = usable;
    }

  // The database and its companions exist before the mounts are planned, so
  // that the session cannot touch them.  A rollback journal made next to the
  // database would be played back into it by the next reader (a hot
  // journal); an empty one is never hot, and read-only in the session like
  // the database itself, the kernel refuses to create or fill it.  It stays
  // (a session running beside this one may rely on its mount).
  if (auto made = db::Writer::create_files(db_path); !made) {
    std::cerr << "cottonbox: cannot open the audit database " << db_path << ": " << made.error().message << "\n";
    return 125;
  }
  // The slow starts overlap: the store (schema check, statements) opens
  // while the policy loads, the eBPF tracer loads and verifies its programs,
  // and the session is planned and made ready.  Nothing of the command runs
  // before the store is open.
  auto writer_f = std::async(std::launch::async, [db_path] { return db::Writer::open(db_path); });
  bool want_ebpf = o.tracer != "seccomp" && o.layers.tracer;
  bool want_seccomp = o.tracer != "ebpf";
  std::string ebpf_missing;
  std::future<Result<EbpfTracer>> tracer_f;
  if (want_ebpf) {
    if (fake_missing("ebpf")) {
      ebpf_missing = "eBPF unavailable (COTTONBOX_FAKE_MISSING)";
    } else if (!EbpfTracer::built_in()) {
      ebpf_missing = "no eBPF tracer: this cottonbox was built without it";
    } else if (auto shared = EbpfTracer::connect_service()) {
      // The resident tracer (tracerd/): nothing to load, and no privilege
      // needed.  Registered once the session's init exists.
      std::promise<Result<EbpfTracer>> ready;
      ready.set_value(std::move(*shared));
      tracer_f = ready.get_future();
    } else if (!has_bpf_privileges()) {
      ebpf_missing =
          "no eBPF tracer: it needs root or CAP_BPF+CAP_PERFMON in the initial user namespace, and no "
          "tracer service answers at " +
          tracer_socket_path();
    } else if (int e = bpf_refused(); e != 0) {
      ebpf_missing = std::string("no eBPF tracer: bpf() is refused here (") + strerror(e) + ")";
    } else {
      // Loaded before anything is planned: what the supervisor must see
      // depends on whether the tracer records the rest.  The service is
      // started for this and later sessions; should it not start, the
      // session loads a tracer of its own.
      // (COTTONBOX_FAKE_MISSING=tracer-service: the per-session tracer of
      // old, which the benchmark compares with.)
      tracer_f = std::async(std::launch::async, []() -> Result<EbpfTracer> {
        if (!fake_missing("tracer-service") && tracerd::start_service())
          if (auto shared = EbpfTracer::connect_service()) return shared;
        return EbpfTracer::open();
      });
    }
  }
  auto policy = load_policies(files, o.vars);
  auto await_tracer = [&]() -> std::optional<EbpfTracer> {
    if (!tracer_f.valid()) return std::nullopt;
    auto t = tracer_f.get();
    if (t) return std::move(*t);
    ebpf_missing = "no eBPF tracer: " + t.error().message;
    return std::nullopt;
  };
  if (!policy) return 125;
  // Nothing can hold a call while someone answers.
  const std::vector<std::string> asks_denied = kernel_only ? asks_become_denials(*policy) : std::vector<std::string>{};
  bool root = getuid() == 0;
  std::string runtime = getenv_or("XDG_RUNTIME_DIR", "");
  std::vector<std::string> hidden;
  if (!runtime.empty()) {
    std::string ctl = runtime + "/cottonbox";
    mkdir(ctl.c_str(), 0700);  // exists before the session so it can be hidden from it
    struct stat st;
    if (stat(ctl.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) hidden.push_back(ctl);
  }
  // The eBPF tracer's cut-down kernel BTF serves later sessions too (the
  // tracer makes the directory too, but perhaps not yet).
  if (tracer_f.valid()) mkdir(core_btf_dir().c_str(), 0755);
  if (struct stat st; stat(core_btf_dir().c_str(), &st) == 0 && S_ISDIR(st.st_mode)) hidden.push_back(core_btf_dir());

  // The keep store sits beside the audit database.  It exists before the
  // session is planned so that the session cannot see it (hidden like the
  // control socket's directory) nor change it (the builtin rule): what
  // undo needs is out of the agent's reach.
  std::string keep_dir;
  std::string no_keep_why;
  if (kernel_only && !o.no_keep && !o.observe) {
    no_keep_why = "nothing is kept for undo: keeping needs a supervisor of the session's own";
  } else if (!o.no_keep && !o.observe) {
    std::string dir = keep::Store::dir_beside(db_path);
    if (auto store = keep::Store::open(dir, true)) {
      keep_dir = dir;
      hidden.push_back(dir);
    } else {
      no_keep_why = "nothing is kept for undo: " + store.error().message;
    }
  }

  SelfProtection sp;
  sp.add_trail(db_path);
  for (auto& f : files) sp.protected_files.push_back(f);
  sp.protected_dirs = hidden;
  sp.config_paths = config_paths();
  // A configuration directory not made yet could be guarded only call by
  // call (every mutation of the session notified, in case it is the one
  // that makes it).  Made empty now (where ~/.config exists), each is one
  // read-only mount.
  if (!o.observe)
    for (const auto& c : sp.config_paths) make_dir_in_parent(c);
  add_self_protection(*policy, sp);

  // An empty read-only file to bind over raw disk nodes and the audit trail
  // in the session; removed once the mounts are made, or on any way out
  // before.
  TempFile blocker_file = TempFile::make("/tmp/cottonbox-blocker.XXXXXX", 0);
  const std::string& blocker = blocker_file.path();

  // The session's resolver: its address goes into the session's
  // resolv.conf, which the plan binds over the host's.
  std::unique_ptr<SessionDns> dns;
  std::string no_dns_why;
  if (kernel_only) {
    no_dns_why = "no host names for network events: the session has no supervisor of its own";
  } else if (o.resolver != "off") {
    SessionDnsOptions dopt;
    dopt.upstream = o.resolver;
    dopt.empty_file = blocker;
    auto d = start_session_dns(*policy, dopt);
    if (d) {
      dns = std::move(*d);
      add_resolver_rule(*policy, dns->served.addr, dns->served.port);
    } else if (!o.resolver.empty() && d.error().err == EINVAL) {
      std::cerr << "cottonbox: " << d.error().message << "\n";
      return 125;
    } else {
      no_dns_why = "no host names for network events: " + d.error().message;
    }
  }

  PlanInput pin;
  pin.root = root;
  if (dns) pin.replaced_files = dns->replaced;
  for (auto& f : sp.protected_files)
    if (access(f.c_str(), F_OK) == 0) pin.self_files.push_back(f);
  for (auto& f : sp.trail_files)
    if (access(f.c_str(), F_OK) == 0) pin.trail_files.push_back(f);
  pin.hidden_dirs = hidden;
  pin.blocker_file = blocker;
  pin.observe = o.observe;
  pin.keep = !keep_dir.empty();
  pin.inherited = inherited_files();
  pin.listener = !kernel_only;
  // Root inside another session: without a supervisor of its own nothing
  // could judge a mount's path, so its command gets locked copies of the
  // read-only trees; where that cannot be had, every mount is refused.
  if (root && kernel_only && o.layers.notify && !o.observe) pin.locked_mounts = try_locked_mounts() == 0;
  int abi = fake_missing("landlock") || !o.layers.landlock ? 0 : landlock_abi();
  char cwd[PATH_MAX];
  std::string cwd_s = getcwd(cwd, sizeof cwd) ? cwd : "";

  // What the session's start says once the session has a row: degradations,
  // and whether the terminal hears of them too.
  std::vector<std::pair<std::string, bool>> launch_notes;
  std::string launch_error;  // why the last attempt to make the session ready failed

  auto launch = [&](bool mount_layer, bool pidns,
                    std::vector<MountFailure>* fails) -> std::pair<Plan, std::unique_ptr<Launcher>> {
    pin.mount_layer = mount_layer;
    pin.signals_scoped = (pidns && (mount_layer || root)) || abi >= 6;
    Plan plan = make_plan(*policy, pin);
    auto filter = build_filter(plan.filter);
    if (!filter) {
      launch_error = filter.error().message;
      return {std::move(plan), nullptr};
    }
    LaunchSpec spec;
    spec.argv = o.command;
    spec.cwd = cwd_s;
    spec.new_mountns = mount_layer;
    spec.new_pidns = pidns && (mount_layer || root);
    spec.new_userns = mount_layer && !root;
    spec.drop_caps = spec.new_userns;
    spec.locked_mounts = mount_layer && pin.locked_mounts;
    spec.mounts = mount_layer ? plan.mounts : std::vector<MountOp>{};
    spec.landlock_abi = abi;
    spec.filter = std::move(*filter);
    spec.listener = !kernel_only;
    auto l = std::make_unique<Launcher>(std::move(spec));
    auto r = l->prepare(fails);
    if (!r) {
      launch_error = r.error().message;
      return {std::move(plan), nullptr};
    }
    return {std::move(plan), std::move(l)};
  };
  // The plan, and the session's processes made ready to start, for a
  // session with or without the tracer.
  auto make_ready = [&](bool ebpf) -> std::pair<Plan, std::unique_ptr<Launcher>> {
    pin.ebpf = ebpf;
    pin.ebpf_only = !want_seccomp && ebpf && !kernel_only;
    launch_notes.clear();
    std::vector<MountFailure> fails;
    bool try_mounts = !(fake_missing("userns") && !root) && !fake_missing("mountns") && o.layers.mounts;
    auto [plan, launcher] =
        try_mounts ? launch(true, true, &fails) : std::make_pair(Plan{}, std::unique_ptr<Launcher>());
    if (!launcher) {
      std::string why = o.layers.mounts ? "no private mount namespace" : "no private mount namespace (--layers)";
      if (!fails.empty() && fails.front().op < plan.mounts.size())
        why += " (" + plan.mounts[fails.front().op].path + ": " + strerror(fails.front().err) + ")";
      else if (!fails.empty())
        why += std::string(" (") + strerror(fails.front().err) + ")";
      else if (try_mounts && !launch_error.empty())
        why += " (" + launch_error + ")";
      // Without a supervisor, the rules the mounts would have enforced are
      // named with the others the session cannot enforce (plan.weakened).
      launch_notes.emplace_back(kernel_only ? why : why + ": read-only trees are enforced by the supervisor alone",
                                true);
      fails.clear();
      std::tie(plan, launcher) = launch(false, true, &fails);
    }
    if (!launcher && root) {
      // An enclosing sandbox may refuse a pid namespace too (another
      // session's policy, a container's filter): init is then a subreaper
      // in the namespace cottonbox was started in.
      launch_notes.emplace_back("no pid namespace (" + launch_error +
                                    "): the session's processes share the pid namespace cottonbox was started in",
                                true);
      fails.clear();
      std::tie(plan, launcher) = launch(false, false, &fails);
    }
    for (auto& f : fails)
      if (f.op < plan.mounts.size() && plan.mounts[f.op].kind != MountKind::Proc)
        launch_notes.emplace_back(
            "optional read-only mount skipped: " + plan.mounts[f.op].path + ": " + strerror(f.err), false);
    for (auto& w : plan.weakened) launch_notes.emplace_back(w, true);
    return {std::move(plan), std::move(launcher)};
  };

  // The session is made ready while the tracer still loads, as if it will
  // (it nearly always does): what the supervisor must see depends on
  // whether the tracer records the rest.  Should it fail after all, the
  // ready processes are dropped and made again for a session without it.
  bool expect_tracer = tracer_f.valid();
  auto [plan, launcher] = make_ready(expect_tracer);
  std::optional<EbpfTracer> tracer = await_tracer();
  bool ebpf_possible = tracer.has_value();
  if (expect_tracer && !ebpf_possible && want_seccomp) {
    launcher.reset();
    std::tie(plan, launcher) = make_ready(false);
  }

  auto writer = writer_f.get();
  if (!writer) {
    std::cerr << "cottonbox: cannot open the audit database " << db_path << ": " << writer.error().message << "\n";
    launcher.reset();
    return 125;
  }

  // Start the session row.
  SessionStart ss;
  ss.uuid = uuid4();
  ss.name = o.name;
  ss.argv = o.command;
  ss.cwd = cwd_s;
  ss.uid = getuid();
  ss.user = user_name();
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  ss.hostname = host;
  ss.policy_files = files;
  ss.policy_hash = policy->hash;
  ss.policy = PolicySnapshot{policy->sources, policy->vars, sp.protected_files, sp.protected_dirs};
  ss.started_ns = realtime_ns();
  ss.observe = o.observe;
  ss.tracer = kernel_only     ? (ebpf_possible ? "ebpf" : "none")
              : ebpf_possible ? (want_seccomp ? "seccomp,ebpf" : "ebpf")
                              : "seccomp";
  ss.ask_mode = o.ask == AskMode::Gui     ? "gui"
                : o.ask == AskMode::Tty   ? "tty"
                : o.ask == AskMode::Deny  ? "deny"
                : o.ask == AskMode::Allow ? "allow"
                : o.ask == AskMode::Exec  ? "exec"
                                          : "auto";
  ss.supervisor_pid = getpid();
  ss.boot_id = boot_id();
  auto session = (*writer)->begin_session(ss);
  if (!session) {
    std::cerr << "cottonbox: cannot record the session in " << db_path << ": " << session.error().message << "\n";
    return 125;
  }
  int64_t sid = *session;
  // Until the supervisor runs, a way out ends the session's row as a
  // failure of cottonbox's own (125), so that no row stays "running".
  struct EndOnExit {
    db::Writer& w;
    int64_t sid;
    bool armed = true;
    ~EndOnExit() {
      if (armed) (void)w.end_session(sid, SessionEnd{realtime_ns(), 125, 0, SessionState::Ended});
    }
  } end_on_exit{**writer, sid};
  StoreSink store(**writer, sid);
  auto degrade = [&](const std::string& why) {
    store.degraded(why);
    if (!o.quiet) std::cerr << "cottonbox: degraded: " << why << "\n";
  };

  // Said first and loudly: a session with layers switched off enforces less
  // than this host allows, and its trail must never pass for a full one.
  if (!off_layers.empty())
    degrade("layers switched off by --layers: " + off_layers +
            " (for teaching and testing; this session enforces less than cottonbox can here)");
  if (kernel_only) {
    for (const auto& why :
         kernel_only_degradations(no_listener_why, asks_denied, ebpf_possible, ebpf_missing, o.layers.notify))
      degrade(why);
  } else if (!ebpf_missing.empty()) {
    degrade(ebpf_missing + "; running seccomp-only (actions no rule decides are not recorded)");
  }
  // The session's keeper, finished on every way out: its journal says what
  // the session left, and the store is made durable.
  struct KeeperOwner {
    std::unique_ptr<keep::Keeper> keeper;
    Result<Ok> finish() {
      if (!keeper) return Ok{};
      auto r = keeper->finish();
      keeper.reset();
      return r;
    }
    ~KeeperOwner() { (void)finish(); }
  } keeping;
  if (!keep_dir.empty()) {
    if (auto k = keep::Keeper::open(keep_dir, ss.uuid))
      keeping.keeper = std::move(*k);
    else
      no_keep_why = "nothing is kept for undo: " + k.error().message;
  }
  if (!no_keep_why.empty()) degrade(no_keep_why);
  if (!want_seccomp && !ebpf_possible) {
    std::cerr << "cottonbox: --tracer ebpf needs the eBPF tracer, which is not available here\n";
    return 125;
  }
  auto say_launch_notes = [&] {
    for (auto& [why, loud] : launch_notes) loud ? degrade(why) : store.degraded(why);
  };
  if (!launcher) {
    say_launch_notes();
    std::cerr << "cottonbox: cannot start the command under supervision"
              << (launch_error.empty() ? "" : ": " + launch_error) << "\n";
    return 125;
  }
  say_launch_notes();

  if (tracer) {
    // Before init forks the command: nothing of the session escapes it.
    auto t = tracer->track(launcher->init_pid());
    // Refused by the service: root can still load a tracer of its own.
    if (!t && tracer->shared() && has_bpf_privileges() && bpf_refused() == 0) {
      store.degraded("the tracer service did not take the session (" + t.error().message +
                     "); it loads a tracer of its own");
      auto own = EbpfTracer::open();
      if (own) {
        tracer = std::move(*own);
        t = tracer->track(launcher->init_pid());
      } else {
        t = own.error();
      }
    }
    if (!t) {
      degrade("the eBPF tracer cannot follow the session: " + t.error().message);
      tracer.reset();
    }
  }
  auto started = launcher->start();
  blocker_file.remove();  // bound where it is needed by now
  if (dns) dns->resolv_conf.remove();
  if (!started) {
    std::cerr << "cottonbox: " << started.error().message << "\n";
    return 125;
  }
  // Started once the command runs: the walk overlaps the session instead of
  // delaying its start.
  // Always one: the session's own hard links are added as it makes them.
  std::unique_ptr<LinkIndex> links;
  if (plan.link_trees.empty()) {
    links = std::make_unique<LinkIndex>(std::move(plan.inodes));
  } else if (!plan.link_trees.empty()) {
    constexpr size_t kLinkWalkLimit = 200000;
    links = std::make_unique<LinkIndex>(plan.link_trees, kLinkWalkLimit, [&](bool complete) {
      if (!complete)
        degrade("more than " + std::to_string(kLinkWalkLimit) +
                " entries under protected trees: hard links beyond them are not known");
    });
  }
  if (abi >= 6 && started->landlock_abi_applied < 6)
    degrade("Landlock could not be applied: signals are confined by the pid namespace only");
  if (!o.layers.landlock)
    store.degraded("no Landlock (--layers): signals and abstract unix sockets are not scoped to the session");
  else if (abi < 6)
    store.degraded("Landlock ABI " + std::to_string(abi) + " < 6: no signal scoping");

  // Who answers asks.
  std::unique_ptr<AskBackend> asker;
  std::vector<Sink*> sinks{&store};
  // The first refusal by each rule, on the terminal: a tool that fails in
  // the session otherwise blames the kernel.
  RefusalNotices notices(stderr);
  if (!o.quiet) sinks.push_back(&notices);
  GuiClient* gui = nullptr;  // owned by `asker`; also sees every record live
  std::string no_gui;        // why --ask gui could not reach a GUI
  if (o.ask == AskMode::Gui || o.ask == AskMode::Auto) {
    auto client = GuiClient::connect(default_gui_socket_path(), ss, sid);
    if (client) {
      gui = client->get();
      asker = std::move(*client);
      sinks.push_back(gui);
      // What was degraded before the GUI listened is in the store already.
      if ((*writer)->flush())
        if (auto rd = db::Reader::open(db_path))
          if (auto summary = (*rd)->session(sid))
            for (const auto& d : summary->degraded) gui->degraded(d);
    } else if (o.ask == AskMode::Gui) {
      no_gui = client.error().message;
    }
  }
  if (!asker) switch (o.ask) {
      case AskMode::Allow: asker = std::make_unique<FixedAsker>(true); break;
      case AskMode::Deny: asker = std::make_unique<FixedAsker>(false); break;
      case AskMode::Exec: asker = std::make_unique<ExecAsker>(o.ask_program, cwd_s); break;
      case AskMode::Tty:
      case AskMode::Gui:
      case AskMode::Auto: {
        auto tty = TtyAsker::open();
        if (tty) {
          asker = std::move(*tty);
          if (!no_gui.empty() && !o.quiet)
            std::cerr << "cottonbox: no GUI is listening (" << no_gui << "); asking on the terminal\n";
        } else {
          if (!no_gui.empty() && !o.quiet)
            std::cerr << "cottonbox: no GUI is listening (" << no_gui
                      << ") and no terminal to ask on; asks are denied\n";
          else if (o.ask == AskMode::Tty && !o.quiet)
            std::cerr << "cottonbox: no terminal to ask on (" << tty.error().message << "); asks are denied\n";
          asker = std::make_unique<FixedAsker>(false);
        }
        break;
      }
    }

  if (dns && !session_uses_resolver(started->init_pid, dns->served)) {
    dns.reset();
    no_dns_why = "no host names for network events: the session's /etc/resolv.conf could not be replaced";
  }
  if (!no_dns_why.empty()) {
    // Loud only where rules name hosts: they then match no connection.
    if (policy_names_hosts(*policy))
      degrade(no_dns_why + "; rules naming hosts match no connection");
    else
      store.degraded(no_dns_why);
  }

  SupervisorOptions so;
  so.policy = &*policy;
  if (dns) {
    so.resolver = dns->resolver.get();
    so.names = &dns->names;
  }
  so.observe = o.observe;
  so.session = sid;
  so.session_name = o.name;
  so.asker = asker.get();
  so.ask_timeout = o.ask_timeout;
  so.mount_denials = plan.mounted;
  so.mount_denials.insert(so.mount_denials.end(), plan.aliases.begin(), plan.aliases.end());
  so.mount_aliases = plan.alias_of;
  so.protected_devices = plan.devices;
  so.links = links.get();
  so.tracer = tracer ? &*tracer : nullptr;
  so.execs_notified = plan.filter.has(Gate::Execs);
  so.kernel_carried = plan.kernel_carried;
  so.root = root;
  so.keeper = keeping.keeper.get();
  so.started_ns = ss.started_ns;
  Supervisor sup(std::move(so), std::move(*started), std::move(sinks));
  end_on_exit.armed = false;  // from here the session's own end is recorded
  SessionOutcome out;
  SessionState final_state = SessionState::Ended;
  try {
    out = sup.run();
  } catch (const std::exception& e) {
    // Fail closed: nothing of the session may go on unsupervised, and the
    // trail says how it ended.
    std::cerr << "cottonbox: internal error: " << e.what() << "; the session's processes are killed\n";
    sup.request_kill();
    final_state = SessionState::Aborted;
    out.exit_status = 125;
  }
  links.reset();
  if (keeping.keeper) {
    keep::KeeperStats ks = keeping.keeper->stats();
    if (ks.not_kept)
      store.degraded(std::to_string(ks.not_kept) +
                     " changes could not be kept for undo (`cottonbox changes` says which and why)");
    if (auto kf = keeping.finish(); !kf) degrade("the keep store could not be completed: " + kf.error().message);
  }
  if (gui)
    gui->session_end(
        SessionEnd{realtime_ns(), out.exit_status < 0 ? 125 : out.exit_status, out.exit_signal, final_state});
  asker.reset();

  // Never silent about the trail: records the store could not keep.
  if (auto st = (*writer)->stats(); st.refused || st.errors) {
    std::string why = std::to_string(st.refused) + " records could not be written to the audit database" +
                      (st.last_error.empty() ? "" : " (" + st.last_error + ")");
    std::cerr << "cottonbox: " << why << "\n";
    store.degraded(why);
  }
  SessionEnd end;
  end.ended_ns = realtime_ns();
  end.exit_status = out.exit_status;
  end.exit_signal = out.exit_signal;
  end.state = final_state;
  auto fin = (*writer)->end_session(sid, end);
  if (!fin && !o.quiet)
    std::cerr << "cottonbox: the audit trail could not be completed: " << fin.error().message << "\n";
  return out.exit_status < 0 ? 125 : out.exit_status;
}

}  // namespace cb
