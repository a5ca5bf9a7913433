#include "keep/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "keep/fsutil.h"

namespace cb::keep {
namespace {

Result<UniqueFd> open_subdir(int parent, const char* name, bool create) {
  if (create && mkdirat(parent, name, 0700) != 0 && errno != EEXIST)
    return Error::from_errno(std::string("mkdir ") + name);
  UniqueFd fd(openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Error::from_errno(std::string("open ") + name);
  return fd;
}

}  // namespace

bool Store::valid_session(std::string_view s) {
  if (s.empty() || s.size() > 128 || s[0] == '.') return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

std::string Store::dir_beside(const std::string& audit_db_path) {
  size_t slash = audit_db_path.rfind('/');
  if (slash == std::string::npos) return "keep";
  return audit_db_path.substr(0, slash + 1) + "keep";
}

std::string Store::object_path(std::string_view sha) {
  return std::string(sha.substr(0, 2)) + "/" + std::string(sha.substr(2));
}

Result<Store> Store::open(const std::string& dir, bool create) {
  if (dir.empty()) return Error{EINVAL, "the keep store's directory is empty"};
  if (create && mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Error::from_errno("cannot create the keep store " + dir);
  Store s;
  s.dir_ = dir;
  s.root_.reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!s.root_) return Error::from_errno("cannot open the keep store " + dir);

  auto version = read_file_at(s.root_.get(), "VERSION");
  if (version) {
    std::string_view v = *version;
    while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.remove_suffix(1);
    if (v != kStoreVersion)
      return Error{EPROTO, dir + "/VERSION says \"" + std::string(v) + "\", this cottonbox reads \"" +
                               std::string(kStoreVersion) + "\""};
  } else if (version.error().err != ENOENT) {
    return Error{version.error().err, dir + "/VERSION: " + version.error().message};
  } else if (!create) {
    return Error{ENOENT, dir + " is not a keep store (no VERSION)"};
  } else {
    auto w = write_file_atomically(s.root_.get(), "VERSION", std::string(kStoreVersion) + "\n");
    if (!w) return Error{w.error().err, dir + "/VERSION: " + w.error().message};
  }

  for (auto [name, fd] : {std::pair{"objects", &s.objects_}, {"staging", &s.staging_}, {"journal", &s.journal_}}) {
    auto d = open_subdir(s.root_.get(), name, create);
    if (!d) return Error{d.error().err, dir + "/" + d.error().message};
    *fd = std::move(*d);
  }
  return s;
}

Result<std::vector<std::string>> Store::sessions() const {
  auto names = list_dir(journal_.get());
  if (!names) return names.error();
  std::vector<std::string> out;
  for (const std::string& n : *names) {
    constexpr std::string_view kExt = ".log";
    if (n.size() > kExt.size() && n.compare(n.size() - kExt.size(), kExt.size(), kExt) == 0) {
      std::string s = n.substr(0, n.size() - kExt.size());
      if (valid_session(s)) out.push_back(std::move(s));
    }
  }
  return out;
}

Result<Parsed> Store::read_journal_fd(int fd) {
  auto text = read_all(fd);
  if (!text) return text.error();
  return parse_journal(*text);
}

Result<Parsed> Store::read_session(std::string_view session) const {
  if (!valid_session(session)) return Error{EINVAL, "not a session name: " + std::string(session)};
  std::string name = std::string(session) + ".log";
  UniqueFd fd(openat(journal_.get(), name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return Error::from_errno("no keep journal for session " + std::string(session));
  return read_journal_fd(fd.get());
}

Result<UniqueFd> Store::open_object(std::string_view ref) const {
  if (ref.size() > 2 && ref.substr(0, 2) == "s:") {
    std::string name(ref.substr(2));
    if (name.find('/') != std::string::npos) return Error{EINVAL, "bad object " + std::string(ref)};
    UniqueFd fd(openat(staging_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd) return Error::from_errno("kept object " + std::string(ref));
    return fd;
  }
  if (ref.size() == 66 && ref.substr(0, 2) == "o:") {
    std::string p = object_path(ref.substr(2));
    UniqueFd fd(openat(objects_.get(), p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd) return Error::from_errno("kept object " + std::string(ref));
    return fd;
  }
  return Error{EINVAL, "bad object reference \"" + std::string(ref) + "\""};
}

Result<UniqueFd> Store::lock(bool exclusive, bool wait) const {
  UniqueFd fd(openat(root_.get(), "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return Error::from_errno("keep store lock");
  int op = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);
  while (flock(fd.get(), op) != 0) {
    if (errno == EINTR) continue;
    return Error::from_errno("keep store lock");
  }
  return fd;
}

uint64_t Store::recorded_usage() const {
  auto text = read_file_at(root_.get(), "usage");
  if (!text) return 0;
  uint64_t v = 0;
  std::from_chars(text->data(), text->data() + text->size(), v);
  return v;
}

Result<Ok> Store::write_usage(uint64_t bytes) const {
  return write_file_atomically(root_.get(), "usage", std::to_string(bytes) + "\n");
}

Result<uint64_t> Store::measure() const {
  uint64_t total = 0;
  auto staged = list_dir(staging_.get());
  if (!staged) return staged.error();
  for (const std::string& n : *staged) {
    struct stat st;
    if (fstatat(staging_.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      total += static_cast<uint64_t>(st.st_size);
  }
  auto fans = list_dir(objects_.get());
  if (!fans) return fans.error();
  for (const std::string& f : *fans) {
    UniqueFd d(openat(objects_.get(), f.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!d) continue;  // a temporary file of a settle, not a fan-out directory
    auto objs = list_dir(d.get());
    if (!objs) return objs.error();
    for (const std::string& n : *objs) {
      struct stat st;
      if (fstatat(d.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
        total += static_cast<uint64_t>(st.st_size);
    }
  }
  return total;
}

}  // namespace cb::keep
