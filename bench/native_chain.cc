// native_chain.cc — the C++ core's own cost per step of explicit RATTLE on
// the planar hanging chain of N unit links (bench/native_chain.sh):
//   H = |p|^2/2 + sum_k y_k,  g_k(q) = |x_k - x_{k-1}|^2 - 1  (x_0 = 0),
// q = [x_1; y_1; x_2; y_2; ...] (G banded, 4 nonzeros a row), released at
// rest from the zigzag of links at 0.2 and 0.6 rad below the horizontal,
// h = 0.01: SparseSeparableRattle (Rattle's separable path for a sparse
// G), the case of the Google Test SparseRattle.DISABLED_TimePerStep.
//
// Callbacks: the chain's own C++ (f a plain function; g; G written in
// place into arrays holding its fixed compressed-column pattern and read
// in place by the core through set_sparse_constraint_grad_view), or with
// MODEL.so the kernels of a model built by odepkg_model, attached as the
// oct-file attaches them (OctaveCallbacks.h, set_native): the model's
// kernels in the core without Octave.
//
// Runs max(WARM + STEPS, CHECK) steps from t = 0; the CPU time of each of
// the STEPS steps after the first WARM is taken (the thread's CPU clock);
// prints their median, mean and smallest, the calls per step, and writes the
// state after CHECK steps to OUT (4N doubles, native byte order).
//   native_chain N WARM STEPS CHECK OUT [MODEL.so]
#include "EigenConfig.hpp"
#include "binding/NativeKernels.h"
#include "constrained/Rattle.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <vector>

using namespace odepkg;
using odepkg::binding::NativeKernels;

namespace {

double thread_cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * t.tv_sec + 1e-6 * t.tv_nsec;
}

/// f = [H_p; -H_q] = [p; 0, -1, 0, -1, ...].
void chain_field(double, const ConstVecRef& x, VecRef dx) {
  const Eigen::Index d = x.size() / 2;
  dx.head(d) = x.tail(d);
  for (Eigen::Index i = 0; i < d; i += 2) {
    dx(d + i) = 0.0;
    dx(d + i + 1) = -1.0;
  }
}

/// g and G of the chain; G (N x 2N) kept in compressed columns: column
/// 2k (x_{k+1}) holds rows k and k+1 (the last column row N-1 only), the
/// pattern set once, the values written in place at every call.
class ChainConstraints {
 public:
  explicit ChainConstraints(int N) : N_(N), outer_(2 * N + 1), inner_(), values_() {
    for (int j = 0; j < 2 * N; ++j) {
      const int k = j / 2;  // link k+1 starts at mass k+1 (0-based k)
      outer_[j] = static_cast<int>(inner_.size());
      inner_.push_back(k);
      if (k + 1 < N) inner_.push_back(k + 1);
    }
    outer_[2 * N] = static_cast<int>(inner_.size());
    values_.resize(inner_.size());
  }

  void g(const ConstVecRef& q, VecRef out) const {
    for (int k = 0; k < N_; ++k) {
      const double ax = q(2 * k) - (k ? q(2 * k - 2) : 0.0), ay = q(2 * k + 1) - (k ? q(2 * k - 1) : 0.0);
      out(k) = ax * ax + ay * ay - 1.0;
    }
  }

  /// dg_k/dx_k = 2 (x_k - x_{k-1}) and dg_{k+1}/dx_k = -2 (x_{k+1} - x_k):
  /// column j of coordinate c of mass k holds 2 a_k(c), then -2 a_{k+1}(c).
  void G(const ConstVecRef& q, HamiltonianProblem::GradSink& sink) {
    double* v = values_.data();
    for (int k = 0; k < N_; ++k)
      for (int c = 0; c < 2; ++c) {
        const int j = 2 * k + c;
        *v++ = 2.0 * (q(j) - (k ? q(j - 2) : 0.0));
        if (k + 1 < N_) *v++ = -2.0 * (q(j + 2) - q(j));
      }
    sink(CscView<int>{N_, 2 * N_, static_cast<Eigen::Index>(values_.size()), outer_.data(), inner_.data(),
                      values_.data()});
  }

 private:
  int N_;
  std::vector<int> outer_, inner_;
  std::vector<double> values_;
};

