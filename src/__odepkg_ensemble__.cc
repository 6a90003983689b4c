// __odepkg_ensemble__ — K trajectories of one system in one compiled call,
// every callback called once per stage on all live members (the ensemble
// mode of odeSV, odeSE, odeVV and odeRATTLE; src/core/ensemble/).
#include "EigenConfig.hpp"
#include "binding/Conversions.h"
#include "binding/ErrorGuard.h"
#include "binding/NativeModel.h"
#include "binding/OctaveEnsemble.h"
#include "binding/OutputGuard.h"
#include "binding/Settings.h"
#include "ensemble/EnsembleComposition.hpp"
#include "ensemble/EnsembleIntegrator.hpp"
#include "ensemble/EnsembleRattle.hpp"
#include "ensemble/EnsembleSplitting.hpp"

#include <octave/oct.h>
#include <octave/parse.h>

#include <memory>
#include <vector>

using namespace odepkg;
using namespace odepkg::binding;
using namespace odepkg::ensemble;

namespace {

/// Stores the outputs (n x K per point, or the last one only) and calls
/// the OutputFcn with (t, Y = n x K, flag) as ode45 does.
class EnsembleOutput final : public EnsembleObserver {
 public:
  EnsembleOutput(const octave_value& fcn, const octave_value_list& extra, double t0, double tf, int n, int K,
                 bool store, const char* who)
      : fcn_(fcn), extra_(extra), t0_(t0), tf_(tf), n_(n), K_(K), store_(store), who_(who),
        cap_(max_output_points(static_cast<double>(n) * K)) {}

  bool output(double t, const ConstMatRef& X) override {
    if (store_) {
      if (times_.size() + 1 > cap_)
        error_with_id("odepkg:outputTooLarge",
                      "%s: the stored output would exceed the memory cap (%zu points of %d x %d states); "
                      "ask for fewer output times (TSPAN), or call with no output argument and an OutputFcn",
                      who_, cap_, n_, K_);
      times_.push_back(t);
      states_.insert(states_.end(), X.data(), X.data() + X.size());
    } else {
      times_.assign(1, t);
      states_.assign(X.data(), X.data() + X.size());
    }
    if (!fcn_.is_defined()) return true;
    Matrix y(n_, K_);
    std::copy(X.data(), X.data() + X.size(), y.fortran_vec());
    octave_value_list a;
    if (!started_) {
      started_ = true;
      Matrix span(2, 1);
      span(0) = t0_;
      span(1) = tf_;
      a = ovl(span, y, "init");
    } else {
      a = ovl(t, y, "");
    }
    for (int i = 0; i < extra_.length(); ++i) a.append(extra_(i));
    const octave_value_list r = octave::feval(fcn_, a, 1);
    return !(started_ && a(2).string_value().empty() && r.length() > 0 && r(0).is_defined() && !r(0).isempty() &&
             r(0).is_true());
  }

  void done() {
    if (!fcn_.is_defined() || !started_) return;
    octave_value_list a = ovl(Matrix(), Matrix(), "done");
    for (int i = 0; i < extra_.length(); ++i) a.append(extra_(i));
    octave::feval(fcn_, a, 0);
  }

  octave_value times() const {
    ColumnVector t(times_.size());
    std::copy(times_.begin(), times_.end(), t.fortran_vec());
    return t;
  }
  /// n x K x N
  octave_value states() const {
    NDArray y(dim_vector(n_, K_, static_cast<octave_idx_type>(times_.size())));
    std::copy(states_.begin(), states_.end(), y.fortran_vec());
    return y;
  }

