#include "nimble/scheduler/synthetic.hpp"

#include <algorithm>
#include <random>
#include <vector>

namespace nimble::scheduler {
namespace {

class NetworkBuilder {
 public:
  explicit NetworkBuilder(std::uint64_t seed) : rng_(seed) {}

  Dag build(std::size_t tasks) {
    // Each forward layer brings about 1.3 backward tasks; 41% forward leaves about 5% of the tasks
    // to the optimizer, which absorbs the difference to the exact count.
    const std::size_t forward_target = std::max<std::size_t>(1, tasks * 41 / 100);
    NodeIndex x = layer({}, 5, 20);  // input copy to the device
    while (forward_.size() < forward_target) x = block(x);
    const NodeIndex loss = layer({x}, 2, 5);
    backward(loss);
    optimizer(tasks);
    dag_.predecessors.resize(std::min(tasks, dag_.size()));  // tiny sizes: cut; deps point back only
    dag_.durations_us.resize(dag_.predecessors.size());
    return std::move(dag_);
  }

 private:
  NodeIndex add(std::vector<NodeIndex> preds, double lo_us, double hi_us) {
    dag_.predecessors.push_back(std::move(preds));
    dag_.durations_us.push_back(std::uniform_real_distribution<double>(lo_us, hi_us)(rng_));
    return static_cast<NodeIndex>(dag_.size() - 1);
  }
  // A forward layer: remembered with its inputs for the backward pass.
  NodeIndex layer(std::vector<NodeIndex> inputs, double lo_us, double hi_us, bool weighted = false) {
    const NodeIndex v = add(inputs, lo_us, hi_us);
    forward_.push_back({v, std::move(inputs), weighted});
    return v;
  }
  NodeIndex conv(NodeIndex in) { return layer({in}, 8, 60, true); }
  NodeIndex pointwise(std::vector<NodeIndex> in) { return layer(std::move(in), 1, 6); }
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  NodeIndex conv_bn_relu(NodeIndex in, int convs) {
    for (int i = 0; i < convs; ++i) in = pointwise({pointwise({conv(in)})});
    return in;
  }

  NodeIndex block(NodeIndex in) {
    const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    NodeIndex out;
    if (r < 0.3) {
      out = conv_bn_relu(in, uniform(1, 2));
    } else if (r < 0.65) {  // residual: main path plus a skip, projected when shapes change
      const NodeIndex main = conv_bn_relu(in, uniform(1, 3));
      const NodeIndex skip = uniform(0, 3) == 0 ? conv(in) : in;
      out = pointwise({main, skip});
    } else if (r < 0.9) {  // Inception: parallel branches joined by a concatenation
      std::vector<NodeIndex> ends;
      for (int b = uniform(2, 5); b > 0; --b) ends.push_back(conv_bn_relu(in, uniform(1, 3)));
      out = layer(ends, 2, 8);
    } else {  // dense: concatenate this and earlier block outputs
      std::vector<NodeIndex> inputs{in};
      for (int k = uniform(1, 3); k > 0 && k <= static_cast<int>(outputs_.size()); --k) {
        inputs.push_back(outputs_[outputs_.size() - static_cast<std::size_t>(k)]);
      }
      out = conv_bn_relu(layer(inputs, 2, 8), 1);
    }
    outputs_.push_back(out);
    return out;
  }

  // Gradients flow from consumers to producers; each gradient also reads saved activations.
  void backward(NodeIndex loss) {
    std::vector<std::vector<NodeIndex>> consumers(dag_.size());
    for (const auto& f : forward_) {
      for (NodeIndex in : f.inputs) consumers[in].push_back(f.node);
    }
    std::vector<NodeIndex> grad_of(dag_.size(), kNoNode);
    const NodeIndex loss_grad = add({loss}, 1, 3);
    grad_of[loss] = loss_grad;
    for (auto f = forward_.rbegin(); f != forward_.rend(); ++f) {
      if (f->inputs.empty()) continue;  // the input copy needs no gradient
      std::vector<NodeIndex> upstream;
      for (NodeIndex c : consumers[f->node]) {
        if (grad_of[c] != kNoNode) upstream.push_back(grad_of[c]);
      }
      if (upstream.empty()) upstream.push_back(loss_grad);
      std::vector<NodeIndex> saved = upstream;
      if (uniform(0, 9) < 7) {
        saved.insert(saved.end(), f->inputs.begin(), f->inputs.end());
      } else {
        saved.push_back(f->node);
      }
      grad_of[f->node] = add(saved, f->weighted ? 10 : 1, f->weighted ? 70 : 7);
      if (f->weighted) {
        upstream.insert(upstream.end(), f->inputs.begin(), f->inputs.end());
        weight_grads_.push_back(add(upstream, 8, 60));
      }
    }
  }

  // Foreach-style optimizer (PyTorch's default on CUDA): each kernel updates a group of up to 16
  // parameters; a group runs a short chain of kernels (momentum, update). The remaining task count
  // is spread over the groups, so the total comes out exact.
  void optimizer(std::size_t tasks) {
    if (dag_.size() >= tasks || weight_grads_.empty()) return;
    const std::size_t remaining = tasks - dag_.size();
    const std::size_t w = weight_grads_.size();
    const std::size_t groups = std::min(remaining, (w + 15) / 16);
    for (std::size_t g = 0; g < groups; ++g) {
      std::vector<NodeIndex> grads(weight_grads_.begin() + static_cast<std::ptrdiff_t>(g * w / groups),
                                   weight_grads_.begin() + static_cast<std::ptrdiff_t>((g + 1) * w / groups));
      NodeIndex kernel = add(std::move(grads), 2, 10);
      const std::size_t length = remaining / groups + (g < remaining % groups ? 1 : 0);
      for (std::size_t k = 1; k < length; ++k) kernel = add({kernel}, 2, 10);
    }
  }

  struct ForwardLayer {
    NodeIndex node;
    std::vector<NodeIndex> inputs;
    bool weighted;
  };
  std::mt19937_64 rng_;
  Dag dag_;
  std::vector<ForwardLayer> forward_;
  std::vector<NodeIndex> outputs_;
  std::vector<NodeIndex> weight_grads_;
};

}  // namespace

Dag make_network_dag(std::size_t tasks, std::uint64_t seed) {
  if (tasks == 0) return {};
  return NetworkBuilder(seed).build(tasks);
}

Dag make_uniform_random_dag(std::size_t tasks, std::size_t predecessors, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> duration(1, 50);
  Dag dag;
  dag.predecessors.resize(tasks);
  for (NodeIndex v = 0; v < tasks; ++v) {
    for (std::size_t k = 0; k < predecessors && v > 0; ++k) {
      dag.predecessors[v].push_back(std::uniform_int_distribution<NodeIndex>(0, v - 1)(rng));
    }
    dag.durations_us.emplace_back(duration(rng));
  }
  return dag;
}

}  // namespace nimble::scheduler
