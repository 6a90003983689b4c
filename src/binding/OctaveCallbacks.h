// OctaveCallbacks.h — the user's function handles as core callbacks.  Each
// call goes through octave::feval with the extra arguments appended, and its
// result is checked (class, size) before it is copied into the core's buffer.
#ifndef ODEPKG_BINDING_OCTAVE_CALLBACKS_H
#define ODEPKG_BINDING_OCTAVE_CALLBACKS_H

#include "EigenConfig.hpp"
#include "CallbackHeap.hpp"
#include "HamiltonianProblem.hpp"
#include "constrained/ConstraintSet.hpp"
#include "constrained/FibreMap.hpp"
#include "NativeKernels.h"

#include <octave/interpreter.h>
#include <octave/oct.h>
#include <octave/parse.h>

#include <functional>
#include <limits>
#include <memory>
#include <string>

namespace odepkg::binding {

/// One Octave array in which a method builds the next argument of the
/// user's functions (HamiltonianProblem::argument_buffer): a UserFunction
/// handed a vector at its address passes the array itself, or a shallow
/// slice of its head (Array::index of a contiguous range shares the data),
/// instead of copying the vector into the interpreter (at 2*10^5
/// coordinates, 8 MB a step of the sparse chain's RATTLE).  Value semantics
/// hold: a function that keeps its argument shares the array, and the
/// next buffer() is then a copy (fortran_vec's copy-on-write), so the
/// method never writes what the user holds.
class ArgumentArena {
 public:
  /// n numbers to write, unshared, valid until the next user call.
  double* buffer(octave_idx_type n) {
    if (a_.numel() != n) a_ = NDArray(dim_vector(n, 1));
    return a_.fortran_vec();
  }
  /// x is the array's head (a non-empty vector at its address).
  bool holds(const ConstVecRef& x) const {
    return x.size() > 0 && x.size() <= a_.numel() && x.data() == a_.data();
  }
  /// The head of n numbers as an argument: the array, or a slice of it.
  octave_value argument(octave_idx_type n) const {
    if (n == a_.numel()) return a_;
    return NDArray(a_.index(octave::idx_vector(0, n)));
  }

 private:
  NDArray a_;
};

/// Calls one user function with (t, x, extra...) or (x, extra...).
class UserFunction {
 public:
  UserFunction(octave_value fcn, const octave_value_list& extra, std::string who,
               std::string option, bool with_time)
      : fcn_(std::move(fcn)), who_(std::move(who)), option_(std::move(option)), with_time_(with_time) {
    const int k = with_time ? 2 : 1;
    args_.resize(k + extra.length());
    for (int i = 0; i < extra.length(); ++i) args_(k + i) = extra(i);
  }

  /// Vectors in `arena` are passed as they are (ArgumentArena); it must
  /// outlive this object.
  void set_arena(const ArgumentArena* arena) { arena_ = arena; }

  /// As call(), with a second vector argument: fcn (x, s, extra...) (the
  /// fibre flow ConstraintFlowFcn).
  const double* call2(const ConstVecRef& x, const ConstVecRef& s, octave_idx_type numel, const char* shape) {
    ColumnVector so(s.size());
    std::copy(s.data(), s.data() + s.size(), so.fortran_vec());
    second_ = so;
    have_second_ = true;
    const double* r = call(0.0, x, numel, shape);
    have_second_ = false;
    return r;
  }

