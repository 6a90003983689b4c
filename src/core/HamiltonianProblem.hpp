// HamiltonianProblem.hpp — the user's problem as callbacks writing into
// preallocated outputs, with call counting and finite-difference fallbacks.
//
// State x = [q; p] in R^{2d}; f(t, x) = [dH/dp; -dH/dq] (for velocity Verlet
// [v; a]).  Optional: the Hessian of H in (q, p) order, holonomic constraints
// g(q) in R^m with gradient G(q) in R^{m x d} and Hessians d x d x m (stored as
// a d x (d m) matrix, the column-major layout of Octave's d x d x m array).
#ifndef ODEPKG_HAMILTONIAN_PROBLEM_HPP
#define ODEPKG_HAMILTONIAN_PROBLEM_HPP

#include "DerivativeCheck.hpp"
#include "Finite.hpp"
#include "Interrupt.hpp"
#include "SparsePatternUnion.hpp"
#include "Stats.hpp"
#include "Types.hpp"

#include <cmath>
#include <algorithm>
#include <functional>
#include <string>
#include <limits>

namespace odepkg {

class HamiltonianProblem {
 public:
  using Field = std::function<void(double t, const ConstVecRef& x, VecRef dx)>;
  using Hessian = std::function<void(double t, const ConstVecRef& x, MatRef hess)>;
  using Constraint = std::function<void(const ConstVecRef& q, VecRef g)>;
  using ConstraintGrad = std::function<void(const ConstVecRef& q, MatRef G)>;
  using ConstraintHess = std::function<void(const ConstVecRef& q, MatRef H)>;
  /// A sparse G(q) (m x d): the callback (re)fills G, any pattern; see
  /// constraint_grad_sparse for how the pattern is kept fixed.
  using SparseConstraintGrad = std::function<void(const ConstVecRef& q, SpMat& G)>;
  class GradSink;
  /// A sparse G(q) (m x d) as a view of arrays the callback owns (Octave's
  /// SparseMatrix): it passes the view to the sink, once, while they are
  /// alive, and the sink reads them in place (no copy into an SpMat).
  using SparseConstraintGradView = std::function<void(const ConstVecRef& q, GradSink& sink)>;
  /// A sparse Hessian of H (2d x 2d, (q, p) order), any pattern (kept fixed
  /// as G's: hamiltonian_hessian_sparse).
  using SparseHessian = std::function<void(double t, const ConstVecRef& x, SpMat& hess)>;

  HamiltonianProblem(int d, Field f) : HamiltonianProblem(d, 2 * d, std::move(f)) {}

  /// A state of `state_size` numbers whose last d are the velocity-like
  /// part (Lie-group problems: nq group coordinates, then v in R^d); f is
  /// then any vector field on that state (used for the initial step only).
  HamiltonianProblem(int d, int state_size, Field f)
      : d_(d), n_(state_size), field_(std::move(f)) {
    // A plain C++ function is called directly (std::function adds a second
    // indirect call and copies of the arguments on every evaluation).
    if (const FieldFunction* fn = field_.target<FieldFunction>()) field_fn_ = *fn;
    if (d < 1) throw InputError("invalidInput", "the dimension d of q must be at least 1");
    x_pert_.resize(n_);
    f_base_.resize(n_);
    f_pert_.resize(n_);
    hess_pattern_.reset(n_, n_);
    // hess_ (n x n) is sized on first use: explicit methods never need it,
    // and for them memory must stay O(n).
  }

