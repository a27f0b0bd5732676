#include "nimble/replayer/side_exits.hpp"

#include <algorithm>

namespace nimble::replayer {

SideExits::Seen* SideExits::find(const ExitSite& site) {
  auto it = std::find_if(seen_.begin(), seen_.end(), [&](const Seen& s) { return s.site == site; });
  return it == seen_.end() ? nullptr : &*it;
}

const SideExits::Seen* SideExits::find(const ExitSite& site) const {
  auto it = std::find_if(seen_.begin(), seen_.end(), [&](const Seen& s) { return s.site == site; });
  return it == seen_.end() ? nullptr : &*it;
}

std::optional<SideExitWindow> SideExits::exited(const ExitSite& site, std::size_t call) {
  pending_.reset();  // an exit before the last one's stretch reached a recorded iteration: not measured
  Seen* s = find(site);
  if (s && s->same >= options_.seen_before && s->asked < options_.attempts && s->length > 0) {
    ++s->asked;
    return SideExitWindow{site, s->length, ""};
  }
  pending_ = Pending{site, call};
  return std::nullopt;
}

void SideExits::iteration_began(std::size_t call) {
  if (!pending_) return;
  const Pending p = *pending_;
  pending_.reset();
  if (call <= p.call) return;
  const std::size_t length = call - p.call;
  Seen* s = find(p.site);
  if (!s) {
    if (seen_.size() >= options_.max_sites) return;
    seen_.push_back({p.site, 0, 0, 0});
    s = &seen_.back();
  }
  if (length > options_.longest || length < options_.shortest) {
    s->same = 0;  // the program went elsewhere for long, or came back at once: nothing to record here
    return;
  }
  if (length == s->length) {
    ++s->same;
  } else {
    s->length = length;
    s->same = 1;
  }
}

std::size_t SideExits::times_seen(const ExitSite& site) const {
  const Seen* s = find(site);
  return s ? s->same : 0;
}

}  // namespace nimble::replayer