 private:
  octave_value fcn_;
  octave_value_list extra_;
  double t0_, tf_;
  int n_, K_;
  bool store_;
  const char* who_;
  std::size_t cap_;
  bool started_ = false;
  std::vector<double> times_, states_;
};

octave_scalar_map ensemble_stats(const EnsembleStats& s, int K) {
  octave_scalar_map m;
  m.assign("members", static_cast<double>(K));
  m.assign("nsteps", static_cast<double>(s.steps));
  m.assign("nfailed", static_cast<double>(s.rejected));
  m.assign("nfevals", static_cast<double>(s.field_calls));
  m.assign("nfevalmembers", static_cast<double>(s.field_members));
  m.assign("nconstrevals", static_cast<double>(s.constraint_calls));
  m.assign("nconstrevalmembers", static_cast<double>(s.constraint_members));
  m.assign("nconstrgradevals", static_cast<double>(s.grad_calls));
  m.assign("nconstrgradevalmembers", static_cast<double>(s.grad_members));
  m.assign("neventevals", static_cast<double>(s.event_calls));
  m.assign("nnewtonsolves", static_cast<double>(s.newton_solves));
  m.assign("nnewtoniter", static_cast<double>(s.newton_iterations));
  m.assign("maxnewtoniter", static_cast<double>(s.newton_max_iterations));
  m.assign("nrankdeficient", static_cast<double>(s.rank_deficient));
  m.assign("nnewtonretries", static_cast<double>(s.newton_retries));
  m.assign("ndistantroots", static_cast<double>(s.distant_roots));
  m.assign("nfailedmembers", static_cast<double>(s.failed_members));
  m.assign("maxhiddenresidual", s.max_hidden_residual);
  return m;
}

}  // namespace

// In the package's one oct-file (src/Makefile):
// PKG_ADD: autoload ("__odepkg_ensemble__", "__odepkg_integrate__.oct");
// PKG_DEL: autoload ("__odepkg_ensemble__", "__odepkg_integrate__.oct", "remove");