  void set_hessian(Hessian h) { hessian_ = std::move(h); }
  /// A HamiltonianHessFcn that returns sparse matrices, for the sparse
  /// general RATTLE/SHAKE (SparseGeometricNewton); other consumers keep the
  /// dense one of set_hessian.
  void set_sparse_hessian(SparseHessian h) {
    hessian_sparse_ = std::move(h);
    hess_pattern_.reset(n_, n_);
  }
  bool has_sparse_hessian() const { return static_cast<bool>(hessian_sparse_); }
  void set_constraints(int m, Constraint g, ConstraintGrad G = nullptr,
                       ConstraintHess GH = nullptr) {
    if (m < 1 || m >= d_)
      throw InputError("invalidInput",
                       "the number of constraints must satisfy 1 <= m < d");
    m_ = m;
    g_ = std::move(g);
    G_ = std::move(G);
    GH_ = std::move(GH);
    g_base_.resize(m);
    g_pert_.resize(m);
    q_pert_.resize(d_);
    grad_err_ = Vec::Zero(d_);
    Gs_ = nullptr;
    Gv_ = nullptr;
  }

  /// A sparse ConstraintGradFcn (after set_constraints), replacing a dense
  /// one: the separable RATTLE/SHAKE then run on sparse matrices
  /// (SparseSeparableRattle), every other consumer of G gets it made dense
  /// (constraint_grad), refused above kMaxDensifiedEntries entries.
  void set_sparse_constraint_grad(SparseConstraintGrad G) {
    replace_constraint_grad();
    Gs_ = std::move(G);
  }

  /// As set_sparse_constraint_grad, with G given as a view
  /// (SparseConstraintGradView).
  void set_sparse_constraint_grad_view(SparseConstraintGradView G) {
    replace_constraint_grad();
    Gv_ = std::move(G);
  }

  /// Receives the G of a SparseConstraintGradView callback: fits it into
  /// the union's pattern (constraint_grad_sparse) or copies it into an
  /// SpMat (seed_sparse_pattern) before the callback returns.
  class GradSink {
   public:
    // not copyable: a copy called in its place would leave this one "not called"
    GradSink(const GradSink&) = delete;
    GradSink& operator=(const GradSink&) = delete;
    template <class I>
    void operator()(const CscView<I>& u) {
      if (taken_) throw std::logic_error("SparseConstraintGradView: the sink was called twice");
      taken_ = true;
      problem_.take_grad(u, target_, shape_);
    }

   private:
    friend class HamiltonianProblem;
    GradSink(HamiltonianProblem& problem, SpMat* target,
             SparsePatternUnion::Target shape = SparsePatternUnion::Target::Any)
        : problem_(problem), target_(target), shape_(shape) {}
    void require_taken() const {
      if (!taken_) throw std::logic_error("SparseConstraintGradView: the sink was not called");
    }
    HamiltonianProblem& problem_;
    SpMat* target_;  ///< G to fit into; null: into user_G_
    SparsePatternUnion::Target shape_;  ///< what is known of *target_'s structure
    bool taken_ = false;
  };

  int dim() const { return d_; }               ///< d, the dimension of q
  int state_size() const { return n_; }        ///< 2d (Lie groups: nq + d)
  int constraints() const { return m_; }       ///< m (0 if unconstrained)
  bool has_hessian() const { return static_cast<bool>(hessian_); }
  bool has_constraint_grad() const { return static_cast<bool>(G_) || has_sparse_constraint_grad(); }
  /// ConstraintGradFcn returns sparse matrices (set_sparse_constraint_grad
  /// or set_sparse_constraint_grad_view).
  bool has_sparse_constraint_grad() const { return static_cast<bool>(Gs_) || static_cast<bool>(Gv_); }
  /// Number of times the union of the patterns of G met so far grew (a
  /// sparse solver analyses its pattern again when this changes).
  long sparse_pattern_version() const { return pattern_.version(); }
  /// Nonzeros of that union: every G returned by constraint_grad_sparse
  /// with this many has its structure (the union only grows).
  Eigen::Index sparse_pattern_nonzeros() const { return pattern_.nonzeros(); }
  bool has_constraint_hess() const { return static_cast<bool>(GH_); }

  Stats& stats() { return stats_; }
  const Stats& stats() const { return stats_; }

  /// dx = f(t, x).  Returns false if dx is not finite.
  bool field(double t, const ConstVecRef& x, VecRef dx) {
    poll_interrupt();  // finite-difference Jacobians make thousands of calls per step
    ++stats_.field_evals;
    call_field(t, x, dx);
    return all_finite(dx);
  }