  /// Evaluates and returns the first output as an NDArray of exactly `numel`
  /// real elements (else an odepkg:badFcnOutput error naming the option).
  /// `rows` >= 0: the result must also have that many rows (matrices whose
  /// transpose has the same number of elements).
  const double* call(double t, const ConstVecRef& x, octave_idx_type numel, const char* shape,
                     octave_idx_type rows = -1) {
    const octave_value_list r = evaluate(t, x);
    // integer classes are refused: their values were rounded by the user's
    // function (int32 (x)), which the solver cannot undo
    if (r.length() < 1 || r(0).isempty() || !(r(0).isnumeric() || r(0).islogical()) ||
        r(0).isinteger() || r(0).iscomplex() || r(0).numel() != numel ||
        (rows >= 0 && r(0).rows() != rows))
      error_with_id("odepkg:badFcnOutput", "%s: %s must return a real %s (%ld elements)%s",
                    who_.c_str(), option_.c_str(), shape, static_cast<long>(numel),
                    describe_result(r).c_str());
    // a sparse result made dense only where that is small (the separable
    // RATTLE/SHAKE take a sparse ConstraintGradFcn as it is: call_sparse)
    if (r(0).issparse() && static_cast<double>(numel) > kMaxDensifiedEntries)
      error_with_id("odepkg:sparseGradient",
                    "%s: %s returned a sparse %s matrix, which this method would have to make dense (%g > 4e6 "
                    "entries): sparse constraint gradients are used as such only by odeRATTLE/odeSHAKE with "
                    "\"Explicit\", \"yes\" (a separable H = T(p) + V(q)) and constraints g(q)",
                    who_.c_str(), option_.c_str(), r(0).dims().str().c_str(), static_cast<double>(numel));
    result_ = r(0).array_value();
    return result_.data();
  }

  /// Evaluates the function at x and converts its first output, an m-by-n
  /// sparse matrix (or a full one, made sparse: its nonzeros), to Eigen's
  /// compressed columns: the column pointers, row indices and values of
  /// Octave's SparseMatrix copied as they are, O(nnz), never dense.  For
  /// m = 1 an n-by-1 result is taken as its transpose.
  void call_sparse(const ConstVecRef& x, octave_idx_type m, octave_idx_type n, SpMat& out) {
    call_sparse(0.0, x, m, n, out);
  }
  /// As call_sparse(x, ...), for a function of (t, x) (HamiltonianHessFcn).
  void call_sparse(double t, const ConstVecRef& x, octave_idx_type m, octave_idx_type n, SpMat& out) {
    sparse_to_eigen(sparse_result(t, x, m, n), out);
  }

  /// As call_sparse(x, ...), with the result passed to `sink` as a view of
  /// Octave's arrays (CscView, read in place, no copy; the matrix lives
  /// until the sink returns).
  template <class Sink>
  void view_sparse(const ConstVecRef& x, octave_idx_type m, octave_idx_type n, Sink& sink) {
    const SparseMatrix sm = sparse_result(0.0, x, m, n);  // const: cidx() etc. of a non-const one copy if shared
    check_nonzeros(sm);
    sink(CscView<octave_idx_type>{sm.rows(), sm.cols(), sm.nnz(), sm.cidx(), sm.ridx(), sm.data()});
  }

  /// The function's first output at (t, x) as an m-by-n SparseMatrix
  /// (checked; a full one made sparse, an n-by-1 one transposed for m = 1).
  SparseMatrix sparse_result(double t, const ConstVecRef& x, octave_idx_type m, octave_idx_type n) {
    const octave_value_list r = evaluate(t, x);
    const bool shape_ok = r.length() >= 1 && ((r(0).rows() == m && r(0).columns() == n) ||
                                              (m == 1 && r(0).rows() == n && r(0).columns() == 1));
    if (!shape_ok || !(r(0).isnumeric() || r(0).islogical()) || r(0).isinteger() || r(0).iscomplex() ||
        r(0).ndims() != 2)
      error_with_id("odepkg:badFcnOutput", "%s: %s must return a real %ld-by-%ld matrix (sparse or full)%s",
                    who_.c_str(), option_.c_str(), static_cast<long>(m), static_cast<long>(n),
                    describe_result(r).c_str());
    SparseMatrix sm = r(0).sparse_matrix_value();
    if (sm.rows() != m) sm = sm.transpose();
    return sm;
  }

  /// Octave's SparseMatrix (CSC, sorted row indices, no duplicates) as an
  /// Eigen SpMat: the three arrays copied, the index type narrowed to int.
  static void sparse_to_eigen(const SparseMatrix& sm, SpMat& out) {
    check_nonzeros(sm);
    to_spmat(CscView<octave_idx_type>{sm.rows(), sm.cols(), sm.nnz(), sm.cidx(), sm.ridx(), sm.data()}, out);
  }

  /// The core's matrices have int indices.
  static void check_nonzeros(const SparseMatrix& sm) {
    if (sm.nnz() > std::numeric_limits<int>::max())
      error_with_id("odepkg:invalidInput", "a sparse matrix with more than 2^31 nonzeros is not supported");
  }

