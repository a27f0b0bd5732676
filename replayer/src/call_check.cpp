#include "nimble/replayer/call_check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace nimble::replayer {
namespace {

CallCheck mismatch(const Op& op, const std::string& why) {
  CallCheck c;
  c.mismatch = describe_op(op) + ": " + why;
  return c;
}

std::uint64_t word_at(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + offset, std::min<std::size_t>(8, bytes.size() - offset));
  return v;
}

bool same(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b, std::size_t from, std::size_t to) {
  return std::equal(a.begin() + static_cast<std::ptrdiff_t>(from), a.begin() + static_cast<std::ptrdiff_t>(to),
                    b.begin() + static_cast<std::ptrdiff_t>(from));
}

}  // namespace

std::vector<std::uint8_t> recorded_parameters(const Op& op) {
  if (op.kind == OpKind::Kernel) return op.kernel.args;
  std::vector<std::uint8_t> bytes(16);
  if (op.kind == OpKind::Memset) {
    std::memcpy(bytes.data(), &op.memset.value, 4);
    std::memcpy(bytes.data() + kMemsetDestination, &op.memset.dst, 8);
  } else {
    std::memcpy(bytes.data() + kCopySource, &op.copy.src, 8);
    std::memcpy(bytes.data() + kCopyDestination, &op.copy.dst, 8);
  }
  return bytes;
}

bool apply_patches(std::vector<std::uint8_t>& bytes, const std::vector<ArgPatch>& patches) {
  bool changed = false;
  for (const ArgPatch& p : patches) {
    if (p.offset + p.bytes.size() > bytes.size() || p.bytes.empty()) continue;
    std::uint8_t* at = bytes.data() + p.offset;
    if (std::memcmp(at, p.bytes.data(), p.bytes.size()) == 0) continue;
    std::memcpy(at, p.bytes.data(), p.bytes.size());
    changed = true;
  }
  return changed;
}

std::vector<std::uint8_t> with_patches(std::vector<std::uint8_t> bytes, const std::vector<ArgPatch>& patches) {
  apply_patches(bytes, patches);
  return bytes;
}

CallCheck check_kernel_call(const Op& recorded, const KernelCall& call, const IsDevicePointer& is_device_pointer,
                            ArgumentRule rule) {
  const bool addresses_matter = rule == ArgumentRule::SameAddresses;
  const KernelOp& k = recorded.kernel;
  if (call.function != k.function) {
    return mismatch(recorded, "a different kernel (recorded " + trace::hex_address(k.function) + ", called " +
                                  trace::hex_address(call.function) + ")");
  }
  if (!std::equal(k.grid, k.grid + 3, call.grid) || !std::equal(k.block, k.block + 3, call.block) ||
      k.shared_mem != call.shared_mem) {
    return mismatch(recorded, "launch shape changed: grid " + dims_text(k.grid) + " -> " + dims_text(call.grid) + ", block " +
                                  dims_text(k.block) + " -> " + dims_text(call.block) + ", dynamic shared " +
                                  std::to_string(k.shared_mem) + " -> " + std::to_string(call.shared_mem) + " bytes");
  }
  if (call.args.size() != k.args.size()) {
    return mismatch(recorded, "argument bytes changed size: " + std::to_string(k.args.size()) + " -> " +
                                  std::to_string(call.args.size()));
  }
  if (call.args == k.args) {  // the common case: nothing changed, nothing to allocate
    CallCheck same_bytes;
    same_bytes.matches = true;
    return same_bytes;
  }
  // A recorded pointer may only change into something that is no address at all: frameworks pass
  // structs whose unused fields hold stale stack bytes, which can look like a device address in
  // one call and not in the next. The kernel cannot be dereferencing such a value, so launching
  // the program's bytes does what the program does. Another address is other memory: mismatch.
  for (std::uint32_t p : k.pointer_offsets) {
    if (!addresses_matter || same(k.args, call.args, p, p + 8)) continue;
    if (!is_device_pointer || is_device_pointer(word_at(call.args, p))) {
      return mismatch(recorded, "pointer argument at byte " + std::to_string(p) + " changed: " +
                                    trace::hex_address(word_at(k.args, p)) + " -> " +
                                    trace::hex_address(word_at(call.args, p)));
    }
  }
  // Parameters: where each starts, up to its end when its size is known (the bytes before the next
  // are padding, which no kernel reads and which often hold stale stack bytes), else up to the
  // next (or the end); one parameter when the layout is unknown.
  // (start, end) of each; the buffer is reused, as this runs for every replayed launch whose bytes changed.
  thread_local std::vector<std::pair<std::uint32_t, std::uint32_t>> params;
  params.clear();
  const bool sizes = k.param_sizes.size() == k.param_offsets.size();
  for (std::size_t i = 0; i < k.param_offsets.size(); ++i) {
    params.push_back({k.param_offsets[i], sizes ? k.param_offsets[i] + k.param_sizes[i] : 0});
  }
  if (params.empty() && !k.args.empty()) params.push_back({0, 0});
  std::sort(params.begin(), params.end());
  CallCheck result;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::size_t from = params[i].first;
    const std::size_t next = i + 1 < params.size() ? params[i + 1].first : k.args.size();
    const std::size_t to = params[i].second > from ? std::min<std::size_t>(params[i].second, next) : next;
    if (same(k.args, call.args, from, to)) continue;
    // A changed word that is now an address would change what the kernel touches.
    for (std::size_t w = (from + 7) / 8 * 8; addresses_matter && w + 8 <= to; w += 8) {
      if (same(k.args, call.args, w, w + 8)) continue;
      const std::uint64_t before = word_at(k.args, w), now = word_at(call.args, w);
      if (is_device_pointer && is_device_pointer(now)) {
        return mismatch(recorded, "argument word at byte " + std::to_string(w) + " changed from " +
                                      trace::hex_address(before) + " to " + trace::hex_address(now) +
                                      ", a device address: the memory it touches is not the recorded one");
      }
    }
    result.patches.push_back({static_cast<std::uint32_t>(from),
                              {call.args.begin() + static_cast<std::ptrdiff_t>(from),
                               call.args.begin() + static_cast<std::ptrdiff_t>(to)}});
  }
  result.matches = true;
  return result;
}

