// Block LDU factorisation and solve of a sparse matrix whose graph is a tree, in time linear
// in the number of nodes (maximal-coordinates paper §4.2, Algorithms 3 and 4). Node i holds
// a diagonal block D_i and, unless it is a root, the couplings up_i = F(i, parent) and
// down_i = F(parent, i). Every block is stored as a fixed 6x6: a node with m < 6 rows is
// padded with an identity diagonal and zero couplings (padded_zero_block), which leaves the
// factors of its m rows unchanged and lets the small products and factorisations unroll.
#pragma once

#include <array>
#include <span>
#include <vector>

#include <Eigen/Core>

namespace marsden {

using LduBlock = Eigen::Matrix<double, 6, 6, Eigen::RowMajor>;

// The graph: nodes in an order with children before parents.
struct BlockTree {
  std::span<const int> order;   // leaves to root
  std::span<const int> parent;  // per node, -1 for a root
  std::span<const int> size;    // per node, rows <= 6
  std::span<const int> offset;  // per node, first row in the stacked vector
};

// A zero diagonal block of m rows, padded with the identity.
const LduBlock& padded_zero_block(int m);

class TreeLdu {
 public:
  explicit TreeLdu(int num_nodes);

  using Pivots = std::array<int, 6>;

  // The matrix, filled by the caller; factor() overwrites D with its pivoted LU factors and
  // up with D^-1 up.
  std::vector<LduBlock> D, up, down;

  // Algorithm 3, in place, children before parents. A singular block gives non-finite
  // entries, which the caller's Newton loop reports.
  void factor(const BlockTree& tree);
  // Algorithm 4 with the factors: x <- F^-1 x on the tree's rows, in place.
  void solve(const BlockTree& tree, Eigen::Ref<Eigen::VectorXd> x);

 private:
  std::vector<Pivots> pivots_;                       // of each D's LU factors
  std::vector<Eigen::Matrix<double, 6, 1>> padded_;  // solve's node-padded copy
};

}  // namespace marsden
