// StepperDefun.cc — run_stepper (StepperDefun.h), the body shared by the
// compiled steppers: one translation unit of the package's oct-file.
#include "EigenConfig.hpp"
#include "StepperDefun.h"

#include "Conversions.h"
#include "ErrorGuard.h"
#include "NativeModel.h"
#include "OctaveCallbacks.h"
#include "PhaseSpaceChecks.h"
#include "Settings.h"
#include "StepperFactory.h"

#include <octave/interpreter.h>
#include <octave/pt-eval.h>

namespace odepkg::binding {

namespace {

/// The outputs of the running builtin ignored with ~ (1-based), read from
/// the evaluator's list of the assignment being evaluated; for as long as it
/// lives that list is hidden from the callbacks, which would otherwise take
/// `[~, x] = stepper (...)` as ignoring their own first output (a named F
/// then returned nothing: "returned a 0x0 unknown").
class IgnoredOutputs {
 public:
  IgnoredOutputs() {
    octave::interpreter* interp = octave::interpreter::the_interpreter();
    if (!interp) return;
    tw_ = &interp->get_evaluator();
    ignored_ = tw_->ignored_fcn_outputs();
    saved_ = tw_->lvalue_list();
    tw_->set_lvalue_list(nullptr);
  }
  ~IgnoredOutputs() {
    if (tw_) tw_->set_lvalue_list(saved_);
  }
  IgnoredOutputs(const IgnoredOutputs&) = delete;
  IgnoredOutputs& operator=(const IgnoredOutputs&) = delete;
  bool ignored(int k) const {
    for (octave_idx_type i = 0; i < ignored_.numel(); ++i)
      if (ignored_(i) == k) return true;
    return false;
  }