CallCheck check_copy_call(const Op& recorded, const CopyCall& call, ArgumentRule rule) {
  const CopyOp& c = recorded.copy;
  static const char* const names[] = {"HtoD", "DtoH", "DtoD"};
  if (call.direction != c.direction) {
    return mismatch(recorded, std::string("copy direction changed: ") + names[static_cast<int>(c.direction)] + " -> " +
                                  names[static_cast<int>(call.direction)]);
  }
  if (call.bytes != c.bytes) {
    return mismatch(recorded, "copy size changed: " + std::to_string(c.bytes) + " -> " + std::to_string(call.bytes) + " bytes");
  }
  CallCheck result;
  const bool src_on_device = c.direction != CopyDirection::HtoD;
  const bool dst_on_device = c.direction != CopyDirection::DtoH;
  // A host copy the program runs itself, in order: its device end is the program's business.
  const bool device_end_free = rule == ArgumentRule::AnyBytes;
  if (src_on_device && call.src != c.src && !device_end_free) {
    return mismatch(recorded, "copy source changed: " + trace::hex_address(c.src) + " -> " + trace::hex_address(call.src));
  }
  if (dst_on_device && call.dst != c.dst && !device_end_free) {
    return mismatch(recorded,
                    "copy destination changed: " + trace::hex_address(c.dst) + " -> " + trace::hex_address(call.dst));
  }
  if (!src_on_device) result.host_end = call.src;
  if (!dst_on_device) result.host_end = call.dst;
  if (c.direction == CopyDirection::DtoD && (call.src != c.src || call.dst != c.dst)) {
    for (const auto& [offset, address] : {std::pair{kCopySource, call.src}, std::pair{kCopyDestination, call.dst}}) {
      ArgPatch end{offset, std::vector<std::uint8_t>(8)};
      std::memcpy(end.bytes.data(), &address, 8);
      result.patches.push_back(std::move(end));
    }
  }
  result.matches = true;
  return result;
}

CallCheck check_memset_call(const Op& recorded, const MemsetCall& call, ArgumentRule rule) {
  const MemsetOp& m = recorded.memset;
  const bool dst_may_change = rule == ArgumentRule::AnyBytes && m.pitch == 0;
  if ((call.dst != m.dst && !dst_may_change) || call.element_size != m.element_size || call.width != m.width ||
      call.height != m.height || call.pitch != m.pitch) {
    return mismatch(recorded, "memset target changed: " + trace::hex_address(m.dst) + " (" + std::to_string(m.width) + "x" +
                                  std::to_string(m.height) + " of " + std::to_string(m.element_size) + " bytes) -> " +
                                  trace::hex_address(call.dst) + " (" + std::to_string(call.width) + "x" + std::to_string(call.height) +
                                  " of " + std::to_string(call.element_size) + " bytes)");
  }
  CallCheck result;
  if (call.value != m.value) {
    ArgPatch value{0, std::vector<std::uint8_t>(4)};
    std::memcpy(value.bytes.data(), &call.value, 4);
    result.patches.push_back(std::move(value));
  }
  if (call.dst != m.dst) {
    ArgPatch dst{kMemsetDestination, std::vector<std::uint8_t>(8)};
    std::memcpy(dst.bytes.data(), &call.dst, 8);
    result.patches.push_back(std::move(dst));
  }
  result.matches = true;
  return result;
}