  /// dx = f(t, x), counted and polled as field(), for a caller that checks
  /// every component of dx itself on the way (the explicit Störmer–Verlet
  /// step: H_p in AffineVelocity::confirm, the force through the state it
  /// moves, checked in the same loop): one pass over dx less per step.
  void field_unchecked(double t, const ConstVecRef& x, const VecRef& dx) {
    poll_interrupt();
    ++stats_.field_evals;
    call_field(t, x, dx);
  }

  /// f(t, x) as a pointer to its 2d values, valid until the next call of
  /// f, counted and unchecked as field_unchecked(): a problem whose f
  /// returns its values in storage of its own (the oct-files: Octave's
  /// result array) lends them (set_field_view) instead of their copy into
  /// `buffer` (at N = 10^5 links, 3.2 MB per step); else f into `buffer`.
  const double* field_unchecked_view(double t, const ConstVecRef& x, const VecRef& buffer) {
    poll_interrupt();
    ++stats_.field_evals;
    if (field_view_) return field_view_(t, x);
    call_field(t, x, buffer);
    return buffer.data();
  }
  /// Memory of n numbers where a method may build the point it passes to
  /// the callbacks next: a vector at this address (or its head) is read
  /// by them in place (the binding's Octave array: no copy of the state
  /// into the interpreter per call).  The method's to write until the next
  /// callback; fetch it again after each (a user function that kept its
  /// argument shares the memory then, and the fetch gives a copy: the
  /// user's value never changes).  Null where the problem has none (plain
  /// C++ callbacks read the method's own vectors without a copy anyway).
  using ArgumentBuffer = std::function<double*(Eigen::Index n)>;
  void set_argument_buffer(ArgumentBuffer b) { argument_buffer_ = std::move(b); }
  double* argument_buffer(Eigen::Index n) { return argument_buffer_ ? argument_buffer_(n) : nullptr; }

  /// f's values in place, for field_unchecked_view: the same function as
  /// the Field given to the constructor, returning a pointer to 2d values
  /// that stay valid until its next call.
  using FieldView = std::function<const double*(double t, const ConstVecRef& x)>;
  void set_field_view(FieldView view) { field_view_ = std::move(view); }

  /// The user's f: directly when it is a plain function (C++ problems
  /// written as `void f(double, const ConstVecRef&, VecRef)`), else
  /// through the std::function.
  void call_field(double t, const ConstVecRef& x, const VecRef& dx) {
    if (field_fn_)
      field_fn_(t, x, dx);
    else
      field_(t, x, dx);
  }

  /// Hessian of H at (t, x) in (q, p) order, analytic if given, else by
  /// forward differences of f (2d extra calls).  Returns false if non-finite.
  bool hamiltonian_hessian(double t, const ConstVecRef& x, MatRef hess) {
    if (hessian_) {
      ++stats_.hessian_evals;
      hessian_(t, x, hess);
      return hess.allFinite();
    }
    if (!field(t, x, f_base_)) return false;
    return fd_hessian(t, x, hess);
  }

