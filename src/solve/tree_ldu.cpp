#include "marsden/solve/tree_ldu.hpp"

#include <array>
#include <cmath>
#include <utility>

namespace marsden {

namespace {

// LU factors of the leading M x M block with partial pivoting, in place (Eigen's generic LU
// goes through its blocked triangular solvers, several times slower at 6x6). The diagonal
// keeps the reciprocals of the pivots, so the substitutions only multiply.
template <int M>
void lu_factor(LduBlock& A, TreeLdu::Pivots& pivots) {
#pragma GCC unroll 6
  for (int c = 0; c < M; ++c) {
    int pivot = c;
#pragma GCC unroll 6
    for (int r = c + 1; r < M; ++r) {
      if (std::abs(A(r, c)) > std::abs(A(pivot, c))) pivot = r;
    }
    pivots[c] = pivot;
    if (pivot != c) A.row(c).head<M>().swap(A.row(pivot).head<M>());
    const double inv = 1.0 / A(c, c);
#pragma GCC unroll 6
    for (int r = c + 1; r < M; ++r) {
      A(r, c) *= inv;
#pragma GCC unroll 6
      for (int k = c + 1; k < M; ++k) A(r, k) -= A(r, c) * A(c, k);
    }
    A(c, c) = inv;
  }
}

// X <- A^-1 X for the first M rows of X (a block or a vector), with the LU factors of
// lu_factor<M>: the row permutation, then the two substitutions as row operations.
template <int M, class Rows>
void lu_solve(const LduBlock& A, const TreeLdu::Pivots& pivots, Rows& X) {
#pragma GCC unroll 6
  for (int c = 0; c < M; ++c) {
    if (pivots[c] != c) X.row(c).swap(X.row(pivots[c]));
  }
#pragma GCC unroll 6
  for (int c = 0; c < M; ++c) {
#pragma GCC unroll 6
    for (int r = c + 1; r < M; ++r) X.row(r) -= A(r, c) * X.row(c);
  }
#pragma GCC unroll 6
  for (int c = M - 1; c >= 0; --c) {
    X.row(c) *= A(c, c);
#pragma GCC unroll 6
    for (int r = 0; r < c; ++r) X.row(r) -= A(r, c) * X.row(c);
  }
}

// x <- A^-1 x on the first M rows of a padded node vector, as lu_solve, on scalars.
template <int M>
void lu_solve_vector(const LduBlock& A, const TreeLdu::Pivots& pivots,
                     Eigen::Matrix<double, 6, 1>& x) {
  double v[6];
#pragma GCC unroll 6
  for (int c = 0; c < M; ++c) v[c] = x[c];
#pragma GCC unroll 6
  for (int c = 0; c < M; ++c) std::swap(v[c], v[pivots[c]]);
#pragma GCC unroll 6
  for (int c = 0; c < M; ++c) {
#pragma GCC unroll 6
    for (int r = c + 1; r < M; ++r) v[r] -= A(r, c) * v[c];
  }
#pragma GCC unroll 6
  for (int c = M - 1; c >= 0; --c) {
    v[c] *= A(c, c);
#pragma GCC unroll 6
    for (int r = 0; r < c; ++r) v[r] -= A(r, c) * v[c];
  }
#pragma GCC unroll 6
  for (int c = 0; c < M; ++c) x[c] = v[c];
}

// Calls f.template operator()<M>() with a node's size m in 1..6 as a constant.
template <class F>
void with_size(int m, F&& f) {
  switch (m) {
    case 1: return f.template operator()<1>();
    case 2: return f.template operator()<2>();
    case 3: return f.template operator()<3>();
    case 4: return f.template operator()<4>();
    case 5: return f.template operator()<5>();
    default: return f.template operator()<6>();
  }
}

// Calls f.template operator()<Mi, Mp>() with the sizes of a node and of its parent (Mp = 0
// for a root) where they are those of the usual nodes (bodies 6, joints 5 or 3), and with
// the padded sizes 6, 6 otherwise: the padding's identity diagonal and zero couplings give
// the same factors, so the fixed sizes only skip work on zero blocks.
template <class F>
void with_sizes(int mi, int mp, F&& f) {
  if (mp == 0) {
    switch (mi) {
      case 5: return f.template operator()<5, 0>();
      case 3: return f.template operator()<3, 0>();
      default: return f.template operator()<6, 0>();
    }
  }
  if (mi == 6 && mp == 5) return f.template operator()<6, 5>();
  if (mi == 5 && mp == 6) return f.template operator()<5, 6>();
  if (mi == 6 && mp == 3) return f.template operator()<6, 3>();
  if (mi == 3 && mp == 6) return f.template operator()<3, 6>();
  return f.template operator()<6, 6>();
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
      pivots_(num_nodes),
      padded_(num_nodes) {}

// D_i is replaced by its LU factors and up_i by U = D_i^-1 up_i, by substitution (cheaper
// than forming D_i^-1 and multiplying); the parent's block loses down_i U. L = down_i D_i^-1
// is applied in the solve, never formed. The work runs over the nodes' rows only
// (with_sizes).
void TreeLdu::factor(const BlockTree& tree) {
  for (const int i : tree.order) {
    const int p = tree.parent[i];
    with_sizes(tree.size[i], p < 0 ? 0 : tree.size[p], [&]<int Mi, int Mp>() {
      lu_factor<Mi>(D[i], pivots_[i]);
      if constexpr (Mp > 0) {
        Eigen::Matrix<double, Mi, Mp, Eigen::RowMajor> U = up[i].topLeftCorner<Mi, Mp>();
        lu_solve<Mi>(D[i], pivots_[i], U);
        up[i].topLeftCorner<Mi, Mp>() = U;
        D[p].topLeftCorner<Mp, Mp>().noalias() -= down[i].topLeftCorner<Mp, Mi>() * U;
      }
    });
  }
}

// y_i = D_i^-1 (x_i - sum over children of down_c y_c) from the leaves up, then
// x_i = y_i - U_i x_parent from the root down, on a copy padded to 6 rows per node (the
// padding stays zero), so every block product has fixed size; the copies and the
// substitutions run at each node's fixed size (with_size).
void TreeLdu::solve(const BlockTree& tree, Eigen::Ref<Eigen::VectorXd> x) {
  auto& y = padded_;
  const int num_nodes = static_cast<int>(tree.parent.size());
  for (int i = 0; i < num_nodes; ++i) {
    with_size(tree.size[i], [&]<int M>() {
      y[i].head<M>() = x.segment<M>(tree.offset[i]);
      y[i].tail<6 - M>().setZero();
    });
  }
  for (const int i : tree.order) {
    with_size(tree.size[i], [&]<int M>() { lu_solve_vector<M>(D[i], pivots_[i], y[i]); });
    const int p = tree.parent[i];
    if (p >= 0) y[p].noalias() -= down[i] * y[i];
  }
  for (auto it = tree.order.rbegin(); it != tree.order.rend(); ++it) {
    const int p = tree.parent[*it];
    if (p >= 0) y[*it].noalias() -= up[*it] * y[p];
  }
  for (int i = 0; i < num_nodes; ++i) {
    with_size(tree.size[i], [&]<int M>() { x.segment<M>(tree.offset[i]) = y[i].head<M>(); });
  }
}

}  // namespace marsden
