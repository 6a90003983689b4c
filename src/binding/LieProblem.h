// LieProblem.h — odeRATTLie's options and callbacks as a core LieGroupProblem:
// the group (a built-in name, or a struct of the user's function handles),
// the mass matrix, the force f(t, y), Φ(q) and B(q).
#ifndef ODEPKG_BINDING_LIE_PROBLEM_H
#define ODEPKG_BINDING_LIE_PROBLEM_H

#include "OctaveCallbacks.h"
#include "Settings.h"
#include "lie/BlockMass.hpp"
#include "lie/LieGroupFactory.hpp"
#include "lie/LieGroupProblem.hpp"
#include "lie/LieStepper.hpp"

#include <octave/oct.h>

#include <memory>
#include <string>

namespace odepkg::binding {

/// A group given as a struct of function handles (odeRATTLie's help lists
/// the fields): compose_exp (q, w), tangent (w), ad (v), and optionally
/// tangent_inv_transpose (w), d_tangent_inv_transpose (w, x), structure_defect (q).
class UserLieGroup final : public lie::LieGroup {
 public:
  UserLieGroup(const octave_scalar_map& s, int state_size, const std::string& who) : who_(who) {
    auto fn = [&](const char* field, bool required) -> octave_value {
      if (!s.isfield(field) || s.getfield(field).isempty()) {
        if (required)
          error_with_id("odepkg:invalidOption", "%s: option \"LieGroup\" as a struct needs the field \"%s\"",
                        who.c_str(), field);
        return octave_value();
      }
      const octave_value v = s.getfield(field);
      if (!v.is_function_handle())
        error_with_id("odepkg:invalidOption", "%s: LieGroup.%s must be a function handle", who.c_str(), field);
      return v;
    };
    if (!s.isfield("dim") || !s.getfield("dim").is_real_scalar() ||
        s.getfield("dim").double_value() != std::round(s.getfield("dim").double_value()) ||
        s.getfield("dim").double_value() < 1 || 2 * s.getfield("dim").double_value() > state_size)
      error_with_id("odepkg:invalidOption",
                    "%s: LieGroup.dim must be the dimension n of the group, an integer with 1 <= n <= numel (Y0) / 2",
                    who.c_str());
    n_ = static_cast<int>(s.getfield("dim").double_value());
    nq_ = state_size - n_;
    const octave_value_list none;
    exp_ = std::make_unique<UserFunction>(fn("compose_exp", true), none, who, "LieGroup.compose_exp", false);
    T_ = std::make_unique<UserFunction>(fn("tangent", true), none, who, "LieGroup.tangent", false);
    ad_ = std::make_unique<UserFunction>(fn("ad", true), none, who, "LieGroup.ad", false);
    const octave_value tit = fn("tangent_inv_transpose", false), dtit = fn("d_tangent_inv_transpose", false),
                       def = fn("structure_defect", false);
    if (tit.is_defined())
      Tit_ = std::make_unique<UserFunction>(tit, none, who, "LieGroup.tangent_inv_transpose", false);
    if (dtit.is_defined())
      dTit_ = std::make_unique<UserFunction>(dtit, none, who, "LieGroup.d_tangent_inv_transpose", false);
    if (def.is_defined())
      defect_ = std::make_unique<UserFunction>(def, none, who, "LieGroup.structure_defect", false);
    name_ = s.isfield("name") && s.getfield("name").is_string() ? s.getfield("name").string_value()
                                                                 : std::string("the user's group");
    lu_ = Eigen::PartialPivLU<Mat>(n_);
    Tw_.resize(n_, n_);
  }

  std::string name() const override { return name_; }
  bool has_tangent_inv_transpose() const { return static_cast<bool>(Tit_); }
  bool has_d_tangent_inv_transpose() const { return static_cast<bool>(dTit_); }
  int coord_size() const override { return nq_; }
  int dim() const override { return n_; }
  void identity(VecRef) const override {
    throw InputError("invalidOption", "LieGroup: the identity of a user-defined group is not known");
  }
  void compose_exp(const ConstVecRef& q, const ConstVecRef& w, VecRef out) const override {
    out = Eigen::Map<const Vec>(exp_->call2(q, w, nq_, "vector of the coordinates of q"), nq_);
  }
  void log_between(const ConstVecRef&, const ConstVecRef&, VecRef) const override {
    throw InputError("invalidOption", "LieGroup: log is not available for a user-defined group");
  }
  void ad(const ConstVecRef& v, MatRef A) const override {
    A = Eigen::Map<const Mat>(ad_->call(0.0, v, n_ * n_, "n-by-n matrix", n_), n_, n_);
  }
  void tangent(const ConstVecRef& w, MatRef T) const override {
    T = Eigen::Map<const Mat>(T_->call(0.0, w, n_ * n_, "n-by-n matrix", n_), n_, n_);
  }
  void tangent_inv_transpose(const ConstVecRef& w, MatRef Tit) const override {
    if (Tit_) {
      Tit = Eigen::Map<const Mat>(Tit_->call(0.0, w, n_ * n_, "n-by-n matrix", n_), n_, n_);
      return;
    }
    tangent(w, Tw_);
    lu_.compute(Tw_);
    Tit = lu_.inverse().transpose();
  }
  void d_tangent_inv_transpose(const ConstVecRef& w, const ConstVecRef& x, MatRef D) const override {
    if (!dTit_) return LieGroup::d_tangent_inv_transpose(w, x, D);
    D = Eigen::Map<const Mat>(dTit_->call2(w, x, n_ * n_, "n-by-n matrix"), n_, n_);
  }
  double structure_defect(const ConstVecRef& q) const override {
    if (!defect_) return 0.0;
    return *defect_->call(0.0, q, 1, "scalar");
  }