  /// The Hessian of H at (t, x) on a fixed pattern (the union of those met,
  /// as for G: SparsePatternUnion; its version in hessian_pattern_version).
  /// From the sparse HamiltonianHessFcn, else the dense Hessian
  /// (hamiltonian_hessian: the user's, or 2d differences of f) with its
  /// nonzeros kept, which require_sparse_hessian allows only up to
  /// kMaxDensifiedEntries entries.  Returns false if non-finite.
  bool hamiltonian_hessian_sparse(double t, const ConstVecRef& x, SpMat& hess) {
    if (hessian_sparse_) {
      ++stats_.hessian_evals;
      hessian_sparse_(t, x, user_hess_);
      if (user_hess_.rows() != n_ || user_hess_.cols() != n_)
        throw InputError("badFcnOutput", "HamiltonianHessFcn must return a 2d-by-2d matrix (" + std::to_string(n_) +
                                             "-by-" + std::to_string(n_) + "), but returned " +
                                             std::to_string(user_hess_.rows()) + "-by-" +
                                             std::to_string(user_hess_.cols()));
    } else {
      require_sparse_hessian("the sparse RATTLE/SHAKE");
      if (dense_hess_.rows() != n_) dense_hess_.resize(n_, n_);
      if (!hamiltonian_hessian(t, x, dense_hess_)) return false;
      user_hess_ = dense_hess_.sparseView(1.0, 0.0);  // the exact nonzeros
    }
    hess_pattern_.fit(user_hess_, hess);
    const Eigen::Map<const Vec> v(hess.valuePtr(), hess.nonZeros());
    return v.allFinite();
  }
  /// Number of times the pattern of hamiltonian_hessian_sparse grew.
  long hessian_pattern_version() const { return hess_pattern_.version(); }

  /// Throws odepkg:invalidOption when the Hessian of H would have to be
  /// formed dense (no sparse HamiltonianHessFcn) and has more than
  /// kMaxDensifiedEntries entries.
  void require_sparse_hessian(const std::string& who) const {
    if (hessian_sparse_ || static_cast<double>(n_) * n_ <= kMaxDensifiedEntries) return;
    throw InputError("invalidOption",
                     who + " needs the Hessian of H: without a HamiltonianHessFcn it is formed from " +
                         std::to_string(n_) + " differences of F as a full " + std::to_string(n_) + "-by-" +
                         std::to_string(n_) + " matrix (more than 4e6 entries); give a HamiltonianHessFcn "
                         "returning a sparse matrix");
  }

  /// As hamiltonian_hessian, with f(t, x) = fx already known (2d calls
  /// when differencing).
  bool hamiltonian_hessian(double t, const ConstVecRef& x, const ConstVecRef& fx, MatRef hess) {
    if (hessian_) return hamiltonian_hessian(t, x, hess);
    f_base_ = fx;
    return fd_hessian(t, x, hess);
  }

 private:
  /// Before a sparse ConstraintGradFcn is set: the constraints exist, every
  /// earlier G callback goes, the pattern starts empty.
  void replace_constraint_grad() {
    if (m_ == 0) throw InputError("invalidInput", "a sparse ConstraintGradFcn needs constraints (ConstraintFcn)");
    G_ = nullptr;
    Gs_ = nullptr;
    Gv_ = nullptr;
    pattern_.reset(m_, d_);
  }

  // f = [H_p; -H_q]  =>  Hess(q-rows) = -df_p/dx, Hess(p-rows) = df_q/dx,
  // forward differences from f_base_ = f(t, x).
  bool fd_hessian(double t, const ConstVecRef& x, MatRef hess) {
    for (int j = 0; j < 2 * d_; ++j) {
      const double delta = fd_step(x(j));
      x_pert_ = x;
      x_pert_(j) += delta;
      if (!field(t, x_pert_, f_pert_)) return false;
      hess.col(j).head(d_) = -(f_pert_.tail(d_) - f_base_.tail(d_)) / delta;
      hess.col(j).tail(d_) = (f_pert_.head(d_) - f_base_.head(d_)) / delta;
    }
    ++stats_.fd_jacobians;
    ++stats_.fd_field_jacobians;
    return hess.allFinite();
  }

 public:

