// __odepkg_integrate__ — the whole time loop of every odepkg solver in one
// compiled call: the m-file drivers validate and shape, this runs.
#include "EigenConfig.hpp"
#include "binding/Conversions.h"
#include "binding/ErrorGuard.h"
#include "binding/EventCallback.h"
#include "binding/FirstStepAdvice.h"
#include "binding/NativeModel.h"
#include "binding/OctaveCallbacks.h"
#include "binding/OutputCollector.h"
#include "binding/OutputGuard.h"
#include "binding/ProgressDisplay.h"
#include "binding/PhaseSpaceChecks.h"
#include "binding/Settings.h"
#include "binding/SingularConstraintsWarning.h"
#include "binding/ReversibleControl.h"
#include "binding/StepperFactory.h"
#include "ConstraintProjection.hpp"

#include <octave/oct.h>
#include <octave/quit.h>

#include <sys/stat.h>

#include <memory>
#include <vector>

using namespace odepkg;
using namespace odepkg::binding;

// g(q0) = 0 and G(q0) H_p(q0, p0) = 0 must hold: else project onto the
// manifold with a warning, or raise an error when InitialProjection = "error".
// Returns true when x0 was projected.
static bool
check_initial_data (HamiltonianProblem& problem, double t0, Vec& x0,
                    const Settings& s, const char* who)
{
  static const double tol = 1e-10;
  Vec x = x0;
  const ProjectionResult pr = project_onto_manifold (problem, t0, x);
  if (! pr.finite)
    error_with_id ("odepkg:nonFiniteFcn",
                   "%s: a constraint or ODE function returned a non-finite value at the initial data", who);
  // G(q0) H_p from a differenced G is known only to its accuracy: exact
  // data are not called inconsistent for the error of the differences.
  if (pr.g_before <= tol && pr.hidden_before <= tol + pr.hidden_accuracy)
    return false;
  if (s.initial_projection_error)
    error_with_id ("odepkg:inconsistentInitialData",
                   "%s: the initial data violate the constraints: |g(q0)| = %g, |G(q0) H_p(q0, p0)| = %g",
                   who, pr.g_before, pr.hidden_before);
  if (! pr.converged)
    error_with_id ("odepkg:inconsistentInitialData",
                   "%s: the initial data violate the constraints (|g(q0)| = %g, |G(q0) H_p| = %g) "
                   "and could not be projected onto them", who, pr.g_before, pr.hidden_before);
  warning_with_id ("odepkg:inconsistentInitialData",
                   "%s: the initial data violate the constraints (|g(q0)| = %g, |G(q0) H_p| = %g); "
                   "projected onto the constraint manifold (now %g, %g)",
                   who, pr.g_before, pr.hidden_before, pr.g_after, pr.hidden_after);
  x0 = x;
  return true;
}

// A model's kernels, and for odeVV the map onto its state [q; v].
struct LoadedModel
{
  std::unique_ptr<NativeKernels> kernels;
  VelocityMap velocity;
};