  /// The first output of the function at x, once, kept for the next call
  /// at exactly this x (which then calls nothing): a probe of what the
  /// function returns costs no extra call.
  octave_value prime(double t, const ConstVecRef& x) {
    const octave_value_list r = evaluate(t, x);
    primed_x_ = x;
    primed_t_ = t;
    primed_ = r;
    have_primed_ = true;
    return r.length() >= 1 ? r(0) : octave_value();
  }

  /// As prime(), with a result already computed at (t, x).
  void prime_with(double t, const ConstVecRef& x, const octave_value& value) {
    primed_x_ = x;
    primed_t_ = t;
    primed_ = octave_value_list(value);
    have_primed_ = true;
  }

 private:
  /// The user's function at (t, x): its outputs (or the primed ones).
  octave_value_list evaluate(double t, const ConstVecRef& x) {
    if (have_primed_) {
      have_primed_ = false;
      if (primed_t_ == t && primed_x_.size() == x.size() && (primed_x_.array() == x.array()).all()) {
        octave_value_list r = primed_;
        primed_ = octave_value_list();
        return r;
      }
      primed_ = octave_value_list();
    }
    int k = 0;
    if (with_time_) args_(k++) = t;
    args_(k) = octave_value();  // drop the last call's reference to xo_ (after an error)
    if (arena_ && arena_->holds(x)) {
      args_(k) = arena_->argument(x.size());  // read in place (ArgumentArena)
    } else {
      // One argument array for all calls: a fresh one would be allocated and
      // zero-filled by Octave on every call (for a state of 10^6 numbers that
      // cost 9x the user's f).  fortran_vec() copies only if the user's
      // function kept a reference to the previous x (copy-on-write).
      if (xo_.numel() != x.size()) xo_ = ColumnVector(x.size());
      std::copy(x.data(), x.data() + x.size(), xo_.fortran_vec());
      args_(k) = static_cast<const ColumnVector&>(xo_);
    }
    octave_value_list r;
    if (have_second_) {  // (x, s, extra...)
      octave_value_list a(args_.length() + 1);
      a(0) = args_(k);
      a(1) = second_;
      for (int i = 1; i < args_.length(); ++i) a(i + 1) = args_(i);
      r = octave::feval(fcn_, a, 1);
    } else {
      r = octave::feval(fcn_, args_, 1);
    }
    // the argument's array unshared again unless the function kept it (the
    // next fortran_vec() of xo_ or the arena then copies nothing)
    args_(k) = octave_value();
    return r;
  }

  static std::string describe_result(const octave_value_list& r) {
    if (r.length() < 1) return ", but returned nothing";
    const dim_vector dv = r(0).dims();
    std::string s = ", but returned a " + dv.str() + " " + r(0).class_name();
    if (r(0).iscomplex()) s += " (complex)";
    if (r(0).isinteger()) s += " (an integer class: values already rounded)";
    return s;
  }

