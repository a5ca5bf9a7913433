#include "plan/layers.h"

namespace cb {

Result<Layers> parse_layers(std::string_view list) {
  if (list == "all") return Layers{};
  Layers l{false, false, false, false};
  if (list.empty()) return Error{EINVAL, "--layers needs at least one of notify, tracer, mounts, landlock (or all)"};
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string_view name =
        list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    bool* on = name == "notify"     ? &l.notify
               : name == "tracer"   ? &l.tracer
               : name == "mounts"   ? &l.mounts
               : name == "landlock" ? &l.landlock
                                    : nullptr;
    if (!on)
      return Error{EINVAL,
                   "--layers: '" + std::string(name) + "' is not a layer (notify, tracer, mounts, landlock, or all)"};
    if (*on) return Error{EINVAL, "--layers: '" + std::string(name) + "' is named twice"};
    *on = true;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return l;
}

std::string layers_off(const Layers& l) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) s += (s.empty() ? "" : ",") + std::string(name);
  };
  add(l.notify, "notify");
  add(l.tracer, "tracer");
  add(l.mounts, "mounts");
  add(l.landlock, "landlock");
  return s;
}

}  // namespace cb