// The model's kernels (its fields file, d, m and par: the parameter values
// the driver read from the extra arguments), made the problem's functions in
// s.fns; an option that would give another H or g is refused.  odeVV
// (velocity_verlet): f = [v; a] on [q; v] (NativeModel.h), H_pp taken at
// (t0, x0).
static std::unique_ptr<LoadedModel>
load_native_model (const octave_value& model, Settings& s, int n, const std::string& method, double t0,
                   const Vec& x0, const char* who)
{
  const NativeModelFields mf = read_native_model (model, who);
  const octave_scalar_map mm = model.scalar_map_value ();
  const int d = mf.d, m = mf.m;
  if (2 * d != n)
    error_with_id ("odepkg:invalidInput", "%s: Y0 must have 2 d = %d elements for this model (got %d)",
                   who, 2 * d, n);
  // ConstraintVariables "qp" is the driver's copy of the model's (its deval
  // and monitoring read it); any other function option is refused
  const bool model_qp = mm.isfield ("constraint_variables")
                        && mm.getfield ("constraint_variables").string_value () == "qp";
  if (s.fns.g.is_defined () || s.fns.G.is_defined () || s.fns.GH.is_defined () || s.fns.hessian.is_defined ()
      || s.fns.flow.is_defined () || (s.fns.phase_space && ! model_qp))
    error_with_id ("odepkg:invalidOption",
                   "%s: a model gives H and g itself: options ConstraintFcn, ConstraintGradFcn, "
                   "ConstraintHessFcn, ConstraintFlowFcn, HamiltonianHessFcn and ConstraintVariables "
                   "\"qp\" are not taken with it", who);
  if (s.fns.m != 0 && s.fns.m != m)
    error_with_id ("odepkg:invalidOption", "%s: option \"ConstraintsNb\" (%d) differs from the model's m = %d",
                   who, s.fns.m, m);
  if (mf.par.cols () != 1)
    error_with_id ("odepkg:invalidInput", "%s: a single run takes one value per parameter of the model", who);
  // the driver reuses a prepared call (odepkg_driver's memo): the file is
  // looked for here, on every call
  struct stat st;
  if (stat (mf.file.c_str (), &st) != 0)
    error_with_id ("odepkg:nativeModel",
                   "%s: the model's kernels %s are gone (the cache was cleared?): build the model again with odepkg_model",
                   who, mf.file.c_str ());
  auto lm = std::make_unique<LoadedModel> ();
  lm->kernels = load_kernels (mf);
  NativeKernels* k = lm->kernels.get ();
  if (k->phase_space () != model_qp)
    error_with_id ("odepkg:nativeModel", "%s: the model's kernels take g(%s), the model says g(%s) (rebuild the model)",
                   who, k->phase_space () ? "q, p" : "q", model_qp ? "q, p" : "q");
  // G sparse in the solvers: the model's "Sparse" ("auto": NativeKernels::sparse_pays)
  const std::string sp = mm.isfield ("sparse") ? mm.getfield ("sparse").string_value () : "auto";
  k->set_sparse (m > 0 && (sp == "on" || (sp == "auto" && k->sparse_pays ())));
  // derived kernels are exact: DerivativeCheck (dense, O(d^2 m) for the
  // constraint Hessians) only for the user's own ("CFile", "Library")
  if (mm.isfield ("derived") && mm.getfield ("derived").is_true ())
    s.derivative_check = false;
  s.fns.native = k;
  s.fns.m = m;
  s.fns.phase_space = model_qp;
  s.fns.hessian = model;  // given (by the kernels): analytic, as the checks judge them
  if (m > 0)
    s.fns.g = s.fns.G = model;  // given (by the kernels)
  if (k->has_constraint_hess ())
    s.fns.GH = model;
  if (method == "velocity_verlet")
    {
      lm->velocity.learn (*k, t0, x0);
      const VelocityMap* map = &lm->velocity;
      s.fns.native_velocity_field = [k, map, d] (double t, const ConstVecRef& x, VecRef dx) {
        k->field (t, x, dx);
        map->apply (d, x.data (), dx.data ());
      };
    }
  return lm;
}

// stats with the field sparseconstraints (RATTLE/SHAKE: G stayed sparse)
static octave_value
with_sparse_flag (const octave_value& stats, bool sparse)
{
  octave_scalar_map st = stats.scalar_map_value ();
  st.assign ("sparseconstraints", sparse);
  return st;
}