  octave_value fcn_;
  std::string who_, option_;
  bool with_time_;
  octave_value_list args_;
  const ArgumentArena* arena_ = nullptr;
  ColumnVector xo_;
  NDArray result_;
  octave_value second_;
  bool have_second_ = false;
  Vec primed_x_;
  double primed_t_ = 0.0;
  octave_value_list primed_;
  bool have_primed_ = false;
};

/// The octave_value handles of one problem, as read from the options.
struct UserFunctions {
  octave_value f, hessian, g, G, GH, flow;
  int m = 0;
  /// NonholonomicFcn: A(q), k x d, of the velocity constraints A(q) H_p = 0 (k = 0: none).
  octave_value A;
  int k = 0;
  /// ConstraintVariables "qp": g, G, GH take y = [q; p] (m, m x 2d,
  /// 2d x 2d x m) and flow (y, s) is exp(sum s_i X_{g_i})(y).
  bool phase_space = false;
  /// A model of odepkg_model: its compiled kernels are f, the Hessian of H,
  /// g and G (the octave_values above are then not called).
  NativeKernels* native = nullptr;
  /// odeVV with a model: f = [v; a] on the state [q; v] (NativeModel.h's
  /// VelocityMap) in place of the kernels' [H_p; -H_q]; the Hessian of H,
  /// not the Jacobian of this f, is then not given to the core.
  HamiltonianProblem::Field native_velocity_field;
};

/// Builds the core problem; the UserFunction objects live as long as it does.
class OctaveProblem {
 public:
  OctaveProblem(const UserFunctions& u, int d, const octave_value_list& extra, const std::string& who)
      : field_shape_(who == "odeVV" || who == "velocity_verlet" ? "column vector [v; a]"
                                                                : "column vector [dH/dp; -dH/dq]"),
        f_(u.f, extra, who, "the ODE function F", true),
        hess_(u.hessian, extra, who, "HamiltonianHessFcn", true),
        g_(u.g, extra, who, "ConstraintFcn", false),
        G_(u.G, extra, who, "ConstraintGradFcn", false),
        GH_(u.GH, extra, who, "ConstraintHessFcn", false),
        flow_(u.flow, extra, who, "ConstraintFlowFcn", false),
        A_(u.A, extra, who, "NonholonomicFcn", false),
        u_(u),
        problem_(d, u.native ? (u.native_velocity_field ? u.native_velocity_field : native_field(u.native))
                             : HamiltonianProblem::Field([this, d](double t, const ConstVecRef& x, VecRef dx) {
                                 dx = Eigen::Map<const Vec>(f_.call(t, x, 2 * d, field_shape_),
                                                            2 * d);
                               })) {
    if (u.native) {
      set_native(*u.native, !u.native_velocity_field);
      return;
    }
    for (UserFunction* fn : {&f_, &hess_, &g_, &G_, &GH_, &flow_, &A_}) fn->set_arena(&arena_);
    problem_.set_argument_buffer([this](Eigen::Index n) { return arena_.buffer(n); });
    raise_heap_thresholds(heap_threshold_for(2 * static_cast<std::size_t>(d)));  // CallbackHeap.hpp
    // f's result read in Octave's array (valid until f_'s next call)
    problem_.set_field_view([this, d](double t, const ConstVecRef& x) {
      return f_.call(t, x, 2 * d, field_shape_);
    });
    if (u.hessian.is_defined())
      problem_.set_hessian([this, d](double t, const ConstVecRef& x, MatRef H) {
        H = Eigen::Map<const Mat>(hess_.call(t, x, 4 * d * d, "2d-by-2d matrix", 2 * d), 2 * d, 2 * d);
      });
    if (u.m > 0 && !u.phase_space) {
      const int m = u.m;
      HamiltonianProblem::ConstraintGrad G;
      HamiltonianProblem::ConstraintHess GH;
      if (u.G.is_defined())
        G = [this, m, d](const ConstVecRef& q, MatRef out) {  // m = 1: row or column alike
          out = Eigen::Map<const Mat>(G_.call(0.0, q, m * d, "m-by-d matrix", m > 1 ? m : -1), m, d);
        };
      if (u.GH.is_defined())
        GH = [this, m, d](const ConstVecRef& q, MatRef out) {
          out = Eigen::Map<const Mat>(GH_.call(0.0, q, m * d * d, "d-by-d-by-m array", d), d, d * m);
        };
      problem_.set_constraints(
          m,
          [this, m](const ConstVecRef& q, VecRef out) {
            out = Eigen::Map<const Vec>(g_.call(0.0, q, m, "vector of ConstraintsNb elements"), m);
          },
          G, GH);
      // g's values read in Octave's array by the sparse RATTLE's Newton
      problem_.set_constraint_view([this, m](const ConstVecRef& q) {
        return g_.call(0.0, q, m, "vector of ConstraintsNb elements");
      });
    }
  }
  OctaveProblem(const OctaveProblem&) = delete;
  OctaveProblem& operator=(const OctaveProblem&) = delete;

  HamiltonianProblem& problem() { return problem_; }

  /// f of a native model: a kernel call, no interpreter (NativeKernels.h).
  static HamiltonianProblem::Field native_field(NativeKernels* k) {
    return [k](double t, const ConstVecRef& x, VecRef dx) { k->field(t, x, dx); };
  }

