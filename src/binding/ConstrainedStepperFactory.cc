// ConstrainedStepperFactory.cc — make_constrained and the questions about a
// constrained stepper (StepperFactory.h), check_phase_space_data
// (PhaseSpaceChecks.h): everything that needs the headers of RATTLE/SHAKE and
// geometric RATTLE, in one translation unit of the package's oct-file (the
// largest; StepperFactory.cc and the DEFUNs compile beside it).
#include "EigenConfig.hpp"
#include "StepperFactory.h"

#include "PhaseSpaceChecks.h"
#include "composition/CompositionStepper.hpp"
#include "constrained/GeometricRattle.hpp"
#include "constrained/NonholonomicRattle.hpp"
#include "constrained/Rattle.hpp"

#include <octave/oct.h>

#include <cmath>

#include <memory>
#include <string>

namespace odepkg::binding {

/// NonholonomicFcn: the nonholonomic RATTLE (NonholonomicRattle.hpp), with
/// the holonomic g(q) of ConstraintFcn if given; the options it does not
/// take are refused by name.
static std::unique_ptr<Stepper> make_nonholonomic(bool shake, OctaveProblem& op, const Settings& s) {
  const UserFunctions& u = s.fns;
  if (shake)
    throw InputError("invalidOption", "option \"NonholonomicFcn\" is for odeRATTLE (the symmetric nonholonomic "
                                      "RATTLE), not odeSHAKE");
  if (u.phase_space)
    throw InputError("invalidOption", "option \"NonholonomicFcn\" takes holonomic constraints g(q) only: remove "
                                      "ConstraintVariables \"qp\"");
  if (!s.base_method.empty() && s.base_method != "stormer_verlet")
    throw InputError("invalidOption", "option \"NonholonomicFcn\": the nonholonomic RATTLE is built on "
                                      "Stormer-Verlet; remove BaseMethod \"" + s.base_method + "\"");
  if (u.GH.is_defined())
    throw InputError("invalidOption", "option \"ConstraintHessFcn\" is not used with NonholonomicFcn (the "
                                      "nonholonomic RATTLE needs no constraint Hessians): remove it");
  if ((u.m > 0) != u.g.is_defined())
    throw InputError("invalidOption", "options ConstraintFcn and ConstraintsNb are given together");
  return std::make_unique<NonholonomicRattle>(op.problem(), u.k, op.velocity_constraint(), s.newton);
}

/// RATTLE or SHAKE, all geometric RATTLE of McLachlan et al. 2014.  Holonomic g(q) over
/// Störmer–Verlet: Rattle, i.e. GeometricRattle on the holonomic fibres, or
/// with "Explicit" its closed-form separable path.  Otherwise GeometricRattle
/// directly: holonomic fibres in closed form, g(q, p) fibres from
/// ConstraintFlowFcn or integrated; base method midpoint by default for g(q, p).
std::unique_ptr<Stepper> make_constrained(bool shake, OctaveProblem& op, const Settings& s) {
  HamiltonianProblem& problem = op.problem();
  const UserFunctions& u = s.fns;
  if (u.k > 0) return make_nonholonomic(shake, op, s);
  if (u.m == 0 || !u.g.is_defined())
    throw InputError("invalidOption",
                     "the options ConstraintFcn and ConstraintsNb are required (constraints g(q) = 0, or g(q, p) = 0 "
                     "with ConstraintVariables \"qp\")");
  if (!u.phase_space && (s.base_method.empty() || s.base_method == "stormer_verlet"))
    return std::make_unique<Rattle>(problem, s.explicit_scheme, shake, s.newton);
  if (s.explicit_scheme)
    throw InputError("invalidOption",
                     "option \"Explicit\" (the separable fast path) is for the classical RATTLE/SHAKE "
                     "(ConstraintVariables \"q\", BaseMethod \"stormer_verlet\"); remove it with "
                     "ConstraintVariables \"qp\" or another BaseMethod");
  std::unique_ptr<ConstraintSet> g;
  std::unique_ptr<FibreMap> fibre;
  if (u.phase_space) {
    g = op.phase_space_constraints();
    if (u.flow.is_defined())
      fibre = op.user_flow();
    else
      fibre = std::make_unique<IntegratedFibre>(*g);
  } else {
    g = std::make_unique<HolonomicConstraints>(problem);
    fibre = std::make_unique<HolonomicFibre>(*g);
  }
  auto base = make_base_method(s.base_method.empty() ? "midpoint" : s.base_method, problem);
  return std::make_unique<GeometricRattle>(problem, std::move(g), std::move(fibre), std::move(base), shake,
                                           s.newton);
}


bool is_rattle(const Stepper& stepper) { return dynamic_cast<const Rattle*>(&stepper) != nullptr; }

void check_constraint_derivatives(Stepper& stepper, const ConstVecRef& x) {
  if (auto* gr = dynamic_cast<GeometricRattle*>(&stepper)) gr->constraints().check_derivatives(x);
}

ConstrainedReport constrained_report(Stepper& stepper) {
  Stepper* method = &stepper;
  if (auto* comp = dynamic_cast<CompositionStepper*>(method)) method = &comp->base();
  ConstrainedReport r;
  if (const auto* nh = dynamic_cast<const NonholonomicRattle*>(method)) {
    r.constrained = true;
    r.rank_deficiency_seen = nh->rank_deficiency_seen();
    if (r.rank_deficiency_seen) {
      r.rank_deficiency_t = nh->rank_deficiency_t();
      r.condition_estimate = nh->condition_estimate();
      r.minimum_norm_position_multipliers = true;
      r.minimum_norm_velocity_multipliers = true;
    }
  } else if (const auto* rattle = dynamic_cast<const Rattle*>(method)) {
    r.constrained = true;
    r.sparse = rattle->sparse();
    r.rank_deficiency_seen = rattle->rank_deficiency_seen();
    if (r.rank_deficiency_seen) {
      r.rank_deficiency_t = rattle->rank_deficiency_t();
      r.condition_estimate = rattle->condition_estimate();
      r.minimum_norm_position_multipliers = rattle->minimum_norm_position_multipliers();
      r.minimum_norm_velocity_multipliers = rattle->minimum_norm_velocity_multipliers();
    }
  } else if (const auto* gr = dynamic_cast<const GeometricRattle*>(method)) {
    r.constrained = true;
    r.sparse = gr->sparse();
    r.rank_deficiency_seen = gr->rank_deficiency_seen();
    if (r.rank_deficiency_seen) {
      r.rank_deficiency_t = gr->rank_deficiency_t();
      r.condition_estimate = gr->condition_estimate();
      r.minimum_norm_position_multipliers = !gr->sparse();
      r.minimum_norm_velocity_multipliers = !gr->sparse();
    }
  }
  return r;
}

// --- check_phase_space_data (PhaseSpaceChecks.h)


namespace {

/// Largest condition number of {g_i, {g_j, H}} accepted (Assumption 1).
constexpr double kMaxHiddenCondition = 1e12;

/// Coisotropy at y (on M): {g_i, g_j}(y) = 0 (Assumption 2, Prop. 3.5).
void check_coisotropy(ConstraintSet& g, const ConstVecRef& y, const char* who) {
  const BracketCheck c = max_constraint_bracket(g, y);
  if (!std::isfinite(c.value))
    error_with_id("odepkg:nonFiniteFcn", "%s: ConstraintGradFcn returned a non-finite value at the initial data", who);
  if (c.value > 1e-8 * c.scale)
    error_with_id("odepkg:notCoisotropic",
                  "%s: the constraints are not coisotropic: {g_%d, g_%d} = %g at the initial data, but the Poisson "
                  "brackets {g_i, g_j} must vanish on g = 0 (Assumption 2 of geometric SHAKE/RATTLE; e.g. g = [q1; p1] "
                  "is not coisotropic)",
                  who, c.i + 1, c.j + 1, c.value);
}

/// Nondegeneracy at y (on M_H): {g_i, {g_j, H}} invertible (Assumption 1).
/// Hessians from differences carry errors of ~sqrt(eps) relative, so the
/// matrix is judged against 1e6 then, 1e12 with analytic Hessians.
void check_nondegeneracy(HamiltonianProblem& problem, ConstraintSet& g, double t, const ConstVecRef& y,
                                const Settings& s, const char* who) {
  const bool analytic = s.fns.hessian.is_defined() && s.fns.GH.is_defined();
  const double limit = analytic ? kMaxHiddenCondition : 1e6;
  const double cond = hidden_matrix_condition(problem, g, t, y);
  if (std::isnan(cond))
    error_with_id("odepkg:nonFiniteFcn", "%s: a constraint or ODE function returned a non-finite value at the initial data",
                  who);
  if (!(cond <= limit))
    error_with_id("odepkg:degenerateHamiltonian",
                  "%s: H is degenerate along the constraint fibres at the initial data: the matrix {g_i, {g_j, H}} is "
                  "singular (condition %g), so the hidden constraints {g_i, H} = 0 do not fix the multipliers "
                  "(Assumption 1 of geometric SHAKE/RATTLE fails; the problem has index > 3)",
                  who, cond);
}

/// The user's ConstraintFlowFcn must be a flow of the X_{g_i} = J grad g_i:
/// exp(0) = id, and d/ds_i exp(s X_g)(y) at s = 0 equal to X_{g_i}(y)
/// (central differences, 1 + 2m calls).
void check_user_flow(FibreMap& fibre, ConstraintSet& g, const ConstVecRef& y, const char* who) {
  if (!dynamic_cast<UserFlowFibre*>(&fibre)) return;
  const int d = g.dim(), n = 2 * d, m = g.count();
  Vec s = Vec::Zero(m), a(n), b(n);
  Mat Dg(m, n);
  if (!fibre.flow(y, s, a))
    error_with_id("odepkg:nonFiniteFcn", "%s: ConstraintFlowFcn returned a non-finite value at s = 0", who);
  const double ys = std::max(1.0, y.lpNorm<Eigen::Infinity>());
  const double e0 = (a - y).lpNorm<Eigen::Infinity>();
  if (!(e0 <= 1e-12 * ys))
    error_with_id("odepkg:badFlow",
                  "%s: ConstraintFlowFcn is not a flow: fcn (y0, 0) differs from y0 by %g (exp(0 X_g) must be the "
                  "identity)", who, e0);
  if (!g.grad(y, Dg))
    error_with_id("odepkg:nonFiniteFcn", "%s: ConstraintGradFcn returned a non-finite value at the initial data", who);
  const double eps = 1e-5;
  for (int i = 0; i < m; ++i) {
    s.setZero();
    s(i) = eps;
    const bool ok = fibre.flow(y, s, a);
    s(i) = -eps;
    if (!ok || !fibre.flow(y, s, b))
      error_with_id("odepkg:nonFiniteFcn", "%s: ConstraintFlowFcn returned a non-finite value", who);
    Vec X(n);  // X_{g_i} = J grad g_i = (dg_i/dp, -dg_i/dq)
    X.head(d) = Dg.row(i).tail(d).transpose();
    X.tail(d) = -Dg.row(i).head(d).transpose();
    const double err = ((a - b) / (2 * eps) - X).lpNorm<Eigen::Infinity>();
    if (!(err <= 1e-6 * std::max(1.0, X.lpNorm<Eigen::Infinity>())))
      error_with_id("odepkg:badFlow",
                    "%s: ConstraintFlowFcn is not the flow of X_g = J grad g: d/ds_%d fcn (y0, s) at s = 0 differs "
                    "from X_g%d(y0) = (dg/dp, -dg/dq) by %g (check the sign and the factor of s)",
                    who, i + 1, i + 1, err);
  }
}
}  // namespace

/// The velocity constraints at the initial data (after the holonomic
/// projection of check_initial_data): |A(q0) H_p(q0, p0)| <= 1e-10, else
/// p0 moved along [G; A]' onto [G; A] H_p = 0 with a warning, or an error
/// with InitialProjection "error" (`project` false: nothing).
static void check_nonholonomic_data(NonholonomicRattle& nh, double t0, Vec& x0, const Settings& s, const char* who,
                             bool project) {
  if (!project) return;
  Vec y = x0;
  const NonholonomicRattle::InitialProjection pr = nh.project_initial(t0, y);
  if (!pr.finite)
    error_with_id("odepkg:nonFiniteFcn",
                  "%s: NonholonomicFcn, a constraint or the ODE function returned a non-finite value at the initial "
                  "data", who);
  const double tol = 1e-10;
  if (pr.before <= tol) return;
  if (s.initial_projection_error)
    error_with_id("odepkg:inconsistentInitialData",
                  "%s: the initial data violate the velocity constraints: |A(q0) H_p(q0, p0)| = %g", who, pr.before);
  if (!pr.converged || !(pr.after <= tol))
    error_with_id("odepkg:inconsistentInitialData",
                  "%s: the initial data violate the velocity constraints (|A(q0) H_p| = %g) and could not be "
                  "projected onto them", who, pr.before);
  warning_with_id("odepkg:inconsistentInitialData",
                  "%s: the initial data violate the velocity constraints (|A(q0) H_p(q0, p0)| = %g); p0 projected "
                  "onto A(q0) H_p = 0 (now %g)", who, pr.before, pr.after);
  x0 = y;
}

/// Checks (and, with `project`, projects onto M_H with a warning or an error
/// as InitialProjection says) the initial data x0 of a geometric RATTLE with
/// g(q, p).  Does nothing for other steppers.
void check_phase_space_data(Stepper& stepper, double t0, Vec& x0, const Settings& s, const char* who,
                                   bool project) {
  Stepper* method = &stepper;
  if (auto* comp = dynamic_cast<CompositionStepper*>(method)) method = &comp->base();  // its substeps' method
  if (auto* nh = dynamic_cast<NonholonomicRattle*>(method)) {
    check_nonholonomic_data(*nh, t0, x0, s, who, project);
    return;
  }
  auto* gr = dynamic_cast<GeometricRattle*>(method);
  if (!gr || gr->constraints().holonomic()) return;
  HamiltonianProblem& problem = stepper.problem();
  ConstraintSet& g = gr->constraints();
  // Without ConstraintGradFcn, {g, H} comes from differences of g, good to
  // about sqrt(eps): judge it at that level, not below its own noise.
  const double tol = s.fns.G.is_defined() ? 1e-10 : 1e-7;
  Vec y = x0;
  ProjectionResult pr;
  if (project) project_onto_constraints(g, y, pr);
  if (!pr.finite)
    error_with_id("odepkg:nonFiniteFcn", "%s: a constraint function returned a non-finite value at the initial data", who);
  check_coisotropy(g, y, who);
  check_user_flow(gr->fibre(), g, y, who);
  if (project) slide_onto_hidden_manifold(problem, g, gr->fibre(), t0, y, pr);
  if (!pr.finite)
    error_with_id("odepkg:nonFiniteFcn",
                  "%s: a constraint, flow or ODE function returned a non-finite value at the initial data", who);
  check_nondegeneracy(problem, g, t0, y, s, who);
  if (!project || (pr.g_before <= 1e-10 && pr.hidden_before <= tol)) return;
  if (s.initial_projection_error)
    error_with_id("odepkg:inconsistentInitialData",
                  "%s: the initial data violate the constraints: |g(y0)| = %g, |{g, H}(y0)| = %g", who, pr.g_before,
                  pr.hidden_before);
  if (!(pr.g_after <= 1e-10 && pr.hidden_after <= tol))
    error_with_id("odepkg:inconsistentInitialData",
                  "%s: the initial data violate the constraints (|g(y0)| = %g, |{g, H}| = %g) and could not be "
                  "projected onto them along the fibres",
                  who, pr.g_before, pr.hidden_before);
  warning_with_id("odepkg:inconsistentInitialData",
                  "%s: the initial data violate the constraints (|g(y0)| = %g, |{g, H}| = %g on g = 0); projected "
                  "onto g = 0 and along the fibre onto {g, H} = 0 (now %g, %g)",
                  who, pr.g_before, pr.hidden_before, pr.g_after, pr.hidden_after);
  x0 = y;
}

}  // namespace odepkg::binding