DEFUN_DLD (__odepkg_ensemble__, args, ,
           "-*- texinfo -*-\n\
@deftypefn {} {[@var{t}, @var{y}, @var{stats}, @var{status}, @var{msg}, @var{te}, @var{ye}, @var{ie}, @var{fallback}] =} __odepkg_ensemble__ (@var{method}, @var{fcn}, @var{times}, @var{y0}, @var{options}, @var{extra}, @var{solver}, @var{store})\n\
Internal: integrate the K columns of @var{y0} (n-by-K) as one ensemble with\n\
the compiled @var{method} (\"stormer_verlet\", \"symplectic_euler\",\n\
\"velocity_verlet\" or \"rattle\"), every user function called once per stage\n\
on all live members.  @var{y} is n-by-K-by-N; @var{status}(k) is 0 (reached\n\
the end), 1 (terminal event) or -1 (failed, @var{msg}@{k@} says why); @var{te},\n\
@var{ye}, @var{ie} are 1-by-K cells.  @var{fallback} true: the options ask for a\n\
scheme with no batched form (implicit, general H, non-quadratic kinetic\n\
energy, ...): nothing was run, the caller runs the members one by one.\n\
Called by the odepkg solvers when Y0 has several columns.\n\
@end deftypefn")
{
  std::string who_str = "__odepkg_ensemble__";
  if (args.length () >= 7 && args(6).is_string ())
    who_str = args(6).string_value ();
  const char* who = who_str.c_str ();
  return guarded (who, [&] () -> octave_value_list {
    if (args.length () < 6 || args.length () > 8)
      print_usage ();
    const bool store = args.length () < 8 || args(7).is_true ();
    if (! args(0).is_string ())
      error_with_id ("odepkg:invalidInput", "%s: METHOD must be a string", who);
    const std::string method = args(0).string_value ();
    const bool native = is_native_model (args(1));
    if (! native && ! args(1).is_function_handle ())
      error_with_id ("odepkg:invalidInput", "%s: FCN must be a function handle or a model of odepkg_model", who);
    const Vec times = read_times (args(2), who);
    if (! args(3).isnumeric () || ! args(3).isreal () || args(3).ndims () != 2 || args(3).isempty ()
        || args(3).rows () % 2 != 0)
      error_with_id ("odepkg:invalidInput", "%s: Y0 must be a real 2d-by-K matrix, %s per column", who,
                     who_str == "odeVV" ? "[x0; v0]" : "[q0; p0]");
    const Matrix y0m = args(3).matrix_value ();
    const int n = y0m.rows (), K = y0m.columns (), d = n / 2;
    Mat X0 (n, K);
    for (int j = 0; j < K; ++j)
      for (int i = 0; i < n; ++i)
        {
          if (! std::isfinite (y0m(i, j)))
            error_with_id ("odepkg:invalidInput", "%s: Y0 must be finite (member %d)", who, j + 1);
          X0(i, j) = y0m(i, j);
        }
    if (! args(5).iscell ())
      error_with_id ("odepkg:invalidInput", "%s: EXTRA must be a cell", who);
    const octave_value_list extra (args(5).cell_value ());
    Settings s = read_settings (args(4), who, n);
    // a model: its kernels over the K members, each with its own column of
    // parameters, f on the machine's cores (option "Threads")
    NativeModelFields model;
    if (native)
      {
        model = read_native_model (args(1), who);
        if (2 * model.d != n)
          error_with_id ("odepkg:invalidInput", "%s: Y0 must have 2 d = %d rows for this model (got %d)",
                         who, 2 * model.d, n);
        if (model.par.cols () != K)
          error_with_id ("odepkg:invalidInput", "%s: the model's parameters must have one column per member (%d)",
                         who, K);
        s.fns.m = model.m;
      }

    // Which schemes have a batched form; anything else runs member by member.
    const bool no_hessians = ! s.fns.hessian.is_defined () && ! s.fns.GH.is_defined ();
    bool batched = false;
    if (method == "velocity_verlet")
      batched = s.fns.m == 0;
    else if (method == "stormer_verlet" || method == "symplectic_euler")
      batched = s.explicit_scheme && s.fns.m == 0 && no_hessians;
    else if (method == "rattle")
      batched = s.explicit_scheme && s.fns.m > 0 && ! s.fns.phase_space && no_hessians;
    if (s.composition && method == "symplectic_euler")
      batched = false;  // not symmetric: the member-by-member run refuses it with its own message
    octave_value_list fallback (9);
    for (int i = 0; i < 8; ++i)
      fallback(i) = Matrix ();
    fallback(8) = true;
    if (! batched)
      return fallback;

    std::unique_ptr<OctaveEnsembleProblem> op;
    std::unique_ptr<NativeEnsemble> kernels;
    std::unique_ptr<EnsembleProblem> native_problem;
    if (native)
      {
        kernels = std::make_unique<NativeEnsemble> (model, method == "velocity_verlet", times(0), X0,
                                                    ensemble_threads (args(4), K, who));
        native_problem = std::make_unique<EnsembleProblem> (d, K, kernels->field ());
        kernels->attach_member_field (*native_problem);
        if (method == "rattle")
          native_problem->set_constraints (model.m, kernels->constraint (), kernels->constraint_grad ());
      }
    else
      op = std::make_unique<OctaveEnsembleProblem> (args(1), s.fns.g, s.fns.G, method == "rattle" ? s.fns.m : 0,
                                                    d, K, extra, who);
    EnsembleProblem& problem = native ? *native_problem : op->problem ();
    std::unique_ptr<EnsembleMethod> base;
    if (method == "rattle")
      {
        EnsembleRattle::Options ro;
        ro.tol = s.newton.tol;
        ro.max_iterations = s.newton.max_iterations;
        base = std::make_unique<EnsembleRattle> (problem, ro);
      }
    else
      base = std::make_unique<EnsembleSplitting> (
          problem, method == "stormer_verlet" ? EnsembleSplitting::Kind::StormerVerlet
                   : method == "velocity_verlet" ? EnsembleSplitting::Kind::VelocityVerlet
                                                 : EnsembleSplitting::Kind::SymplecticEuler);
    std::unique_ptr<EnsembleMethod> composed;
    if (s.composition)
      composed = std::make_unique<EnsembleComposition> (*base, *s.composition);
    EnsembleMethod& stepper = composed ? *composed : *base;

    EnsembleOptions eo;
    eo.norm = s.integrator.norm;
    eo.fixed_step = s.integrator.fixed_step;
    eo.initial_step = s.integrator.initial_step;
    eo.max_step = s.integrator.max_step;
    eo.safety = s.integrator.controller.safety;
    eo.fac_min = s.integrator.controller.fac_min;
    eo.fac_max = s.integrator.controller.fac_max;
    EnsembleIntegrator integrator (stepper, eo);

    double expected_points = times.size ();
    if (eo.fixed_step > 0 && times.size () == 2)
      expected_points = 2 + std::abs (times(1) - times(0)) / eo.fixed_step;
    check_output_size (expected_points, static_cast<double> (n) * K, store, who);

    std::unique_ptr<OctaveEnsembleEvents> events;
    int nev = 0;
    if (s.events.is_defined ())
      {
        events = std::make_unique<OctaveEnsembleEvents> (s.events, extra, who);
        nev = events->probe (times(0), X0);
        integrator.set_events (events->callback (), nev);
      }
    EnsembleOutput out (s.output_fcn, extra, times(0), times(times.size () - 1), n, K, store, who);
    try
      {
        integrator.run (times, X0, out);
      }
    catch (const InputError& e)
      {
        if (e.id == "ensembleFallback")
          return fallback;
        throw;
      }
    out.done ();

    const std::vector<MemberOutcome>& oc = integrator.outcomes ();
    RowVector status (K);
    Cell msg (1, K), te (1, K), ye (1, K), ie (1, K);
    for (int j = 0; j < K; ++j)
      {
        status(j) = oc[j].state == MemberOutcome::State::Running ? 0
                    : oc[j].state == MemberOutcome::State::Event ? 1 : -1;
        msg(j) = oc[j].message;
        const auto& ev = oc[j].events;
        ColumnVector tj (ev.size ()), ij (ev.size ());
        Matrix yj (ev.size (), n);
        for (std::size_t e = 0; e < ev.size (); ++e)
          {
            tj(e) = ev[e].t;
            ij(e) = ev[e].index + 1;
            for (int i = 0; i < n; ++i)
              yj(e, i) = ev[e].x(i);
          }
        te(j) = tj;
        ye(j) = yj;
        ie(j) = ij;
      }
    octave_value_list r (9);
    r(0) = out.times ();
    r(1) = out.states ();
    octave_scalar_map st = ensemble_stats (problem.stats (), K);
    if (kernels)
      st.assign ("threads", static_cast<double> (kernels->threads ()));
    r(2) = st;
    r(3) = status;
    r(4) = msg;
    if (events)
      {
        r(5) = te;
        r(6) = ye;
        r(7) = ie;
      }
    else
      r(5) = r(6) = r(7) = Cell (1, K);
    r(8) = false;
    return r;
  });
}