  /// The Hessian of H, g, G and the constraint Hessians of a native model
  /// as the problem's callbacks; G (and then the Hessian of H) sparse where
  /// the model says so (NativeKernels::sparse: the path a sparse
  /// ConstraintGradFcn takes).  g(q, p): phase_space_constraints.  Without
  /// `with_hessian` (odeVV's velocity field: not the model's f) the problem
  /// keeps its own Hessian.
  void set_native(NativeKernels& k, bool with_hessian = true) {
    if (with_hessian)
      problem_.set_hessian([&k](double t, const ConstVecRef& x, MatRef H) { k.hessian(t, x, H); });
    if (k.constraints() == 0 || k.phase_space()) return;
    HamiltonianProblem::ConstraintHess GH;
    if (k.has_constraint_hess()) GH = [&k](const ConstVecRef& q, MatRef H) { k.constraint_hess(q, H); };
    problem_.set_constraints(
        k.constraints(), [&k](const ConstVecRef& q, VecRef g) { k.constraint(q, g); },
        [&k](const ConstVecRef& q, MatRef G) { k.constraint_grad(q, G); }, GH);
    if (!k.sparse()) return;
    problem_.set_sparse_constraint_grad_view(
        [&k](const ConstVecRef& q, HamiltonianProblem::GradSink& sink) { k.constraint_grad_view(q, sink); });
    if (with_hessian)
      problem_.set_sparse_hessian([&k](double t, const ConstVecRef& x, SpMat& H) { k.hessian_sparse(t, x, H); });
  }

  /// g(q, p) of a native model (ConstraintVariables "qp"): g(y), Dg(y) and
  /// the Hessians from the kernels, sparse where the model says so.
  std::unique_ptr<ConstraintSet> native_phase_space_constraints(NativeKernels& k) {
    PhaseSpaceConstraints::HessFn H;
    if (k.has_constraint_hess()) H = [&k](const ConstVecRef& y, MatRef out) { k.constraint_hess(y, out); };
    auto g = std::make_unique<PhaseSpaceConstraints>(
        problem_.dim(), k.constraints(), problem_.stats(),
        [&k](const ConstVecRef& y, VecRef out) { k.constraint(y, out); },
        [&k](const ConstVecRef& y, MatRef out) { k.constraint_grad(y, out); }, H);
    if (k.sparse()) {
      PhaseSpaceConstraints::SparseHessFn Hs;
      if (k.has_constraint_hess()) Hs = [&k](const ConstVecRef& y, SpMat& out) { k.constraint_hess_sparse(y, out); };
      g->set_sparse([&k](const ConstVecRef& y, SpMat& out) { k.constraint_grad_sparse(y, out); }, Hs);
      problem_.set_sparse_hessian([&k](double t, const ConstVecRef& x, SpMat& out) { k.hessian_sparse(t, x, out); });
    }
    return g;
  }

  /// Calls ConstraintGradFcn once at q0 = x0(1:d) (constraints g(q) only)
  /// and, if it returns a sparse matrix, gives the core the sparse callback
  /// (HamiltonianProblem::set_sparse_constraint_grad_view): the separable
  /// RATTLE/SHAKE then work on sparse matrices.  The result is kept for the
  /// first call at q0 (the initial projection's), so the probe costs no
  /// call.  Later results may be sparse or full either way: a full one for
  /// a sparse problem is made sparse, a sparse one for a dense problem made
  /// dense (refused above 4e6 entries).  Returns true for sparse.
  bool probe_sparse_gradient(const Vec& x0) {
    if (u_.native || u_.m == 0 || !u_.G.is_defined()) return false;
    if (u_.phase_space) {  // Dg(y0): kept sparse by phase_space_constraints
      const octave_value D0 = G_.prime(0.0, x0);
      phase_space_sparse_ = D0.issparse();
      return phase_space_sparse_;
    }
    const int d = problem_.dim(), m = u_.m;
    const octave_value G0 = G_.prime(0.0, x0.head(d));
    if (!G0.issparse()) return false;
    // G read in place by the core (the usual case: no copy into an SpMat)
    problem_.set_sparse_constraint_grad_view(
        [this, m, d](const ConstVecRef& q, HamiltonianProblem::GradSink& sink) { G_.view_sparse(q, m, d, sink); });
    // The whole pattern from a point near q0 (HamiltonianProblem::
    // seed_sparse_pattern).  Only an optimisation: if the user's function
    // fails there, its error is discarded and the pattern grows as met.
    try {
      problem_.seed_sparse_pattern(x0.head(d));
    } catch (const octave::execution_exception&) {
      if (octave::interpreter* interp = octave::interpreter::the_interpreter()) interp->recover_from_exception();
    }
    G_.prime_with(0.0, x0.head(d), G0);  // the probe's result serves the first call at q0
    // The general RATTLE/SHAKE then keep their Newton systems sparse and
    // take the Hessian of H sparse too (a full result is made sparse).
    if (u_.hessian.is_defined())
      problem_.set_sparse_hessian([this, d](double t, const ConstVecRef& x, SpMat& out) {
        hess_.call_sparse(t, x, 2 * d, 2 * d, out);
      });
    return true;
  }