DEFUN_DLD (__odepkg_integrate__, args, ,
           "-*- texinfo -*-\n\
@deftypefn {} {[@var{t}, @var{y}, @var{stats}, @var{ok}, @var{msg}] =} __odepkg_integrate__ (@var{method}, @var{fcn}, @var{times}, @var{y0}, @var{options}, @var{extra}, @var{solver}, @var{store})\n\
Internal: integrate with the compiled stepper @var{method} from @var{times}(1)\n\
to @var{times}(end).  With two @var{times} every accepted step is output, with\n\
more exactly those times.  Fixed steps when @var{options}.TimeStepSize is set,\n\
else adaptive steps by step doubling.  @var{extra} is a cell of extra arguments\n\
passed to every user function; @var{solver} (optional) names the caller in\n\
messages; @var{store} (optional, default true) false keeps only the last\n\
point (output streamed through the OutputFcn, no memory cap), @qcode{\"columns\"}\n\
returns @var{y} with one state per column.  On a failure midway, @var{ok} is false,\n\
@var{msg} says why and the outputs hold the solution computed so far.\n\
Called by odeSE, odeSV, odeVV, odeRATTLE, odeSHAKE and odeSPVI.\n\
@end deftypefn")
{
  std::string who_str = "__odepkg_integrate__";
  if (args.length () >= 7 && args(6).is_string ())
    who_str = args(6).string_value ();
  const char* who = who_str.c_str ();
  return guarded (who, [&] () -> octave_value_list {
    if (args.length () < 6 || args.length () > 8)
      print_usage ();
    // STORE (default true): false when the caller takes no output, so the
    // run streams through the OutputFcn without storing (no memory cap);
    // "columns": stored, the states returned one per column (sol.y's
    // layout, as they are stored: no transpose of a large output).
    const bool columns = args.length () >= 8 && args(7).is_string ()
                         && args(7).string_value () == "columns";
    const bool store = args.length () < 8 || columns || args(7).is_true ();
    if (! args(0).is_string ())
      error_with_id ("odepkg:invalidInput", "%s: METHOD must be a string", who);
    const std::string method = args(0).string_value ();
    const bool native = is_native_model (args(1));
    if (! native && ! args(1).is_function_handle () && ! args(1).is_inline_function ())
      error_with_id ("odepkg:invalidInput", "%s: FCN must be a function handle or a model of odepkg_model", who);
    const Vec times = read_times (args(2), who);
    Vec x0 = state_vector (args(3), who, "Y0");
    if (! args(5).iscell ())
      error_with_id ("odepkg:invalidInput", "%s: EXTRA must be a cell", who);
    const octave_value_list extra (args(5).cell_value ());

    const int n = x0.size ();
    Settings s = read_settings (args(4), who, n);
    s.fns.f = args(1);
    std::unique_ptr<LoadedModel> kernels;
    if (native)
      kernels = load_native_model (args(1), s, n, method, times(0), x0, who);
    OctaveProblem op (s.fns, n / 2, extra, who);
    HamiltonianProblem& problem = op.problem ();
    // A sparse ConstraintGradFcn (seen at q0) is kept sparse (OctaveProblem).
    op.probe_sparse_gradient (x0);
    std::unique_ptr<Stepper> stepper = make_stepper (method, op, s);

    // The user's derivatives against differences, once (odepkg:derivativeCheck).
    if (s.derivative_check)
      {
        problem.check_derivatives (times(0), x0);
        check_constraint_derivatives (*stepper, x0);
      }

    bool projected = false;
    if (problem.constraints () > 0)
      projected = check_initial_data (problem, times(0), x0, s, who);
    check_phase_space_data (*stepper, times(0), x0, s, who, true);

    // f(t0, y0) once: checks size and finiteness, and seeds the force cache.
    Vec f0 (n);
    if (! problem.field (times(0), x0, f0))
      error_with_id ("odepkg:nonFiniteFcn", "%s: the ODE function returned a non-finite value at t0 = %g",
                     who, times(0));
    // What the scheme assumes ("Explicit": a separable H), probed at t0.
    stepper->check_claims (times(0), x0, f0);

    // Output points known up front: the requested times, or every fixed
    // step; a stored output beyond the memory cap is refused here
    // (odepkg:outputTooLarge), adaptive runs by the collector as they go.
    double expected_points = times.size ();
    if (s.integrator.fixed_step > 0 && times.size () == 2)
      expected_points = 1 + Integrator::fixed_step_count (std::abs (times(1) - times(0)), s.integrator.fixed_step);
    check_output_size (expected_points, n, store, who);
    const bool counted = times.size () > 2 || s.integrator.fixed_step > 0;
    const std::size_t expected = counted ? static_cast<std::size_t> (std::min (expected_points, 1e7)) : 1024;
    // sol.y from the store as it is (columns): written in place, no copy,
    // unless SPVI's node output adds points
    OutputCollector out (s, extra, expected, who, store, counted, columns && ! s.node_output);
    Observer* observer = &out;
    std::unique_ptr<Observer> nodes;
    if (s.node_output)
      {
        if (times.size () <= 2)
          nodes = make_node_output (*stepper, out, n / 2);  // null unless SPVI
        if (! nodes)
          error_with_id ("odepkg:invalidOption",
                         "%s: option \"NodeOutput\" is for odeSPVI with every step output "
                         "(TSPAN = [t0 tf] or a scalar t0)", who);
        observer = nodes.get ();
      }
    Integrator integrator (*stepper, s.integrator);
    // Events: probed at t0 after every other check (its size k), then one
    // call per step plus the location of crossings.
    std::unique_ptr<OctaveEvents> octave_events;
    std::unique_ptr<EventLocator> events;
    if (s.events.is_defined ())
      {
        octave_events = std::make_unique<OctaveEvents> (s.events, extra, who);
        const int k = octave_events->probe (times(0), x0);
        events = std::make_unique<EventLocator> (*stepper, octave_events->callback (), k);
        integrator.set_events (events.get ());
      }
    // StepControl "reversible": the symmetric stepper under the step
    // density of Hairer and Söderlind 2005 (ReversibleIntegrator.hpp).
    std::unique_ptr<ReversibleControl> reversible;
    if (s.reversible)
      {
        reversible = std::make_unique<ReversibleControl> (*stepper, s, extra, who);
        reversible->integrator ().set_events (events.get ());
      }
    // "Progress": the loop counts steps and reads the clock every few
    // thousand of them; the display is called at most four times a second.
    std::unique_ptr<ProgressDisplay> progress = ProgressDisplay::from_options (args(4), who);
    if (progress)
      {
        progress->attach (integrator);
        if (reversible)
          progress->attach (reversible->integrator ());
      }
    out.init (times(0), times(times.size () - 1), x0);
    const IntegrationResult res
      = reversible ? reversible->integrator ().run (times, x0, *observer, [] () { octave_quit (); }, &f0)
                   : integrator.run (times, x0, *observer, [] () { octave_quit (); }, &f0);
    out.done ();

    // A composition's rank deficiencies are its base method's.
    const ConstrainedReport constrained = constrained_report (*stepper);
    if (constrained.rank_deficiency_seen)
      warn_singular_constraints (who, constrained.rank_deficiency_t, constrained.condition_estimate,
                                 constrained.minimum_norm_position_multipliers,
                                 constrained.minimum_norm_velocity_multipliers);

    octave_value_list r (8);
    r(0) = out.times ();
    r(1) = columns ? out.states_as_columns () : out.states ();
    r(2) = stats_struct (problem.stats ());
    // RATTLE/SHAKE: whether the constraint gradients stayed sparse
    if (constrained.constrained)
      r(2) = with_sparse_flag (r(2), constrained.sparse);
    r(3) = res.outcome != IntegrationResult::Outcome::Failed;
    r(4) = res.outcome == IntegrationResult::Outcome::Failed
           ? first_step_advice (res.message, problem.stats (), s, given_derivatives (s), projected)
           : res.message;
    if (events)
      {
        OctaveEvents::outputs (events->events (), r(5), r(6), r(7), n);
        octave_scalar_map st = r(2).scalar_map_value ();
        st.assign ("neventevals", static_cast<double> (octave_events->calls ()));
        r(2) = st;
      }
    else
      r(5) = r(6) = r(7) = Matrix (0, 0);
    if (reversible)
      {
        octave_scalar_map st = r(2).scalar_map_value ();
        reversible->add_stats (st);
        r(2) = st;
      }
    return r;
  });
}