/// The zigzag at rest: link k at angle 0.2 (k odd, 1-based) or 0.6 (k even)
/// below the horizontal, masses at the cumulative sums.
Vec zigzag(int N) {
  Vec x = Vec::Zero(4 * N);
  double px = 0.0, py = 0.0;
  for (int k = 0; k < N; ++k) {
    const double a = k % 2 ? 0.6 : 0.2;
    px += std::cos(a);
    py -= std::sin(a);
    x(2 * k) = px;
    x(2 * k + 1) = py;
  }
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: native_chain N WARM STEPS CHECK OUT [MODEL.so]\n");
    return 2;
  }
  const int N = std::atoi(argv[1]), warm = std::atoi(argv[2]), steps = std::atoi(argv[3]),
            check = std::atoi(argv[4]);
  const char* out = argv[5];
  const bool model = argc > 6;
  const int d = 2 * N;
  const double h = 0.01;

  std::unique_ptr<NativeKernels> k;
  ChainConstraints chain(N);
  std::unique_ptr<HamiltonianProblem> P;
  if (model) {  // as OctaveProblem::set_native (a sparse model)
    k = std::make_unique<NativeKernels>(argv[6], d, N, std::vector<double>());
    NativeKernels* kk = k.get();
    P = std::make_unique<HamiltonianProblem>(
        d, [kk](double t, const ConstVecRef& x, VecRef dx) { kk->field(t, x, dx); });
    P->set_hessian([kk](double t, const ConstVecRef& x, MatRef H) { kk->hessian(t, x, H); });
    P->set_constraints(
        N, [kk](const ConstVecRef& q, VecRef g) { kk->constraint(q, g); },
        [kk](const ConstVecRef& q, MatRef G) { kk->constraint_grad(q, G); });
    P->set_sparse_constraint_grad_view(
        [kk](const ConstVecRef& q, HamiltonianProblem::GradSink& sink) { kk->constraint_grad_view(q, sink); });
    P->set_sparse_hessian([kk](double t, const ConstVecRef& x, SpMat& H) { kk->hessian_sparse(t, x, H); });
  } else {
    P = std::make_unique<HamiltonianProblem>(d, &chain_field);
    ChainConstraints* c = &chain;
    P->set_constraints(N, [c](const ConstVecRef& q, VecRef g) { c->g(q, g); });
    P->set_sparse_constraint_grad_view(
        [c](const ConstVecRef& q, HamiltonianProblem::GradSink& sink) { c->G(q, sink); });
  }
  Rattle r(*P, true);
  if (!r.sparse_separable()) {
    std::fprintf(stderr, "native_chain: not on the sparse separable path\n");
    return 1;
  }

  Point a(2 * d), b(2 * d);
  a.set(0.0, zigzag(N));
  const int total = std::max(warm + steps, check);
  std::vector<double> ms;
  ms.reserve(steps);
  Stats s0;
  for (int i = 0; i < total; ++i) {
    if (i == warm) s0 = P->stats();
    const bool timed = i >= warm && i < warm + steps;
    const double t0 = timed ? thread_cpu_ms() : 0.0;
    const StepStatus st = r.step(a, h, b);
    if (timed) ms.push_back(thread_cpu_ms() - t0);
    if (st != StepStatus::Success) {
      std::fprintf(stderr, "native_chain: step %d failed: %s\n", i, describe(st));
      return 1;
    }
    b.t = (i + 1) * h;
    std::swap(a, b);
    if (i + 1 == check) {
      std::FILE* f = std::fopen(out, "wb");
      if (!f || std::fwrite(a.x.data(), sizeof(double), a.x.size(), f) != static_cast<size_t>(a.x.size())) {
        std::fprintf(stderr, "native_chain: cannot write %s\n", out);
        return 1;
      }
      std::fclose(f);
    }
    if (i + 1 == warm + steps) {
      const Stats& s1 = P->stats();
      const double n = steps;
      std::printf("calls_per_step f %.3f g %.3f G %.3f newton %.3f\n", (s1.field_evals - s0.field_evals) / n,
                  (s1.constraint_evals - s0.constraint_evals) / n,
                  (s1.constraint_grad_evals - s0.constraint_grad_evals) / n,
                  (s1.newton_iterations - s0.newton_iterations) / n);
    }
  }
  double sum = 0.0;
  for (double v : ms) sum += v;
  std::sort(ms.begin(), ms.end());
  std::printf("ms_per_step median %.6f mean %.6f min %.6f (%s, N = %d, %d steps timed after %d)\n",
              ms[ms.size() / 2], sum / steps, ms[0], model ? "model's kernels" : "own callbacks", N, steps, warm);
  return 0;
}