  /// ConstraintVariables "qp": the user's g(y), Dg(y), Hessians on phase
  /// space (differences where not given).
  std::unique_ptr<ConstraintSet> phase_space_constraints() {
    if (u_.native) return native_phase_space_constraints(*u_.native);
    const int d = problem_.dim(), m = u_.m, n = 2 * d;
    PhaseSpaceConstraints::GradFn Dg;
    PhaseSpaceConstraints::HessFn H;
    if (u_.G.is_defined())
      Dg = [this, m, n](const ConstVecRef& y, MatRef out) {
        out = Eigen::Map<const Mat>(G_.call(0.0, y, m * n, "m-by-2d matrix", m > 1 ? m : -1), m, n);
      };
    if (u_.GH.is_defined())
      H = [this, m, n](const ConstVecRef& y, MatRef out) {
        out = Eigen::Map<const Mat>(GH_.call(0.0, y, m * n * n, "2d-by-2d-by-m array", n), n, n * m);
      };
    auto g = std::make_unique<PhaseSpaceConstraints>(
        d, m, problem_.stats(),
        [this, m](const ConstVecRef& y, VecRef out) {
          out = Eigen::Map<const Vec>(g_.call(0.0, y, m, "vector of ConstraintsNb elements"), m);
        },
        Dg, H);
    // A sparse Dg at y0 (probe_sparse_gradient): Dg and the Hessians, as
    // [H_1 ... H_m] (2d-by-2dm, sparse or full), taken sparse.
    if (phase_space_sparse_) {
      PhaseSpaceConstraints::SparseHessFn Hs;
      if (u_.GH.is_defined())
        Hs = [this, m, n](const ConstVecRef& y, SpMat& out) { GH_.call_sparse(y, n, n * m, out); };
      g->set_sparse([this, m, n](const ConstVecRef& y, SpMat& out) { G_.call_sparse(y, m, n, out); }, Hs);
      if (u_.hessian.is_defined())
        problem_.set_sparse_hessian([this, n](double t, const ConstVecRef& x, SpMat& out) {
          hess_.call_sparse(t, x, n, n, out);
        });
    }
    return g;
  }

  /// The user's NonholonomicFcn q -> A(q) (k-by-d; k = 1: row or column alike).
  std::function<void(const ConstVecRef&, MatRef)> velocity_constraint() {
    const int k = u_.k, d = problem_.dim();
    return [this, k, d](const ConstVecRef& q, MatRef out) {
      out = Eigen::Map<const Mat>(A_.call(0.0, q, k * d, "k-by-d matrix (k = NonholonomicsNb)", k > 1 ? k : -1), k, d);
    };
  }

  /// The user's ConstraintFlowFcn (y, s) -> exp(sum s_i X_{g_i})(y).
  std::unique_ptr<FibreMap> user_flow() {
    const int n = problem_.state_size();
    return std::make_unique<UserFlowFibre>(
        problem_.dim(),
        [this, n](const ConstVecRef& y, const ConstVecRef& s, VecRef out) {
          out = Eigen::Map<const Vec>(flow_.call2(y, s, n, "column vector of the size of Y0"), n);
        },
        problem_.stats());
  }

 private:
  ArgumentArena arena_;  ///< (before the functions that point to it)
  const char* field_shape_;  // odeVV: [v; a], the others: [dH/dp; -dH/dq]
  UserFunction f_, hess_, g_, G_, GH_, flow_, A_;
  UserFunctions u_;
  HamiltonianProblem problem_;
  bool phase_space_sparse_ = false;  ///< ConstraintVariables "qp" with a sparse Dg at y0
};

}  // namespace odepkg::binding

#endif
