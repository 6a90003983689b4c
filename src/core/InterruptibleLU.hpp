// InterruptibleLU.hpp — LU with partial pivoting, P A = L U, that polls for
// an interrupt (Interrupt.hpp) between panels of a large factorization.
//
// Up to kBlockedMin unknowns it is Eigen's PartialPivLU.  Above, a right-
// looking blocked LU (Golub & Van Loan, Matrix Computations, Alg. 3.4.2):
// for each panel of kPanel columns, an unblocked factorization with row
// interchanges, the triangular solve for the block row of U, and the
// Schur-complement update A22 -= L21 U12 (one GEMM, where the time goes).
// Same arithmetic as Eigen's, at the same speed (measured in
// interrupt_test), but an LU of 4500 unknowns (SPVI, Q = P = 8, d = 250)
// no longer keeps Ctrl-C waiting for its 2.5 s: the poll comes between
// panels and between column chunks of the update.
#ifndef ODEPKG_INTERRUPTIBLE_LU_HPP
#define ODEPKG_INTERRUPTIBLE_LU_HPP

#include "Interrupt.hpp"
#include "Types.hpp"

#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <utility>

namespace odepkg {

class InterruptibleLU {
 public:
  static constexpr Eigen::Index kBlockedMin = 384;  ///< smaller: Eigen's LU, no polls
  static constexpr Eigen::Index kPanel = 96;
  static constexpr Eigen::Index kChunk = 512;  ///< columns of the update between polls

  explicit InterruptibleLU(Eigen::Index n = 0)
      : small_(n <= kBlockedMin ? n : 0),
        lu_(n > kBlockedMin ? n : 0, n > kBlockedMin ? n : 0),
        piv_(n > kBlockedMin ? n : 0) {}

  /// Factorizes A (n x n, the size given at construction).
  void compute(const Eigen::Ref<const Mat>& A) {
    const Eigen::Index n = A.rows();
    if (n <= kBlockedMin) {
      small_.compute(A);
      return;
    }
    lu_ = A;
    for (Eigen::Index k0 = 0; k0 < n; k0 += kPanel) {
      poll_interrupt();
      const Eigen::Index b = std::min(kPanel, n - k0);
      factor_panel(k0, b);
      const Eigen::Index rest = n - k0 - b;
      if (rest == 0) break;
      // U12 = L11^{-1} A12, then A22 -= L21 U12.
      lu_.block(k0, k0 + b, b, rest) =
          lu_.block(k0, k0, b, b).triangularView<Eigen::UnitLower>().solve(lu_.block(k0, k0 + b, b, rest));
      // The update in column chunks, a poll between them: one panel's whole
      // update of 4500 unknowns is 4 GFlop, 0.3 s.
      for (Eigen::Index c = 0; c < rest; c += kChunk) {
        const Eigen::Index w = std::min(kChunk, rest - c);
        lu_.block(k0 + b, k0 + b + c, rest, w).noalias() -=
            lu_.block(k0 + b, k0, rest, b) * lu_.block(k0, k0 + b + c, b, w);
        if (c + w < rest) poll_interrupt();
      }
    }
  }

  /// x = A^{-1} r (x may not alias r).
  template <class In, class Out>
  void solve(const In& r, Out&& x) const {
    const Eigen::Index n = r.size();
    if (n <= kBlockedMin) {
      x.noalias() = small_.solve(r);
      return;
    }
    x = r;
    for (Eigen::Index k = 0; k < n; ++k)
      if (piv_(k) != k) std::swap(x(k), x(piv_(k)));
    lu_.triangularView<Eigen::UnitLower>().solveInPlace(x);
    lu_.triangularView<Eigen::Upper>().solveInPlace(x);
  }

 private:
  /// Unblocked LU of columns k0 .. k0+b-1 (rows k0 .. n-1), interchanging
  /// whole rows.  A zero pivot column is left as is (U singular), as Eigen does.
  void factor_panel(Eigen::Index k0, Eigen::Index b) {
    const Eigen::Index n = lu_.rows();
    for (Eigen::Index k = k0; k < k0 + b; ++k) {
      Eigen::Index p;
      lu_.col(k).tail(n - k).cwiseAbs().maxCoeff(&p);
      p += k;
      piv_(k) = static_cast<int>(p);
      if (p != k) lu_.row(k).swap(lu_.row(p));
      const double pivot = lu_(k, k);
      if (pivot != 0.0) lu_.col(k).tail(n - k - 1) /= pivot;
      const Eigen::Index cols = k0 + b - k - 1;
      if (cols > 0)
        lu_.block(k + 1, k + 1, n - k - 1, cols).noalias() -=
            lu_.col(k).tail(n - k - 1) * lu_.row(k).segment(k + 1, cols);
    }
  }

  Eigen::PartialPivLU<Mat> small_;
  Mat lu_;
  Eigen::VectorXi piv_;
};

}  // namespace odepkg

#endif