 private:
  octave::tree_evaluator* tw_ = nullptr;
  const std::list<octave::octave_lvalue>* saved_ = nullptr;
  Matrix ignored_;
};

/// A model of odepkg_model given as F: its kernels, with the parameter
/// values of options.funarguments; for velocity_verlet the map onto [q; v].
struct StepperModel {
  std::unique_ptr<NativeKernels> kernels;
  VelocityMap velocity;
};

/// The model's kernels made the problem's functions in s.fns, as the solvers
/// do (odepkg_model_prepare, load_native_model): a separable H chooses the
/// explicit scheme unless options.Explicit is given.
std::unique_ptr<StepperModel> attach_model(const octave_value& model, const octave_value_list& extra,
                                           const octave_value& opts, Settings& s, const std::string& method,
                                           double t, const Vec& x, const char* who) {
  const octave_scalar_map mm = model.scalar_map_value();
  for (const char* f : {"file", "d", "m", "parameters", "separable", "quadratic_kinetic"})
    if (!mm.isfield(f))
      error_with_id("odepkg:invalidInput", "%s: F is not a model built by odepkg_model (no field \"%s\")", who, f);
  NativeModelFields mf;
  if (!mm.getfield("file").is_string())
    error_with_id("odepkg:invalidInput", "%s: the model's field \"file\" must be a file name", who);
  mf.file = mm.getfield("file").string_value();
  mf.d = mm.getfield("d").int_value();
  mf.m = mm.getfield("m").int_value();
  const octave_idx_type np = mm.getfield("parameters").numel();
  std::vector<double> par;
  for (int i = 0; i < extra.length(); ++i) {
    if (!extra(i).isnumeric() || !extra(i).isreal())
      error_with_id("odepkg:invalidInput", "%s: the model's parameter values (options.funarguments) must be real numbers",
                    who);
    const NDArray a = extra(i).array_value();
    par.insert(par.end(), a.data(), a.data() + a.numel());
  }
  if (static_cast<octave_idx_type>(par.size()) != np)
    error_with_id("odepkg:invalidInput",
                  "%s: the model has %ld parameter(s): give their values as options.funarguments (got %ld)", who,
                  static_cast<long>(np), static_cast<long>(par.size()));
  if (2 * mf.d != x.size())
    error_with_id("odepkg:invalidInput", "%s: X must have 2 d = %d elements for this model (got %ld)", who, 2 * mf.d,
                  static_cast<long>(x.size()));
  const bool constrained = method == "rattle";
  if (mf.m > 0 && !constrained)
    error_with_id("odepkg:invalidInput", "%s: the model has constraints g: use rattle", who);
  if (mf.m == 0 && constrained)
    error_with_id("odepkg:invalidInput", "%s: the model has no constraints: give \"g\" to odepkg_model", who);
  if (s.fns.g.is_defined() || s.fns.G.is_defined() || s.fns.GH.is_defined() || s.fns.hessian.is_defined() ||
      s.fns.flow.is_defined() || s.fns.phase_space)
    error_with_id("odepkg:invalidOption",
                  "%s: a model gives H and g itself: options ConstraintFcn, ConstraintGradFcn, ConstraintHessFcn, "
                  "ConstraintFlowFcn, HamiltonianHessFcn and ConstraintVariables \"qp\" are not taken with it",
                  who);
  if (s.fns.m != 0 && s.fns.m != mf.m)
    error_with_id("odepkg:invalidOption", "%s: option \"ConstraintsNb\" (%d) differs from the model's m = %d", who,
                  s.fns.m, mf.m);
  const bool separable = mm.getfield("separable").is_true();
  if (method == "velocity_verlet" && !mm.getfield("quadratic_kinetic").is_true())
    error_with_id("odepkg:kineticNotQuadratic",
                  "%s: takes a model whose kinetic energy is quadratic, H = p' M^-1 p / 2 + V(q) with M constant "
                  "(the state is [q; v], v = M^-1 p); this model's is not: use stormer_verlet", who);
  const bool explicit_given = opts.isstruct() && opts.numel() == 1 && opts.scalar_map_value().isfield("Explicit") &&
                              !opts.scalar_map_value().getfield("Explicit").isempty();
  if (!explicit_given && separable &&
      (method == "symplectic_euler" || method == "stormer_verlet" || method == "rattle"))
    s.explicit_scheme = true;
  if (s.explicit_scheme && !separable)
    error_with_id("odepkg:notSeparable",
                  "%s: option \"Explicit\" asks for a separable H = T(p) + V(q), but the model's H has H_pq != 0",
                  who);
  mf.par = Eigen::Map<const Vec>(par.data(), static_cast<Eigen::Index>(par.size()));
  auto sm = std::make_unique<StepperModel>();
  sm->kernels = load_kernels(mf);
  NativeKernels* k = sm->kernels.get();
  s.fns.native = k;
  s.fns.m = mf.m;
  if (mf.m > 0) s.fns.g = s.fns.G = model;  // given (by the kernels)
  if (method == "velocity_verlet") {
    sm->velocity.learn(*k, t, x);
    const VelocityMap* map = &sm->velocity;
    const int d = mf.d;
    s.fns.native_velocity_field = [k, map, d](double tt, const ConstVecRef& xx, VecRef dx) {
      k->field(tt, xx, dx);
      map->apply(d, xx.data(), dx.data());
    };
  }
  return sm;
}

}  // namespace

octave_value_list run_stepper(const char* method, const octave_value_list& args, int nargout) {
  const IgnoredOutputs outputs;
  const bool want_estimate = nargout > 2 && !outputs.ignored(3);
  return guarded(method, [&]() -> octave_value_list {
    if (args.length() < 4 || args.length() > 7) print_usage();
    const bool native = is_native_model(args(0));
    if (!native && !args(0).is_function_handle() && !args(0).is_inline_function())
      error_with_id("odepkg:invalidInput", "%s: F must be a function handle or a model of odepkg_model", method);
    const double t = real_scalar(args(1), method, "T");
    const Vec x = state_vector(args(2), method, "X");
    const int n = x.size();
    double dt = real_scalar(args(3), method, "DT");
    const octave_value opts = args.length() > 4 ? args(4) : octave_value();
    if (args.length() > 6 && !args(6).isempty()) dt = real_scalar(args(6), method, "T_NEXT") - t;
    if (dt == 0) error_with_id("odepkg:invalidInput", "%s: the step DT must be nonzero", method);

    octave_value_list extra;
    if (opts.isstruct() && opts.numel() == 1 && opts.scalar_map_value().isfield("funarguments")) {
      const octave_value fa = opts.scalar_map_value().getfield("funarguments");
      if (!fa.iscell()) error_with_id("odepkg:invalidOption", "%s: options.funarguments must be a cell", method);
      extra = octave_value_list(fa.cell_value());
    }
    Settings s = read_settings(opts, method, n);
    s.fns.f = args(0);
    std::unique_ptr<StepperModel> model;
    if (native) model = attach_model(args(0), extra, opts, s, method, t, x, method);
    OctaveProblem op(s.fns, n / 2, extra, method);
    HamiltonianProblem& problem = op.problem();
    std::unique_ptr<Stepper> stepper = make_stepper(method, op, s);
    Vec x0 = x;
    check_phase_space_data(*stepper, t, x0, s, method, false);  // McLachlan et al.'s assumptions at x
    // Explicit RATTLE/SHAKE has no free check of separability within one
    // step (Störmer–Verlet and symplectic Euler do: SeparabilityProbe):
    // probed at x, 3 calls of f.
    if (s.explicit_scheme && is_rattle(*stepper)) {
      Vec fx(n);
      if (!problem.field(t, x, fx))
        error_with_id("odepkg:nonFiniteFcn", "%s: F returned a non-finite value at X", method);
      stepper->check_claims(t, x, fx);
    }

    Point from(n), to(n);
    from.set(t, x);
    if (args.length() > 5 && !args(5).isempty()) {
      const octave_value& k = args(5);
      if (!k.isnumeric() || !k.isreal() || k.numel() != n / 2)
        error_with_id("odepkg:invalidInput", "%s: K_VALS must be the force vector returned by a previous step (%d elements)",
                      method, n / 2);
      const NDArray ka = k.array_value();
      for (int i = 0; i < n / 2; ++i) from.force(i) = ka(i);
      from.has_force = true;
    }
    // A method with its own error estimate (SPVI: Q+1 modes, P+1 nodes) gives
    // x_next and the companion solution x_est = x_next + err in one call.
    const bool own_estimate = want_estimate && stepper->has_error_estimate();
    Vec err(n);
    StepStatus st = own_estimate ? stepper->step_with_error(from, dt, to, err) : stepper->step(from, dt, to);
    if (st != StepStatus::Success)
      error_with_id("odepkg:stepFailed", "%s: %s in the step from t = %g", method, describe(st), t);
    octave_value_list r(nargout > 1 ? nargout : 1);
    r(0) = t + dt;
    if (nargout > 1) r(1) = to_column(to.x);
    if (nargout > 2 && !want_estimate) r(2) = Matrix();  // ignored with ~: not computed
    if (want_estimate) {
      Point mid(n), est(n);
      if (own_estimate) {
        est.x = to.x + err;
      } else {
        st = stepper->step(from, 0.5 * dt, mid);
        if (st == StepStatus::Success) st = stepper->step(mid, 0.5 * dt, est);
      }
      if (st != StepStatus::Success)
        error_with_id("odepkg:stepFailed", "%s: %s in the error estimate from t = %g", method, describe(st), t);
      r(2) = to_column(est.x);
    }
    if (nargout > 3) r(3) = to.has_force ? octave_value(to_column(to.force)) : octave_value(Matrix());
    return r;
  });
}

}  // namespace odepkg::binding