  /// One d x d block of df/dx at x: rows `rows` (0: the q-part f_q = H_p,
  /// 1: the p-part f_p = -H_q), columns `cols` (0: d/dq, 1: d/dp).
  /// From the Hessian when given, else d forward differences of f.
  bool field_jacobian_block(double t, const ConstVecRef& x, int rows, int cols,
                            MatRef block) {
    ++stats_.jacobian_evals;
    if (hessian_) {
      ++stats_.hessian_evals;
      if (hess_.rows() != n_) hess_.resize(n_, n_);  // once, on the first step
      hessian_(t, x, hess_);
      // df_q/dx = Hess(p-rows, :), df_p/dx = -Hess(q-rows, :)
      if (rows == 0)
        block = hess_.block(d_, cols * d_, d_, d_);
      else
        block = -hess_.block(0, cols * d_, d_, d_);
      return block.allFinite();
    }
    ++stats_.fd_jacobians;
    ++stats_.fd_field_jacobians;
    if (!field(t, x, f_base_)) return false;
    for (int j = 0; j < d_; ++j) {
      const int k = cols * d_ + j;
      const double delta = fd_step(x(k));
      x_pert_ = x;
      x_pert_(k) += delta;
      if (!field(t, x_pert_, f_pert_)) return false;
      block.col(j) = (f_pert_.segment(rows * d_, d_) - f_base_.segment(rows * d_, d_)) / delta;
    }
    return block.allFinite();
  }

  // ---- holonomic constraints g(q) = 0 -------------------------------------
  bool constraint(const ConstVecRef& q, VecRef g) {
    ++stats_.constraint_evals;
    g_(q, g);
    return all_finite(g);
  }
  /// g(q)'s m values where the callback holds them (set_constraint_view:
  /// the binding's Octave array, valid until g's next call; else `buffer`,
  /// filled by the Constraint): no copy.  Null if one is not finite.
  const double* constraint_view(const ConstVecRef& q, VecRef buffer) {
    ++stats_.constraint_evals;
    const double* v = buffer.data();
    if (constraint_view_)
      v = constraint_view_(q);
    else
      g_(q, buffer);
    return all_finite(v, m_) ? v : nullptr;
  }
  /// The same function as the Constraint of set_constraints, returning a
  /// pointer to its m values (valid until its next call).
  using ConstraintView = std::function<const double*(const ConstVecRef& q)>;
  void set_constraint_view(ConstraintView view) { constraint_view_ = std::move(view); }

  /// G(q) = dg/dq (m x d): analytic, or central differences of g (2d
  /// calls), step eps^(1/3) max(1, |q_j|) per column: error O(eps^(2/3)),
  /// about 1e-10 relative, where forward differences give 1e-8.  The
  /// estimated error of each column is kept (constraint_grad_error).
  bool constraint_grad(const ConstVecRef& q, MatRef G) {
    if (G_) {
      ++stats_.constraint_grad_evals;
      G_(q, G);
      return G.allFinite();
    }
    if (has_sparse_constraint_grad()) {  // a sparse G made dense, for a method that needs it so
      require_densifiable("this method");
      if (!constraint_grad_sparse(q, dense_src_)) return false;
      G.setZero();
      for (int j = 0; j < dense_src_.outerSize(); ++j)
        for (SpMat::InnerIterator it(dense_src_, j); it; ++it) G(it.row(), j) = it.value();
      return true;
    }
    const double eps = std::numeric_limits<double>::epsilon();
    for (int j = 0; j < d_; ++j) {
      const double delta = DerivativeCheck::step(std::abs(q(j)));
      q_pert_ = q;
      q_pert_(j) = q(j) + delta;
      const double up = q_pert_(j);
      if (!constraint(q_pert_, g_pert_)) return false;
      q_pert_(j) = q(j) - delta;
      const double span = up - q_pert_(j);  // the step actually taken
      if (!constraint(q_pert_, g_base_)) return false;
      G.col(j) = (g_pert_ - g_base_) / span;
      grad_err_(j) =
          eps * std::max(g_pert_.lpNorm<Eigen::Infinity>(), g_base_.lpNorm<Eigen::Infinity>()) / span;
    }
    const double Gmax = G.cwiseAbs().maxCoeff();
    for (int j = 0; j < d_; ++j) grad_err_(j) += central_difference_error(std::abs(q(j)), Gmax);
    ++stats_.fd_jacobians;
    stats_.max_grad_error = std::max(stats_.max_grad_error, grad_err_.maxCoeff());
    return G.allFinite();
  }