 private:
  std::string who_, name_;
  int n_ = 0, nq_ = 0;
  std::unique_ptr<UserFunction> exp_, T_, ad_, Tit_, dTit_, defect_;
  mutable Eigen::PartialPivLU<Mat> lu_;
  mutable Mat Tw_;
};

/// The group of option "LieGroup" (a name or a struct) for a state of
/// `state_size` numbers.
inline std::unique_ptr<lie::LieGroup> read_lie_group(const OptionReader& r, int state_size,
                                                     const std::string& who) {
  if (!r.has("LieGroup"))
    error_with_id("odepkg:invalidOption",
                  "%s: option \"LieGroup\" must name the configuration group (e.g. \"SO3\", \"S3xR3\", \"Rn\") "
                  "or be a struct of its operations", who.c_str());
  const octave_value g = r.get("LieGroup");
  std::unique_ptr<lie::LieGroup> group;
  if (g.is_string())
    group = lie::make_lie_group(g.string_value(), state_size);
  else if (g.isstruct() && g.numel() == 1)
    group = std::make_unique<UserLieGroup>(g.scalar_map_value(), state_size, who);
  else
    r.bad("LieGroup", "a group name such as \"S3xR3\" or a struct of function handles");
  if (group->coord_size() + group->dim() != state_size)
    error_with_id("odepkg:invalidInput",
                  "%s: Y0 must be [q0; v0] with %d group coordinates and %d velocities for %s "
                  "(%d numbers), got %d", who.c_str(), group->coord_size(), group->dim(),
                  group->name().c_str(), group->coord_size() + group->dim(), state_size);
  return group;
}

/// The mass matrix of option "MassMatrix" for `group`: absent, the
/// identity by blocks; an Octave sparse matrix, its diagonal blocks when it
/// has no entry outside those of the group's factors (O(nnz), no n x n
/// matrix), else made dense (refused above kMaxDensifiedEntries); a full
/// matrix as it is (`dense` set).
struct LieMass {
  lie::BlockMass blocks;
  Mat dense;
  bool is_dense = false;
};
inline LieMass read_lie_mass(const OptionReader& r, const lie::LieGroup& group, const std::string& who) {
  LieMass out;
  const int n = group.dim();
  const auto candidates = lie::LieGroupProblem::mass_partitions(group);
  if (!r.has("MassMatrix") || r.get("MassMatrix").isempty()) {
    out.blocks = lie::BlockMass::identity(candidates.front());
    return out;
  }
  const octave_value v = r.get("MassMatrix");
  if (v.issparse() && v.isreal() && v.rows() == n && v.columns() == n) {
    SpMat M;
    UserFunction::sparse_to_eigen(v.sparse_matrix_value(), M);
    if (!Eigen::Map<const Vec>(M.valuePtr(), M.nonZeros()).allFinite()) r.bad("MassMatrix", "finite");
    bool ok = false;
    out.blocks = lie::BlockMass::from_sparse(M, candidates, ok);
    if (ok) return out;
    if (static_cast<double>(n) * n > kMaxDensifiedEntries)
      error_with_id("odepkg:invalidOption",
                    "%s: option \"MassMatrix\" (sparse, %d-by-%d) couples the factors of the group: it must be "
                    "block diagonal with one block per factor (a body's inertia, its mass times I), or small "
                    "enough to be made dense (4e6 entries)", who.c_str(), n, n);
    out.dense = Mat(M);
    out.is_dense = true;
    return out;
  }
  out.dense = r.matrix("MassMatrix");
  out.is_dense = true;
  return out;
}

/// The core problem with the user's callbacks; lives as long as it does.
class OctaveLieProblem {
 public:
  /// M as read by read_lie_mass.
  OctaveLieProblem(std::unique_ptr<lie::LieGroup> group, const LieMass& mass, const UserFunctions& u,
                   const octave_value_list& extra, const std::string& who)
      : f_(u.f, extra, who, "the force function F", true),
        g_(u.g, extra, who, "ConstraintFcn", false),
        G_(u.G, extra, who, "ConstraintGradFcn", false),
        A_(u.A, extra, who, "NonholonomicFcn", false),
        n_(group->dim()),
        u_(u),
        problem_(mass.is_dense ? lie::LieGroupProblem(std::move(group), mass.dense, force())
                               : lie::LieGroupProblem(std::move(group), mass.blocks, force())) {
    raise_heap_thresholds(heap_threshold_for(2 * static_cast<std::size_t>(n_)));  // CallbackHeap.hpp
    add_constraints();
  }
  OctaveLieProblem(const OctaveLieProblem&) = delete;
  OctaveLieProblem& operator=(const OctaveLieProblem&) = delete;

