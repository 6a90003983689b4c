// __odepkg_rattlie__ — odeRATTLie's whole time loop in one compiled call:
// RATTLE on a Lie group (Hante's RATTLie), fixed or adaptive steps, output at every
// step or at requested times, multipliers λ at the output times on request;
// orders 4 to 10 by the symmetric compositions of Composition/Order;
// StepControl "reversible": steps from a step density (Hairer and Söderlind
// 2005), by default the speed in the Lie algebra (LieSpeedDensity.hpp).
#include "EigenConfig.hpp"
#include "binding/Conversions.h"
#include "binding/Composition.h"
#include "binding/ErrorGuard.h"
#include "binding/EventCallback.h"
#include "binding/FirstStepAdvice.h"
#include "binding/LieDenseOutput.h"
#include "binding/LieProblem.h"
#include "binding/OutputCollector.h"
#include "binding/OutputGuard.h"
#include "binding/ProgressDisplay.h"
#include "binding/ReversibleControl.h"
#include "binding/Settings.h"
#include "binding/SingularConstraintsWarning.h"
#include "loop/Integrator.hpp"
#include "lie/LieGroupCheck.hpp"
#include "lie/LieInitialData.hpp"
#include "lie/LieSpeedDensity.hpp"
#include "lie/LieStepper.hpp"

#include <octave/oct.h>
#include <octave/quit.h>

#include <limits>
#include <vector>

using namespace odepkg;
using namespace odepkg::binding;

namespace {

// Options of the other solvers that have no meaning on a Lie group: refused,
// never ignored.
void refuse_foreign_options (const OptionReader& r, const std::string& who)
{
  static const char* const foreign[][2] = {
    {"HamiltonianHessFcn", "the Newton matrices of RATTLie need no Hessian"},
    {"ConstraintHessFcn", "RATTLie needs Phi and B only"},
    {"ConstraintFlowFcn", "it belongs to odeRATTLE's g(q, p) constraints"},
    {"BaseMethod", "it belongs to odeRATTLE's g(q, p) constraints"},
    {"Q_DoFs", "it is an odeSPVI option"}, {"P_DoFs", "it is an odeSPVI option"},
    {"Nodes", "it is an odeSPVI option"}, {"Weights", "it is an odeSPVI option"},
    {"Legendre", "it is an odeSPVI option"}, {"Derivatives", "it is an odeSPVI option"},
    {"Extremes", "it is an odeSPVI option"},
  };
  for (const auto& f : foreign)
    if (r.has (f[0]))
      error_with_id ("odepkg:unsupportedOption", "%s: option \"%s\" is not supported here: %s",
                     who.c_str (), f[0], f[1]);
  if (r.has ("ConstraintVariables") && r.get ("ConstraintVariables").is_string ()
      && r.get ("ConstraintVariables").string_value () != "q")
    error_with_id ("odepkg:unsupportedOption",
                   "%s: option \"ConstraintVariables\" must be \"q\": Phi takes the group coordinates q",
                   who.c_str ());
  if (r.flag ("Explicit", false))
    error_with_id ("odepkg:unsupportedOption",
                   "%s: option \"Explicit\" = \"yes\" is not available: RATTLie solves for the "
                   "half-step velocity by Newton", who.c_str ());
  if (r.flag ("NodeOutput", false))
    error_with_id ("odepkg:unsupportedOption", "%s: option \"NodeOutput\" is an odeSPVI option", who.c_str ());
}

// Forwards the output points and records λ at each of them.
class LambdaObserver final : public Observer
{
public:
  LambdaObserver (Observer& inner, lie::LieStepper& stepper, int m)
    : inner_ (inner), stepper_ (stepper), lambda_ (m) { }

  bool operator() (double t, const Vec& x) override
  {
    if (! stepper_.multipliers (t, x, lambda_))
      lambda_.setConstant (std::numeric_limits<double>::quiet_NaN ());
    values_.insert (values_.end (), lambda_.data (), lambda_.data () + lambda_.size ());
    return inner_ (t, x);
  }

  octave_value matrix () const
  {
    const octave_idx_type m = lambda_.size (), k = values_.size () / std::max<octave_idx_type> (m, 1);
    Matrix a (m, k);
    std::copy (values_.begin (), values_.end (), a.fortran_vec ());
    return a;
  }

private:
  Observer& inner_;
  lie::LieStepper& stepper_;
  Vec lambda_;
  std::vector<double> values_;
};

}  // namespace