  /// G(q) from the sparse ConstraintGradFcn, on a fixed pattern: the union
  /// of the patterns returned so far (SparsePatternUnion; see also
  /// seed_sparse_pattern).  Returns false if G is not finite.  `target`:
  /// what the caller knows of G (SparsePatternUnion::Target; UnionShaped:
  /// G was only ever written by this function, copied or swapped, so its
  /// structure is not compared).
  bool constraint_grad_sparse(const ConstVecRef& q, SpMat& G,
                              SparsePatternUnion::Target target = SparsePatternUnion::Target::Any) {
    if (!has_sparse_constraint_grad())
      throw InputError("invalidInput", "constraint_grad_sparse: no sparse ConstraintGradFcn was set");
    ++stats_.constraint_grad_evals;
    if (Gv_) {  // read in place, into G (take_grad)
      GradSink sink(*this, &G, target);
      Gv_(q, sink);
      sink.require_taken();
    } else {
      user_grad(q);
      pattern_.fit(user_G_, G, target);
    }
    return all_finite(G.valuePtr(), G.nonZeros());
  }

  /// Grows the pattern by that of G at a point near q (q_i moved by
  /// 1e-6 max(1, |q_i|) times distinct factors in (0.5, 1.5)): entries that
  /// vanish at q by coincidence (a straight chain's vertical components) are
  /// nonzero there, so the pattern is whole from the start instead of
  /// growing, with a new analysis, as the motion makes them nonzero.  One
  /// call of ConstraintGradFcn, counted.  Returns false if that G is not
  /// finite (the pattern is then left as it was).
  bool seed_sparse_pattern(const ConstVecRef& q) {
    if (!has_sparse_constraint_grad()) return false;
    q_pert_ = q;
    const double golden = 0.6180339887498949;
    for (int i = 0; i < d_; ++i) {
      const double frac = std::fmod((i + 1) * golden, 1.0);
      q_pert_(i) += 1e-6 * std::max(1.0, std::abs(q(i))) * (0.5 + frac);
    }
    ++stats_.constraint_grad_evals;
    user_grad(q_pert_);
    const Eigen::Map<const Vec> v(user_G_.valuePtr(), user_G_.nonZeros());
    if (!v.allFinite()) return false;
    pattern_.grow(user_G_);
    return true;
  }

  /// Throws the odepkg:sparseGradient error when a sparse G would have to be
  /// made dense (`who` needs a dense G) and is too large for that.
  void require_densifiable(const std::string& who) const {
    if (!has_sparse_constraint_grad() || static_cast<double>(m_) * d_ <= kMaxDensifiedEntries) return;
    throw InputError("sparseGradient",
                     "ConstraintGradFcn returns a sparse " + std::to_string(m_) + "-by-" + std::to_string(d_) +
                         " matrix, which " + who +
                         " would have to make dense (more than 4e6 entries): sparse constraint gradients are "
                         "used as such only by odeRATTLE/odeSHAKE with \"Explicit\", \"yes\" (a separable H = "
                         "T(p) + V(q)) and constraints g(q)");
  }

  /// The user's sparse G at q into user_G_ (size checked, compressed).
  void user_grad(const ConstVecRef& q) {
    if (Gv_) {
      GradSink sink(*this, nullptr);
      Gv_(q, sink);
      sink.require_taken();
      return;
    }
    Gs_(q, user_G_);
    check_grad_size(user_G_.rows(), user_G_.cols());
    user_G_.makeCompressed();
  }

  static bool same_pattern(const SpMat& a, const SpMat& b) { return SparsePatternUnion::same_pattern(a, b); }

 private:
  void check_grad_size(Eigen::Index rows, Eigen::Index cols) const {
    if (rows != m_ || cols != d_)
      throw InputError("badFcnOutput", "ConstraintGradFcn must return a sparse m-by-d matrix (" + std::to_string(m_) +
                                           "-by-" + std::to_string(d_) + "), but returned " + std::to_string(rows) +
                                           "-by-" + std::to_string(cols));
  }