  lie::LieGroupProblem& problem() { return problem_; }

  /// The number k of velocity constraints B_nh(q) v = 0 (NonholonomicFcn; 0: none).
  int velocity_constraints() const { return u_.k; }
  /// The user's NonholonomicFcn q -> B_nh(q) (k-by-n; k = 1: row or column alike).
  std::function<void(const ConstVecRef&, MatRef)> velocity_constraint() {
    const int k = u_.k, n = n_;
    return [this, k, n](const ConstVecRef& q, MatRef out) {
      out = Eigen::Map<const Mat>(A_.call(0.0, q, k * n, "k-by-n matrix (k = NonholonomicsNb)", k > 1 ? k : -1), k, n);
    };
  }

  /// Calls ConstraintGradFcn once at q0 and, if it returns a sparse matrix,
  /// gives the core the sparse callback (the sparse RATTLie; the result is
  /// kept for the first call at q0, so the probe costs no call).  Later
  /// results may be sparse or full either way.  Returns true for sparse.
  bool probe_sparse_gradient(const Vec& q0) {
    if (u_.m == 0 || !u_.G.is_defined()) return false;
    const int m = u_.m, n = n_;
    const octave_value B0 = G_.prime(0.0, q0);
    if (!B0.issparse()) return false;
    problem_.set_sparse_constraint_grad(
        [this, m, n](const ConstVecRef& q, SpMat& out) { G_.call_sparse(q, m, n, out); });
    return true;
  }

 private:
  lie::LieGroupProblem::Force force() {
    return [this](double t, const ConstVecRef& y, VecRef f) {
      f = Eigen::Map<const Vec>(f_.call(t, y, n_, "column vector of n generalized forces"), n_);
    };
  }
  void add_constraints() {
    if (u_.m == 0) return;
    const int m = u_.m, n = n_;
    lie::LieGroupProblem::ConstraintGrad B;
    if (u_.G.is_defined())
      B = [this, m, n](const ConstVecRef& q, MatRef out) {
        out = Eigen::Map<const Mat>(G_.call(0.0, q, m * n, "m-by-n matrix", m > 1 ? m : -1), m, n);
      };
    problem_.set_constraints(
        m,
        [this, m](const ConstVecRef& q, VecRef out) {
          out = Eigen::Map<const Vec>(g_.call(0.0, q, m, "vector of ConstraintsNb elements"), m);
        },
        B);
  }

  UserFunction f_, g_, G_, A_;
  int n_;
  UserFunctions u_;
  lie::LieGroupProblem problem_;
};

/// The RATTLie step for the problem: the sparse one (SparseRattLie) when B
/// is sparse and M block diagonal by factors, else the dense one (B made
/// dense up to kMaxDensifiedEntries entries; above, an error naming
/// MassMatrix, the reason the sparse path was not taken).
/// Defined in LieStepperFactory.cc, the one translation unit of the
/// package's oct-file that includes RattLie.hpp and SparseRattLie.hpp (each
/// includer instantiates their templates: about 20 s of g++ -O2).
std::unique_ptr<lie::LieStepper> make_lie_stepper(lie::LieGroupProblem& lp, const NewtonOptions& opts,
                                                  const std::string& who);

/// RATTLie with the velocity constraints of NonholonomicFcn
/// (NonholonomicRattLie.hpp, dense); refused (odepkg:invalidOption) for
/// sizes it cannot take.  Defined in LieStepperFactory.cc.
std::unique_ptr<lie::LieStepper> make_nonholonomic_lie_stepper(lie::LieGroupProblem& lp, OctaveLieProblem& op,
                                                               const NewtonOptions& opts, const std::string& who);

/// Projects the velocities of y onto [B; B_nh](q) v = 0 (the stepper of
/// make_nonholonomic_lie_stepper); |B_nh v| before and after.
bool project_nonholonomic_velocity(lie::LieStepper& stepper, VecRef y, double& before, double& after);

/// Whether `stepper` is the sparse RATTLie (SparseRattLie).
bool is_sparse_rattlie(const lie::LieStepper& stepper);

}  // namespace odepkg::binding

#endif