// In the package's one oct-file (src/Makefile):
// PKG_ADD: autoload ("__odepkg_rattlie__", "__odepkg_integrate__.oct");
// PKG_DEL: autoload ("__odepkg_rattlie__", "__odepkg_integrate__.oct", "remove");

DEFUN_DLD (__odepkg_rattlie__, args, ,
           "-*- texinfo -*-\n\
@deftypefn {} {[@var{t}, @var{y}, @var{stats}, @var{ok}, @var{msg}, @var{lambda}] =} __odepkg_rattlie__ (@var{fcn}, @var{times}, @var{y0}, @var{options}, @var{extra}, @var{solver}, @var{want_lambda})\n\
Internal: RATTLE on the Lie group @var{options}.LieGroup from @var{times}(1)\n\
to @var{times}(end).  With two @var{times} every accepted step is output, with\n\
more exactly those times.  @var{lambda} holds the multipliers at the output\n\
times when @var{want_lambda} is true; @var{store} (optional, default true)\n\
false keeps only the last point (output streamed through the OutputFcn).\n\
Called by odeRATTLie.\n\
\n\
@code{[@var{y}, @var{yp}, @var{lambda}] = __odepkg_rattlie__ (\"interpolate\", @var{x}, @var{Y},\n\
@var{t}, @var{options}, @var{fcn}, @var{extra}, @var{want_lambda}, @var{who})}: the states of the solution\n\
with output points (@var{x}, @var{Y}) at the times @var{t}, by the interpolant\n\
on the group, projected onto the constraints (deval, Refine).\n\
@end deftypefn")
{
  if (args.length () >= 1 && args(0).is_string () && args(0).string_value () == "interpolate")
    {
      const std::string who_i = args.length () >= 9 && args(8).is_string () ? args(8).string_value () : "deval";
      return guarded (who_i.c_str (), [&] () { return lie_dense_output (args, who_i.c_str ()); });
    }
  std::string who_str = "__odepkg_rattlie__";
  if (args.length () >= 7 && args(5).is_string ())
    who_str = args(5).string_value ();
  const char* who = who_str.c_str ();
  return guarded (who, [&] () -> octave_value_list {
    if (args.length () != 7 && args.length () != 8)
      print_usage ();
    // STORE (default true): false streams the output through the OutputFcn
    // without storing it (no memory cap), as __odepkg_integrate__.
    const bool store = args.length () < 8 || args(7).is_true ();
    if (! args(0).is_function_handle () && ! args(0).is_inline_function ())
      error_with_id ("odepkg:invalidInput", "%s: FCN must be a function handle", who);
    const Vec times = read_times (args(1), who);
    // the type first: array_value () of a string or cell raises an error
    // without an identifier
    if (! args(2).isnumeric () || ! args(2).isreal () || args(2).numel () < 2)
      error_with_id ("odepkg:invalidInput", "%s: Y0 must be a real vector [q0; v0]", who);
    const NDArray ya = args(2).array_value ();
    Vec y0 (ya.numel ());
    for (octave_idx_type i = 0; i < ya.numel (); ++i)
      {
        if (! std::isfinite (ya(i)))
          error_with_id ("odepkg:invalidInput", "%s: Y0 must be finite", who);
        y0(i) = ya(i);
      }
    if (! args(4).iscell ())
      error_with_id ("odepkg:invalidInput", "%s: EXTRA must be a cell", who);
    const octave_value_list extra (args(4).cell_value ());
    const bool want_lambda = args(6).is_true ();
    const int ns = y0.size ();

    OptionReader r (args(3), who);
    refuse_foreign_options (r, who);
    std::unique_ptr<lie::LieGroup> group = read_lie_group (r, ns, who);
    const int n = group->dim (), nq = group->coord_size ();
    // M by its diagonal blocks where it has them (a chain of N bodies: O(N))
    const LieMass mass = read_lie_mass (r, *group, who);
    const int m_opt = r.integer ("ConstraintsNb", 0, 1);
    if (m_opt >= n)
      error_with_id ("odepkg:invalidOption",
                     "%s: option \"ConstraintsNb\" (%d) must be smaller than the dimension of %s (%d)",
                     who, m_opt, group->name ().c_str (), n);
    // NonholonomicFcn: k velocity constraints B_nh(q) v = 0, k + m < n
    // (checked here against the group's dimension, before the generic
    // check of read_settings against numel (Y0) / 2)
    const int k_opt = r.integer ("NonholonomicsNb", 0, 1);
    if (k_opt > 0 && k_opt + m_opt >= n)
      error_with_id ("odepkg:invalidOption",
                     "%s: options \"NonholonomicsNb\" + \"ConstraintsNb\" (%d + %d) must be smaller than the "
                     "dimension of %s (%d)", who, k_opt, m_opt, group->name ().c_str (), n);
    Settings s = read_settings (args(3), who, ns);
    const double defect = group->structure_defect (y0.head (nq));
    if (! (defect <= 1e-10))
      error_with_id ("odepkg:invalidInput",
                     "%s: the group coordinates in Y0 are not an element of %s (distance %g; a unit "
                     "quaternion or a rotation matrix to round-off is expected)",
                     who, group->name ().c_str (), defect);
    s.fns.f = args(0);
    OctaveLieProblem op (std::move (group), mass, s.fns, extra, who);
    lie::LieGroupProblem& lp = op.problem ();
    // ConstraintGradFcn returning a sparse matrix at q0: B stays sparse
    op.probe_sparse_gradient (y0.head (nq));
    // The user's group and B against differences, once (odepkg:derivativeCheck).
    const bool user_group = dynamic_cast<const UserLieGroup*> (&lp.group ()) != nullptr;
    bool projected = false;
    if (s.derivative_check)
      {
        if (const auto* ug = dynamic_cast<const UserLieGroup*> (&lp.group ()))
          lie::check_lie_group (*ug, y0.head (nq),
                                {ug->has_tangent_inv_transpose (), ug->has_d_tangent_inv_transpose ()});
        lp.check_derivatives (y0.head (nq));
      }

    if (lp.constraints () > 0)
      {
        Vec y = y0;
        const lie::LieProjectionResult pr = lie::project_initial_data (lp, y, 1e-12);
        if (! pr.finite)
          error_with_id ("odepkg:nonFiniteFcn",
                         "%s: ConstraintFcn or ConstraintGradFcn returned a non-finite value at the initial data", who);
        const double tq = 1e-10 * std::max (1.0, y0.head (nq).lpNorm<Eigen::Infinity> ());
        const double tv = 1e-10 * std::max (1.0, y0.tail (n).lpNorm<Eigen::Infinity> ());
        if (pr.phi_before > tq || pr.hidden_before > tv)
          {
            if (s.initial_projection_error)
              error_with_id ("odepkg:inconsistentInitialData",
                             "%s: the initial data violate the constraints: |Phi(q0)| = %g, |B(q0) v0| = %g",
                             who, pr.phi_before, pr.hidden_before);
            if (! pr.converged)
              error_with_id ("odepkg:inconsistentInitialData",
                             "%s: the initial data violate the constraints (|Phi(q0)| = %g, |B(q0) v0| = %g) "
                             "and could not be projected onto them", who, pr.phi_before, pr.hidden_before);
            warning_with_id ("odepkg:inconsistentInitialData",
                             "%s: the initial data violate the constraints (|Phi(q0)| = %g, |B(q0) v0| = %g); "
                             "projected onto them (now %g, %g)", who, pr.phi_before, pr.hidden_before,
                             pr.phi_after, pr.hidden_after);
            y0 = y;
            projected = true;
          }
      }

    // RATTLie is symmetric: Composition/Order compose it (CompositionStepper,
    // warm-started per stage); `rattlie` is the base, for λ and its reports.
    // the sparse RATTLie for a sparse B and a block-diagonal M (O(nnz) per
    // step), else the dense one; with NonholonomicFcn the dense nonholonomic
    // RATTLie (NonholonomicRattLie.hpp)
    const int k = op.velocity_constraints ();
    std::unique_ptr<lie::LieStepper> rattlie_base
      = k > 0 ? make_nonholonomic_lie_stepper (lp, op, base_newton_options (s), who)
              : make_lie_stepper (lp, base_newton_options (s), who);
    lie::LieStepper& rattlie = *rattlie_base;
    if (k > 0)
      {
        // v0 onto [B; B_nh](q0) v = 0, M-orthogonally (q0 is on Phi = 0)
        Vec y = y0;
        double before = 0.0, after = 0.0;
        if (! project_nonholonomic_velocity (rattlie, y, before, after))
          error_with_id ("odepkg:nonFiniteFcn",
                         "%s: NonholonomicFcn or ConstraintGradFcn returned a non-finite value at the initial data", who);
        const double tv = 1e-10 * std::max (1.0, y0.tail (n).lpNorm<Eigen::Infinity> ());
        if (before > tv)
          {
            if (s.initial_projection_error)
              error_with_id ("odepkg:inconsistentInitialData",
                             "%s: the initial data violate the velocity constraints: |B_nh(q0) v0| = %g", who, before);
            warning_with_id ("odepkg:inconsistentInitialData",
                             "%s: the initial data violate the velocity constraints (|B_nh(q0) v0| = %g); v0 "
                             "projected onto them (now %g)", who, before, after);
            y0 = y;
            projected = true;
          }
      }
    const bool sparse_path = is_sparse_rattlie (rattlie);
    const std::unique_ptr<Stepper> method = compose (std::move (rattlie_base), s);
    Stepper& stepper = *method;
    // Output points known up front: the requested times, or every fixed
    // step; a stored output beyond the memory cap is refused here
    // (odepkg:outputTooLarge), adaptive runs by the collector as they go.
    double expected_points = times.size ();
    if (s.integrator.fixed_step > 0 && times.size () == 2)
      expected_points = 2 + std::abs (times(1) - times(0)) / s.integrator.fixed_step;
    check_output_size (expected_points, y0.size (), store, who);
    const std::size_t expected = times.size () > 2 || s.integrator.fixed_step > 0
                                 ? static_cast<std::size_t> (std::min (expected_points, 1e7)) : 1024;
    OutputCollector out (s, extra, expected, who, store);
    // the multipliers [lambda; mu] (m + k rows)
    const int nmult = lp.constraints () + k;
    LambdaObserver lambda (out, rattlie, nmult);
    Observer& observer = want_lambda && nmult > 0 ? static_cast<Observer&> (lambda) : out;
    Integrator integrator (stepper, s.integrator);
    // Events: probed at t0 after every other check (its size k), then one
    // call per step plus the location of crossings.
    std::unique_ptr<OctaveEvents> octave_events;
    std::unique_ptr<EventLocator> events;
    if (s.events.is_defined ())
      {
        octave_events = std::make_unique<OctaveEvents> (s.events, extra, who);
        const int k = octave_events->probe (times(0), y0);
        events = std::make_unique<EventLocator> (stepper, octave_events->callback (), k);
        integrator.set_events (events.get ());
      }
    // StepControl "reversible": the (composed) symmetric RATTLie under the
    // step density of Hairer and Söderlind 2005; the default density is
    // measured on the group (the embedded y ± δy' of FieldSpeedDensity
    // leaves it and is not odd in v).
    std::unique_ptr<lie::LieSpeedDensity> lie_speed;
    std::unique_ptr<ReversibleControl> reversible;
    if (s.reversible)
      {
        lie_speed = std::make_unique<lie::LieSpeedDensity> (lp);
        reversible = std::make_unique<ReversibleControl> (stepper, s, extra, who, lie_speed.get ());
        reversible->integrator ().set_events (events.get ());
      }
    // "Progress": the loop counts steps and reads the clock every few
    // thousand of them; the display is called at most four times a second.
    std::unique_ptr<ProgressDisplay> progress = ProgressDisplay::from_options (args(3), who);
    if (progress)
      {
        progress->attach (integrator);
        if (reversible)
          progress->attach (reversible->integrator ());
      }
    out.init (times(0), times(times.size () - 1), y0);
    const IntegrationResult res
      = reversible ? reversible->integrator ().run (times, y0, observer, [] () { octave_quit (); })
                   : integrator.run (times, y0, observer, [] () { octave_quit (); });
    out.done ();

    if (rattlie.rank_deficiency_seen ())
      warn_singular_constraints (who, rattlie.rank_deficiency_t (), rattlie.condition_estimate (),
                                 rattlie.minimum_norm_position_multipliers ());
    octave_scalar_map st = stats_struct (lp.stats ());
    st.assign ("velocitydependent", rattlie.velocity_dependent ());
    st.assign ("sparseconstraints", sparse_path);  // B kept sparse (SparseRattLie)
    st.assign ("groupdim", static_cast<double> (n));   // read by the driver's monitoring
    if (reversible)
      reversible->add_stats (st);
    octave_value_list rv (9);
    rv(0) = out.times ();
    rv(1) = out.states ();
    rv(2) = st;
    rv(3) = res.outcome != IntegrationResult::Outcome::Failed;
    rv(4) = res.outcome == IntegrationResult::Outcome::Failed
            ? first_step_advice (res.message, lp.stats (), s, given_derivatives (s, user_group), projected)
            : res.message;
    rv(5) = want_lambda && nmult > 0 ? lambda.matrix () : octave_value (Matrix (0, 0));
    if (events)
      {
        OctaveEvents::outputs (events->events (), rv(6), rv(7), rv(8), ns);
        st.assign ("neventevals", static_cast<double> (octave_events->calls ()));
        rv(2) = st;
      }
    else
      rv(6) = rv(7) = rv(8) = Matrix (0, 0);
    return rv;
  });
}