  /// A viewed G (GradSink): fitted into *G, the union grown first if it
  /// lacks one of its entries (through an SpMat copy: rare, once per
  /// entry ever met); or, G null, copied into user_G_.
  template <class I>
  void take_grad(const CscView<I>& u, SpMat* G, SparsePatternUnion::Target shape) {
    check_grad_size(u.rows, u.cols);
    if (G && pattern_.fit(u, *G, shape)) return;
    to_spmat(u, user_G_);
    if (!G) return;
    pattern_.grow(user_G_);
    if (!pattern_.fit(u, *G, shape)) throw std::logic_error("SparsePatternUnion: an entry outside the grown union");
  }

 public:
  /// Estimated error of a central quotient with step h = eps^(1/3) L,
  /// L = max(1, |x_j|), beyond the round-off of the function values: the
  /// truncation h^2 |g'''| / 6 for third derivatives up to 10 |G|_max (g
  /// varying on a unit length scale in q, with a safety factor), and the
  /// round-off of g's internal magnitudes, eps L |G|_max / h:
  /// eps^(2/3) |G|_max (1 + 1.7 L^2).
  static double central_difference_error(double xj, double Gmax) {
    const double L = std::max(1.0, xj);
    return DerivativeCheck::floor_accuracy() * Gmax * (1.0 + 10.0 / 6.0 * L * L);
  }

  /// Bound on |(G_fd(q) - G(q)) w|_inf for the last differenced gradient:
  /// sum_j err_j |w_j|; 0 when ConstraintGradFcn is given.
  double constraint_grad_error(const ConstVecRef& w) const {
    if (has_constraint_grad() || grad_err_.size() != w.size()) return 0.0;
    return grad_err_.dot(w.cwiseAbs());
  }

  /// Checks the user's derivatives at (t, x) against differences of the
  /// functions they differentiate (DerivativeCheck), along kDirections
  /// random directions: HamiltonianHessFcn against f (4 calls of f per
  /// direction, one Hessian), ConstraintGradFcn against ConstraintFcn
  /// (4 calls of g per direction, one G), ConstraintHessFcn against
  /// ConstraintGradFcn (4 calls of G per direction, one Hessian; only when
  /// the gradient is given).  Throws InputError "derivativeCheck".
  void check_derivatives(double t, const ConstVecRef& x) {
    DerivativeCheck check;
    const int n = 2 * d_;
    if ((hessian_ || hessian_sparse_) && n_ == n) {
      // the sparse one where given (the sparse general RATTLE uses it;
      // the dense one may be too large to form)
      Mat hess;
      SpMat hess_sparse;
      if (!hessian_sparse_) hess.resize(n, n);
      const bool ok =
          hessian_sparse_ ? hamiltonian_hessian_sparse(t, x, hess_sparse) : hamiltonian_hessian(t, x, hess);
      if (!ok) throw InputError("nonFiniteFcn", "HamiltonianHessFcn returned a non-finite value at the initial data");
      const double hess_norm = hessian_sparse_ ? hess_sparse.norm() : hess.norm();
      Vec v(n), Jv(n), xs(n), Hv(n);
      for (int k = 0; k < DerivativeCheck::kDirections; ++k) {
        check.random_direction(v);
        // df/dx = [Hess(p-rows, :); -Hess(q-rows, :)]
        if (hessian_sparse_)
          Hv.noalias() = hess_sparse * v;
        else
          Hv.noalias() = hess * v;
        Jv.head(d_) = Hv.tail(d_);
        Jv.tail(d_) = -Hv.head(d_);
        auto curve = [&](double s, VecRef out) {
          xs = x + s * v;
          return field(t, xs, out);
        };
        DerivativeCheck::require(
            DerivativeCheck::compare(curve, DerivativeCheck::step(x.lpNorm<Eigen::Infinity>()), Jv, hess_norm),
            "HamiltonianHessFcn", "differences of the ODE function F = [dH/dp; -dH/dq]");
      }
    }
    if (m_ == 0 || !has_constraint_grad()) return;
    const Vec q = x.head(d_);
    if (has_sparse_constraint_grad()) {  // sparse: J v by sparse products, O(nnz) memory
      SpMat G;
      if (!constraint_grad_sparse(q, G))
        throw InputError("nonFiniteFcn", "ConstraintGradFcn returned a non-finite value at the initial data");
      check.require_jacobian(
          q, G, [&](const ConstVecRef& qs, VecRef out) { return constraint(qs, out); }, "ConstraintGradFcn",
          "differences of ConstraintFcn");
      // the Hessians are checked against a dense G only where it is small
      if (!GH_ || static_cast<double>(m_) * d_ > kMaxDensifiedEntries) return;
    }
    Mat G(m_, d_);
    if (!constraint_grad(q, G))
      throw InputError("nonFiniteFcn", "ConstraintGradFcn returned a non-finite value at the initial data");
    if (!has_sparse_constraint_grad())
      check.require_jacobian(
        q, G, [&](const ConstVecRef& qs, VecRef out) { return constraint(qs, out); }, "ConstraintGradFcn",
        "differences of ConstraintFcn");
    if (!GH_) return;
    Mat H(d_, d_ * m_);
    if (!constraint_hess(q, H))
      throw InputError("nonFiniteFcn", "ConstraintHessFcn returned a non-finite value at the initial data");
    check.require_stacked_hessians(
        q, H, m_, [&](const ConstVecRef& qs, MatRef Gs) { return constraint_grad(qs, Gs); }, "ConstraintHessFcn",
        "differences of ConstraintGradFcn");
  }