/*
%!shared f
%! f = @(t, x) [x(2); -x(1)];
%!test
%! ## harmonic oscillator, Störmer–Verlet fixed steps: closed form cos/sin
%! o = struct ("TimeStepSize", 1e-3, "Explicit", "yes");
%! [t, y, st, ok] = __odepkg_integrate__ ("stormer_verlet", f, [0 1], [1; 0], o, {});
%! assert (ok);
%! assert (t(end), 1, 1e-15);
%! assert (numel (t), 1001);
%! assert (y(end, :), [cos(1), -sin(1)], 1e-6);
%! assert (st.nsteps, 1000);
%! ## 1 initial call, 2 probing separability at t0, 2 per step until the
%! ## quadratic kinetic energy is learned (d + 1 = 2 probes after 8 steps),
%! ## then 1 per step
%! assert (st.nfevals, 1 + 2 + 2*8 + 2 + (1000 - 8));
%!test
%! ## requested output times are hit exactly
%! o = struct ("RelTol", 1e-8, "AbsTol", 1e-10);
%! [t, y, ~, ok] = __odepkg_integrate__ ("velocity_verlet", f, [0 0.5 1 2], [1; 0], o, {});
%! assert (ok);
%! assert (t, [0; 0.5; 1; 2]);
%! assert (y(:, 1), cos (t), 1e-6);
%!test
%! ## extra arguments reach the user function
%! g = @(t, x, k) [x(2); -k * x(1)];
%! o = struct ("TimeStepSize", 1e-3);
%! [t, y] = __odepkg_integrate__ ("velocity_verlet", g, [0 1], [1; 0], o, {4});
%! assert (y(end, 1), cos (2), 1e-5);
%!error <even length> __odepkg_integrate__ ("stormer_verlet", f, [0 1], [1; 0; 1], struct (), {})
%!error <finite> __odepkg_integrate__ ("stormer_verlet", f, [0 1], [1; NaN], struct (), {})
%!error <unknown method> __odepkg_integrate__ ("no_such", f, [0 1], [1; 0], struct (), {})
%!error <must return a real column vector> __odepkg_integrate__ ("stormer_verlet", @(t, x) 1, [0 1], [1; 0], struct (), {})
%!error <RelTol> __odepkg_integrate__ ("stormer_verlet", f, [0 1], [1; 0], struct ("RelTol", -1), {})
%!error <non-finite> __odepkg_integrate__ ("stormer_verlet", @(t, x) [NaN; 0], [0 1], [1; 0], struct (), {})
%!error <Invalid call> __odepkg_integrate__ ()
%!function r = chain_g (q, N)
%!  x = reshape (q, 2, N);
%!  dx = diff ([zeros(2,1), x], 1, 2);
%!  r = (sum (dx.^2, 1) - 1).';
%!endfunction
%!function G = chain_G (q, N)
%!  ## the gradient of chain_g: rows [2 dx_k, -2 dx_k] on points k, k-1
%!  x = reshape (q, 2, N);
%!  dx = 2 * diff ([zeros(2,1), x], 1, 2);
%!  k = 1:N;
%!  G = sparse ([k, k, k(2:end), k(2:end)], [2*k-1, 2*k, 2*k(2:end)-3, 2*k(2:end)-2],
%!              [dx(1,:), dx(2,:), -dx(1,2:end), -dx(2,2:end)], N, 2*N);
%!endfunction
%!function A = ifelse_full (A, c)
%!  if (c)
%!    A = full (A);
%!  endif
%!endfunction
%!function y0 = chain_y0 (N)
%!  ang = repmat ([0.3; 0.9], ceil (N/2), 1)(1:N);
%!  y0 = [reshape([cumsum(cos(ang)).'; -cumsum(sin(ang)).'], 2*N, 1); zeros(2*N, 1)];
%!endfunction
%!test
%! ## a sparse ConstraintGradFcn (hanging chain, N = 20 links) gives the
%! ## trajectory of the same gradient returned full, to round-off, with at
%! ## most one more call of G (the sparse path's probe of the whole pattern,
%! ## at a point near q0; its position Newton with K_0 takes no G at the
%! ## first step's guess) and about as many of g
%! N = 20;  d = 2*N;  grav = repmat ([0; -1], N, 1);
%! f = @(t, y) [y(d+1:end); grav];
%! o = struct ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintFcn", @(q) chain_g (q, N),
%!             "ConstraintGradFcn", @(q) chain_G (q, N), "ConstraintsNb", N);
%! [t, ys, sts, oks] = __odepkg_integrate__ ("rattle", f, [0 1], chain_y0 (N), o, {});
%! o.ConstraintGradFcn = @(q) full (chain_G (q, N));
%! [t, yd, std, okd] = __odepkg_integrate__ ("rattle", f, [0 1], chain_y0 (N), o, {});
%! assert (oks && okd);
%! assert (ys, yd, 1e-11 * max (abs (yd(:))));
%! assert (sts.nconstrgradevals <= std.nconstrgradevals + 1);
%! assert (abs (sts.nconstrevals - std.nconstrevals) <= 0.05 * std.nconstrevals);
%! assert (norm (chain_g (ys(end, 1:d).', N), Inf) < 1e-13);
%! assert (norm (chain_G (ys(end, 1:d).', N) * ys(end, d+1:end).', Inf) < 1e-13);
%!test
%! ## a sparse gradient whose pattern changes (sparse () drops the zeros of
%! ## a horizontal chain's vertical components) and one returned full on
%! ## some calls: both taken as they come
%! N = 12;  d = 2*N;  grav = repmat ([0; -1], N, 1);
%! f = @(t, y) [y(d+1:end); grav];
%! y0 = [reshape([1:N; zeros(1, N)], d, 1); zeros(d, 1)];
%! Gmix = @(q) ifelse_full (chain_G (q, N), q(2) < -0.01);
%! o = struct ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintFcn", @(q) chain_g (q, N),
%!             "ConstraintGradFcn", Gmix, "ConstraintsNb", N);
%! [t, ys, s1, oks] = __odepkg_integrate__ ("rattle", f, [0 0.5], y0, o, {});
%! o.ConstraintGradFcn = @(q) full (chain_G (q, N));
%! [t, yd, s2, okd] = __odepkg_integrate__ ("rattle", f, [0 0.5], y0, o, {});
%! assert (oks && okd);
%! assert (ys, yd, 1e-11 * max (abs (yd(:))));
%!test
%! ## link 1 listed twice: a redundant set, warned (odepkg:singularConstraints)
%! ## and integrated as the chain listed once
%! N = 8;  d = 2*N;  grav = repmat ([0; -1], N, 1);
%! f = @(t, y) [y(d+1:end); grav];
%! o = struct ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintFcn", @(q) chain_g (q, N),
%!             "ConstraintGradFcn", @(q) chain_G (q, N), "ConstraintsNb", N);
%! [t1, y1] = __odepkg_integrate__ ("rattle", f, [0 0.5], chain_y0 (N), o, {});
%! o.ConstraintFcn = @(q) [chain_g(q, N); chain_g(q, N)(1)];
%! o.ConstraintGradFcn = @(q) [chain_G(q, N); chain_G(q, N)(1, :)];
%! o.ConstraintsNb = N + 1;
%! lastwarn ("");
%! txt = evalc ('[t2, y2, st, ok] = __odepkg_integrate__ ("rattle", f, [0 0.5], chain_y0 (N), o, {});');
%! [msg, id] = lastwarn ();
%! assert (ok);
%! assert (id, "odepkg:singularConstraints");
%! assert (st.nrankdeficient > 0);
%! assert (y2, y1, 1e-11 * max (abs (y1(:))));
%! ## the sparse path's position multipliers are one solution, not minimum-norm
%! assert (! isempty (strfind (msg, "minimum-norm velocity multipliers")));
%! assert (! isempty (strfind (msg, "one solution of the singular position system")));
%! ## the dense path's are minimum-norm
%! o.ConstraintGradFcn = @(q) full ([chain_G(q, N); chain_G(q, N)(1, :)]);
%! lastwarn ("");
%! txt = evalc ('[t3, y3, st, ok] = __odepkg_integrate__ ("rattle", f, [0 0.5], chain_y0 (N), o, {});');
%! [msg, id] = lastwarn ();
%! assert (ok);
%! assert (id, "odepkg:singularConstraints");
%! assert (! isempty (strfind (msg, "minimum-norm multipliers were used")));
%! assert (y3, y1, 1e-11 * max (abs (y1(:))));
%!test
%! ## DerivativeCheck on a sparse gradient (sparse products, O(nnz) memory):
%! ## passes when right, catches a sign error
%! N = 20;  d = 2*N;  grav = repmat ([0; -1], N, 1);
%! f = @(t, y) [y(d+1:end); grav];
%! o = struct ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintFcn", @(q) chain_g (q, N),
%!             "ConstraintGradFcn", @(q) chain_G (q, N), "ConstraintsNb", N, "DerivativeCheck", "on");
%! [t1, y1, s1, ok] = __odepkg_integrate__ ("rattle", f, [0 0.05], chain_y0 (N), o, {});
%! assert (ok);
%! o.ConstraintGradFcn = @(q) -chain_G (q, N);
%! try
%!   __odepkg_integrate__ ("rattle", f, [0 0.05], chain_y0 (N), o, {});
%!   error ("no error raised");
%! catch err
%!   assert (err.identifier, "odepkg:derivativeCheck");
%! end_try_catch
%!function G = nan_once_fallen (G, q)
%!  if (q(end) < -0.02)
%!    G(1, 1) = NaN;
%!  endif
%!endfunction
%!test
%! ## a NaN in a sparse G midway (read in place from Octave's arrays): the
%! ## run stops there, not ok, with the finite states computed so far
%! N = 10;  d = 2*N;  grav = repmat ([0; -1], N, 1);
%! f = @(t, y) [y(d+1:end); grav];
%! o = struct ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintFcn", @(q) chain_g (q, N),
%!             "ConstraintGradFcn", @(q) nan_once_fallen (chain_G (q, N), q), "ConstraintsNb", N);
%! y0 = [reshape([1:N; zeros(1, N)], d, 1); zeros(d, 1)];  # horizontal, at rest: falls
%! [t, y, st, ok, msg] = __odepkg_integrate__ ("rattle", f, [0 1], y0, o, {});
%! assert (! ok);
%! assert (t(end) > 0.01 && t(end) < 1);
%! assert (all (isfinite (y(:))));
%! assert (! isempty (strfind (lower (msg), "finite")));
%!function G = zero_once_fallen (G, q)
%!  if (q(end) < -0.02)
%!    G = sparse (rows (G), columns (G));
%!  endif
%!endfunction
%!test
%! ## an all-zero sparse G midway (every constraint force lost): warned
%! ## singular, then the run stops where g(q) can no longer be held at 0,
%! ## not ok, with the states computed so far, on the manifold
%! N = 10;  d = 2*N;  grav = repmat ([0; -1], N, 1);
%! f = @(t, y) [y(d+1:end); grav];
%! o = struct ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintFcn", @(q) chain_g (q, N),
%!             "ConstraintGradFcn", @(q) zero_once_fallen (chain_G (q, N), q), "ConstraintsNb", N);
%! y0 = [reshape([1:N; zeros(1, N)], d, 1); zeros(d, 1)];  # horizontal, at rest: falls
%! lastwarn ("");
%! txt = evalc ('[t, y, st, ok, msg] = __odepkg_integrate__ ("rattle", f, [0 1], y0, o, {});');
%! [~, id] = lastwarn ();
%! assert (id, "odepkg:singularConstraints");
%! assert (st.nrankdeficient > 0);
%! assert (! ok);
%! assert (! isempty (strfind (msg, "the constraints cannot be satisfied")));
%! assert (t(end) > 0.01 && t(end) < 1);
%! assert (all (isfinite (y(:))));
%! assert (max (abs (chain_g (y(end, 1:d).', N))) < 1e-12);
%!test
%! ## one constraint (m = 1), its gradient a sparse column d-by-1 (taken as
%! ## its transpose): a pendulum of length 1 in the plane, against the same
%! ## gradient returned as a full row
%! f = @(t, y) [y(3:4); 0; -1];
%! o = struct ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintFcn", @(q) q.' * q - 1,
%!             "ConstraintGradFcn", @(q) sparse (2 * q), "ConstraintsNb", 1);
%! [t, ys, sts, oks] = __odepkg_integrate__ ("rattle", f, [0 1], [1; 0; 0; 0], o, {});
%! o.ConstraintGradFcn = @(q) 2 * q.';
%! [t, yd, std, okd] = __odepkg_integrate__ ("rattle", f, [0 1], [1; 0; 0; 0], o, {});
%! assert (oks && okd);
%! assert (sts.sparseconstraints);
%! assert (ys, yd, 1e-12);
%! assert (abs (sum (ys(end, 1:2).^2) - 1) < 1e-13);
%!test
%! ## without "Explicit" (the general path) a sparse G stays sparse: the
%! ## dense G's trajectory ...
%! N = 5;  d = 2*N;  grav = repmat ([0; -1], N, 1);
%! f = @(t, y) [y(d+1:end); grav];
%! o = struct ("TimeStepSize", 0.01, "ConstraintFcn", @(q) chain_g (q, N),
%!             "ConstraintGradFcn", @(q) chain_G (q, N), "ConstraintsNb", N);
%! [t1, ys, s1, ok] = __odepkg_integrate__ ("rattle", f, [0 0.1], chain_y0 (N), o, {});
%! o.ConstraintGradFcn = @(q) full (chain_G (q, N));
%! [t2, yd] = __odepkg_integrate__ ("rattle", f, [0 0.1], chain_y0 (N), o, {});
%! assert (ok);
%! assert (ys, yd, 1e-13);
%!error <HamiltonianHessFcn>
%! ## ... but without HamiltonianHessFcn the Hessian of H is differenced as
%! ## a full matrix: refused where that has more than 4e6 entries
%! N = 1500;  d = 2*N;  grav = repmat ([0; -1], N, 1);
%! f = @(t, y) [y(d+1:end); grav];
%! o = struct ("TimeStepSize", 0.01, "ConstraintFcn", @(q) chain_g (q, N),
%!             "ConstraintGradFcn", @(q) chain_G (q, N), "ConstraintsNb", N);
%! __odepkg_integrate__ ("rattle", f, [0 0.01], chain_y0 (N), o, {});
%!error <ConstraintGradFcn must return a real 3-by-4 matrix>
%! o = struct ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintFcn", @(q) zeros (3, 1),
%!             "ConstraintGradFcn", @(q) ifelse_full (sparse (3, 7), q(1) < 0.5), "ConstraintsNb", 3);
%! __odepkg_integrate__ ("rattle", @(t, y) [y(5:8); zeros(4, 1)], [0 0.1], [1; 0; 0; 0; 0; 0; 0; 0], o, {});
%!test
%! ## an error inside the user's function keeps its identifier
%! g = @(t, x) error ("mine:oops", "user failure");
%! try
%!   __odepkg_integrate__ ("stormer_verlet", g, [0 1], [1; 0], struct (), {});
%!   error ("no error raised");
%! catch err
%!   assert (err.identifier, "mine:oops");
%!   assert (err.message, "user failure");
%! end_try_catch
*/
