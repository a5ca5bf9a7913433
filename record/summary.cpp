#include "record/summary.h"

namespace cb {
namespace {

// "build/x.o" for /work/proj/build/x.o when cwd is /work/proj.
std::string shorten(std::string_view path, std::string_view cwd) {
  if (cwd.empty() || cwd == "/" || path.size() <= cwd.size() || path.compare(0, cwd.size(), cwd) != 0 ||
      path[cwd.size()] != '/')
    return std::string(path);
  return std::string(path.substr(cwd.size() + 1));
}

std::string dir_words(std::string_view dir, std::string_view cwd) {
  if (!cwd.empty() && dir == cwd) return "./";
  std::string s = shorten(dir, cwd);
  if (s != "/") s += '/';
  return s;
}

// "evil.example.com:443 (203.0.113.7)" when the session resolved the
// address, else the object as the kernel names it ("tcp:203.0.113.7:443").
std::string net_words(const Event& ev) {
  const NetObject& n = ev.net;
  std::string out = ev.path;
  if (n.ip() && !n.hosts.empty()) {
    out = n.hosts[0];
    if (n.hosts.size() > 1) out += " (or " + std::to_string(n.hosts.size() - 1) + " more names)";
    out += ":" + std::to_string(n.port) + " (" + n.addr_text + ")";
  }
  // What was read before, in the words of the prompt: the chain from a
  // secret to the connection.
  if (!ev.taint_reads.empty()) {
    const TaintRead& t = ev.taint_reads.front();
    out += ", after " + (t.comm.empty() ? std::string("it") : t.comm) + " read " + t.path;
    if (ev.taint_reads.size() > 1) out += " and " + std::to_string(ev.taint_reads.size() - 1) + " more";
  }
  return out;
}

}  // namespace

std::string dirname_of(std::string_view p) {
  size_t slash = p.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(p.substr(0, slash));
}

std::string summarize(const Event& ev, uint32_t count, std::string_view cwd) {
  auto n = [&](const char* one, const char* many) {
    return count > 1 ? std::to_string(count) + " " + many : std::string("1 ") + one;
  };
  auto under = [&]() { return count > 1 ? " under " + dir_words(dirname_of(ev.path), cwd) : std::string(); };
  std::string path = shorten(ev.path, cwd);
  std::string target = shorten(ev.target, cwd);
  switch (ev.action) {
    case Action::FileDelete: return "delete " + n(ev.is_dir ? "directory" : "file", "files") + under();
    case Action::FileRename:
      if (count > 1) return "rename " + n("file", "files") + under();
      return std::string("rename ") + (ev.is_dir ? "directory " : "") + path + (ev.is_dir ? "/" : "") + " to " + target;
    case Action::FileTruncate: return "truncate " + n("file", "files") + under();
    case Action::FileWrite: return "write " + n("file", "files") + under();
    case Action::FileCreate: return "create " + n(ev.is_dir ? "directory" : "file", "files") + under();
    case Action::FileLink: return "link " + path + " to " + target;
    case Action::FileAttr: return "change attributes of " + n("file", "files") + under();
    case Action::FileRead: return "read " + n("file", "files") + under();
    case Action::ProcExec: return "run " + path;
    case Action::ProcSignal: return "signal process " + std::to_string(ev.target_pid);
    case Action::ProcTrace: return "trace process " + std::to_string(ev.target_pid);
    case Action::NetConnect: return "connect to " + net_words(ev);
    case Action::NetBind: return "bind to " + net_words(ev);
    case Action::NetSend: return "send to " + net_words(ev);
    case Action::NetListen: return "listen on " + net_words(ev);
    case Action::SysMount: return "mount " + ev.path;
    case Action::SysNamespace: return "create namespaces (" + ev.path + ")";
    case Action::SysIoUring: return "use io_uring";
    case Action::SysKernel: return "use " + ev.path;
    case Action::Count: break;
  }
  return std::string(action_name(ev.action));
}

}  // namespace cb
