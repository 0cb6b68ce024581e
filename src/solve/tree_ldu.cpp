#include "marsden/solve/tree_ldu.hpp"

#include <array>
#include <cmath>

namespace marsden {

namespace {

using Pivots = std::array<int, 6>;

// LU factors of a block with partial pivoting, in place (Eigen's generic LU goes through
// its blocked triangular solvers, several times slower at 6x6). The diagonal keeps the
// reciprocals of the pivots, so the solves only multiply.
void lu_factor(LduBlock& A, Pivots& pivots) {
#pragma GCC unroll 6
  for (int c = 0; c < 6; ++c) {
    int pivot = c;
#pragma GCC unroll 6
    for (int r = c + 1; r < 6; ++r) {
      if (std::abs(A(r, c)) > std::abs(A(pivot, c))) pivot = r;
    }
    pivots[c] = pivot;
    if (pivot != c) A.row(c).swap(A.row(pivot));
    const double inv = 1.0 / A(c, c);
#pragma GCC unroll 6
    for (int r = c + 1; r < 6; ++r) {
      A(r, c) *= inv;
#pragma GCC unroll 6
      for (int k = c + 1; k < 6; ++k) A(r, k) -= A(r, c) * A(c, k);
    }
    A(c, c) = inv;
  }
}

// A <- A^-1 from its pivoted LU factors, by row operations on the identity (row-major).
void invert(LduBlock& A) {
  Pivots pivots;
  lu_factor(A, pivots);
  LduBlock B = LduBlock::Identity();
  for (int c = 0; c < 6; ++c) {
    if (pivots[c] != c) B.row(c).swap(B.row(pivots[c]));
  }
#pragma GCC unroll 6
  for (int c = 0; c < 6; ++c) {
#pragma GCC unroll 6
    for (int r = c + 1; r < 6; ++r) B.row(r) -= A(r, c) * B.row(c);
  }
#pragma GCC unroll 6
  for (int c = 5; c >= 0; --c) {
    B.row(c) *= A(c, c);
#pragma GCC unroll 6
    for (int r = 0; r < c; ++r) B.row(r) -= A(r, c) * B.row(c);
  }
  A = B;
}

}  // namespace

const LduBlock& padded_zero_block(int m) {
  static const std::array<LduBlock, 7> blocks = [] {
    std::array<LduBlock, 7> out;
    for (int k = 0; k <= 6; ++k) {
      out[k].setIdentity();
      out[k].topLeftCorner(k, k).setZero();
    }
    return out;
  }();
  return blocks[m];
}

TreeLdu::TreeLdu(int num_nodes)
    : D(num_nodes, LduBlock::Zero()),
      up(num_nodes, LduBlock::Zero()),
      down(num_nodes, LduBlock::Zero()),
      padded_(num_nodes) {}

// D_i is replaced by its inverse (each Newton step solves with it three times or more, and a
// fixed 6x6 product beats two triangular substitutions); with U = D_i^-1 up_i, the parent's
// block loses down_i U. L = down_i D_i^-1 is applied in the solve, never formed.
void TreeLdu::factor(const BlockTree& tree) {
  for (const int i : tree.order) {
    invert(D[i]);
    const int p = tree.parent[i];
    if (p < 0) continue;
    const LduBlock U = D[i] * up[i];
    up[i] = U;
    D[p].noalias() -= down[i] * up[i];
  }
}

// y_i = D_i^-1 (x_i - sum over children of down_c y_c) from the leaves up, then
// x_i = y_i - U_i x_parent from the root down, on a copy padded to 6 rows per node (the
// padding stays zero), so every block product has fixed size.
void TreeLdu::solve(const BlockTree& tree, Eigen::Ref<Eigen::VectorXd> x) {
  auto& y = padded_;
  const int num_nodes = static_cast<int>(tree.parent.size());
  for (int i = 0; i < num_nodes; ++i) {
    y[i].setZero();
    y[i].head(tree.size[i]) = x.segment(tree.offset[i], tree.size[i]);
  }
  for (const int i : tree.order) {
    y[i] = (D[i] * y[i]).eval();
    const int p = tree.parent[i];
    if (p >= 0) y[p].noalias() -= down[i] * y[i];
  }
  for (auto it = tree.order.rbegin(); it != tree.order.rend(); ++it) {
    const int p = tree.parent[*it];
    if (p >= 0) y[*it].noalias() -= up[*it] * y[p];
  }
  for (int i = 0; i < num_nodes; ++i) {
    x.segment(tree.offset[i], tree.size[i]) = y[i].head(tree.size[i]);
  }
}

}  // namespace marsden