/*
%!test
%! ## two harmonic oscillators as one ensemble: the closed form per member
%! f = @(t, y) [y(2,:); -y(1,:)];
%! o = struct ("TimeStepSize", 1e-3, "Explicit", "yes");
%! [t, y, st, status] = __odepkg_ensemble__ ("stormer_verlet", f, [0 1], [1 0; 0 2], o, {});
%! assert (size (y), [2, 2, 1001]);
%! assert (status, [0 0]);
%! assert (squeeze (y(1, 1, end)), cos (1), 1e-6);
%! assert (squeeze (y(1, 2, end)), 2 * sin (1), 1e-6);
%! ## one batched call per step after learning the velocity model
%! assert (st.nfevals < 1000 + 10);
%!test
%! ## an implicit scheme has no batched form: the caller runs the members
%! f = @(t, y) [y(2,:); -y(1,:)];
%! [~, ~, ~, ~, ~, ~, ~, ~, fb] = __odepkg_ensemble__ ("stormer_verlet", f, [0 1], [1 0; 0 2], struct ("TimeStepSize", 0.1), {});
%! assert (fb);
%!error <2d-by-K> __odepkg_ensemble__ ("stormer_verlet", @(t, y) y, [0 1], [1 2 3], struct (), {})
%!error <must return a real matrix> __odepkg_ensemble__ ("stormer_verlet", @(t, y) [1; 2], [0 1], [1 0; 0 1], struct ("TimeStepSize", 0.1, "Explicit", "yes"), {})
*/