CallCheck check_graph_launch(const Op& recorded, const GraphLaunchCall& call) {
  if (call.exec != recorded.graph_exec) {
    return mismatch(recorded, "a different graph of the program's (recorded exec " + trace::hex_address(recorded.graph_exec) +
                                  ", launched " + trace::hex_address(call.exec) + ")");
  }
  CallCheck result;
  result.matches = true;
  return result;
}

IterationMatcher::IterationMatcher(const ReplayPlan& plan, IsDevicePointer is_device_pointer, ArgumentRule rule)
    : plan_(plan), is_device_pointer_(std::move(is_device_pointer)), rule_(rule), patches_(plan.ops.size()),
      host_ends_(plan.ops.size(), 0) {
  skip_empty();
}

void IterationMatcher::skip_empty() {
  while (position_ < plan_.ops.size() && plan_.ops[position_].kind == OpKind::Nop) ++position_;
}

bool IterationMatcher::complete() const { return position_ >= plan_.ops.size(); }

void IterationMatcher::reset() {
  position_ = 0;
  for (auto& p : patches_) p.clear();
  std::fill(host_ends_.begin(), host_ends_.end(), 0);
  skip_empty();
}

template <class Call, class Check>
CallCheck IterationMatcher::advance(const Call& call, OpKind kind, const char* what, Check&& check) {
  if (complete()) {
    CallCheck c;
    c.mismatch = std::string("a ") + what + " after the end of the recorded iteration";
    return c;
  }
  const Op& op = plan_.ops[position_];
  if (op.kind != kind) {
    static const char* const kinds[] = {"kernel launch", "copy", "memset", "nothing", "graph launch"};  // OpKind order
    return mismatch(op, std::string("expected a ") + kinds[static_cast<int>(op.kind)] + ", the program issued a " + what);
  }
  // A call the program runs itself may come on another of its streams (XLA takes its host-to-device
  // streams in turn): everything before it is on the GPU on the streams the program used, and the
  // program orders the call as it does when it runs eagerly.
  if (op.program_stream != 0 && call.stream != op.program_stream && !runs_in_program(op)) {
    char text[96];
    std::snprintf(text, sizeof text, "issued on stream 0x%llx, recorded on 0x%llx",
                  static_cast<unsigned long long>(call.stream), static_cast<unsigned long long>(op.program_stream));
    return mismatch(op, text);
  }
  CallCheck result = check(op, call);
  if (!result.matches) return result;
  patches_[position_] = std::move(result.patches);  // the matcher's from now on (patches())
  host_ends_[position_] = result.host_end;
  ++position_;
  skip_empty();
  return result;
}

void IterationMatcher::take(const std::vector<ArgPatch>& patches) {
  if (complete()) return;
  patches_[position_] = patches;
  host_ends_[position_] = 0;
  ++position_;
  skip_empty();
}

CallCheck IterationMatcher::next(const KernelCall& call) {
  return advance(call, OpKind::Kernel, "kernel launch",
                 [&](const Op& op, const KernelCall& c) { return check_kernel_call(op, c, is_device_pointer_, rule_); });
}

CallCheck IterationMatcher::next(const CopyCall& call) {
  return advance(call, OpKind::Copy, "copy", [&](const Op& op, const CopyCall& c) { return check_copy_call(op, c, rule_); });
}

CallCheck IterationMatcher::next(const MemsetCall& call) {
  return advance(call, OpKind::Memset, "memset", [&](const Op& op, const MemsetCall& c) { return check_memset_call(op, c, rule_); });
}

CallCheck IterationMatcher::next(const GraphLaunchCall& call) {
  return advance(call, OpKind::Graph, "graph launch", [](const Op& op, const GraphLaunchCall& c) { return check_graph_launch(op, c); });
}

}  // namespace nimble::replayer
