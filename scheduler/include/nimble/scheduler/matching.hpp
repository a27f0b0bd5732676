// Maximum bipartite matching (Hopcroft-Karp).
#pragma once

#include <cstddef>
#include <vector>

#include "nimble/scheduler/dag.hpp"

namespace nimble::scheduler {

struct Matching {
  std::vector<NodeIndex> right_of_left;  // kNoNode when the left vertex is unmatched
  std::vector<NodeIndex> left_of_right;  // kNoNode when the right vertex is unmatched
  std::size_t size = 0;
};

// A maximum matching of the bipartite graph whose left vertex u has edges to the right vertices
// left_to_right[u] (each below right_count). O(E sqrt(V)).
Matching maximum_matching(const Adjacency& left_to_right, std::size_t right_count);

}  // namespace nimble::scheduler