  /// Constraint Hessians as a d x (d m) matrix [H_1 ... H_m], H_k = d^2 g_k/dq^2.
  bool constraint_hess(const ConstVecRef& q, MatRef H) {
    ++stats_.constraint_hess_evals;
    GH_(q, H);
    return H.allFinite();
  }

  /// Forward-difference increment: sqrt(eps) relative, at least sqrt(eps)
  /// (Newton matrices: their error changes the contraction, not the solution).
  static double fd_step(double xj) {
    return std::sqrt(std::numeric_limits<double>::epsilon()) * std::max(1.0, std::abs(xj));
  }

 private:
  int d_;
  int n_;
  int m_ = 0;
  Field field_;
  FieldView field_view_;  ///< f's values in place (set_field_view), or none
  ConstraintView constraint_view_;  ///< g's values in place (set_constraint_view), or none
  ArgumentBuffer argument_buffer_;  ///< memory the callbacks read in place (set_argument_buffer), or none
  using FieldFunction = void (*)(double, const ConstVecRef&, VecRef);
  FieldFunction field_fn_ = nullptr;  ///< field_'s target when it is a plain function
  Hessian hessian_;
  SparseHessian hessian_sparse_;
  SparsePatternUnion hess_pattern_;  ///< union of the patterns of the sparse Hessians met
  SpMat user_hess_;                  ///< the last Hessian before fit()
  Mat dense_hess_;                   ///< a differenced Hessian on its way to a sparse one
  Constraint g_;
  ConstraintGrad G_;
  ConstraintHess GH_;
  SparseConstraintGrad Gs_;
  SparseConstraintGradView Gv_;  ///< or this (at most one of G_, Gs_, Gv_)
  SparsePatternUnion pattern_;  ///< union of the patterns of the sparse G met
  SpMat user_G_;                ///< the user's last sparse G (a viewed one: only when the union grew)
  SpMat dense_src_;           ///< sparse G on its way to a dense one
  Stats stats_;
  Vec x_pert_, f_base_, f_pert_, g_base_, g_pert_, q_pert_;
  Vec grad_err_;  ///< estimated error of each column of the last differenced G
  Mat hess_;
};

}  // namespace odepkg

#endif
