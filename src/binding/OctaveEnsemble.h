// OctaveEnsemble.h — the user's vectorised functions as the ensemble core's
// batched callbacks: f (t, Y) with Y = n x k returns n x k, g (Q) m x k,
// G (Q) m x d x k, the events (t, Y) nev x k values.  Each result is checked
// (class, size) before it is copied, and the errors name the option and the
// shape expected for k members.
#ifndef ODEPKG_BINDING_OCTAVE_ENSEMBLE_H
#define ODEPKG_BINDING_OCTAVE_ENSEMBLE_H

#include "EigenConfig.hpp"
#include "CallbackHeap.hpp"
#include "ensemble/EnsembleIntegrator.hpp"
#include "ensemble/EnsembleProblem.hpp"

#include <octave/interpreter.h>
#include <octave/oct.h>
#include <octave/parse.h>

#include <string>

namespace odepkg::binding {

/// One vectorised user function called as fcn (t, X, extra...) or fcn (X, extra...).
class BatchFunction {
 public:
  BatchFunction(octave_value fcn, const octave_value_list& extra, std::string who, std::string option,
                bool with_time)
      : fcn_(std::move(fcn)), who_(std::move(who)), option_(std::move(option)), with_time_(with_time) {
    const int k = with_time ? 2 : 1;
    args_.resize(k + extra.length());
    for (int i = 0; i < extra.length(); ++i) args_(k + i) = extra(i);
  }

  /// fcn at the columns of X; the first output, which must hold rows * k
  /// reals (and `rows` rows unless k = 1 or `rows` = 1 ... the shapes named
  /// in `shape`).  Returns its data.
  /// `per_member` numbers per column of X, the first dimension `lead`
  /// (a vector of k values, row or column, when per_member is 1).
  const double* call(double t, const ensemble::ConstMatRef& X, octave_idx_type per_member, const char* shape,
                     int nout = 1, octave_value_list* all = nullptr, octave_idx_type lead = -1) {
    const octave_idx_type k = X.cols();
    const octave_idx_type rows = lead > 0 ? lead : per_member;
    octave_value_list r = call_raw(t, X, nout);
    const octave_idx_type want = per_member * k;
    if (r.length() < 1 || !(r(0).isnumeric() || r(0).islogical()) || r(0).isinteger() || r(0).iscomplex() ||
        r(0).numel() != want || (k > 1 && r(0).rows() != rows && !(per_member == 1 && r(0).columns() == 1)))
      error_with_id("odepkg:badFcnOutput",
                    "%s: in ensemble mode %s is called with %ld states as columns and must return a real %s "
                    "(%ld numbers per state, %ld states)%s",
                    who_.c_str(), option_.c_str(), static_cast<long>(k), shape, static_cast<long>(per_member),
                    static_cast<long>(k), describe(r).c_str());
    result_ = r(0).array_value();
    if (all) *all = r;
    return result_.data();
  }

  /// fcn at the columns of X, its outputs unchecked.
  octave_value_list call_raw(double t, const ensemble::ConstMatRef& X, int nout) {
    const octave_idx_type k = X.cols();
    int a = 0;
    if (with_time_) args_(a++) = t;
    args_(a) = octave_value();  // drop the last call's reference to xo_ (no copy on write)
    if (xo_.rows() != X.rows() || xo_.cols() != k) xo_ = Matrix(X.rows(), k);
    double* dst = xo_.fortran_vec();
    for (octave_idx_type j = 0; j < k; ++j)
      std::copy(X.col(j).data(), X.col(j).data() + X.rows(), dst + j * X.rows());
    args_(a) = xo_;
    try {
      return octave::feval(fcn_, args_, nout);
    } catch (const octave::execution_exception& ee) {
      // An error inside the user's function: its message says nothing of
      // the ensemble (e.g. "vertical dimensions mismatch (1x6368 vs 1x32)"
      // from code written for one state); say that it got all members.
      const std::string msg = ee.message();
      if (octave::interpreter* interp = octave::interpreter::the_interpreter()) interp->recover_from_exception();
      error_with_id("odepkg:ensembleFcnFailed",
                    "%s: %s failed in ensemble mode, where it is called with all %ld members at once, one "
                    "state per column (a %ldx%ld matrix; write it for columns, or integrate the members one "
                    "at a time): %s",
                    who_.c_str(), option_.c_str(), static_cast<long>(k), static_cast<long>(X.rows()),
                    static_cast<long>(k), msg.c_str());
    }
  }

 private:
  static std::string describe(const octave_value_list& r) {
    if (r.length() < 1) return ", but returned nothing";
    return ", but returned a " + r(0).dims().str() + " " + r(0).class_name();
  }

  octave_value fcn_;
  std::string who_, option_;
  bool with_time_;
  octave_value_list args_;
  Matrix xo_;
  NDArray result_;
};

/// The problem of an ensemble: f, and g, G when given.
class OctaveEnsembleProblem {
 public:
  OctaveEnsembleProblem(const octave_value& f, const octave_value& g, const octave_value& G, int m, int d, int K,
                        const octave_value_list& extra, const std::string& who)
      : field_shape_(who == "odeVV" ? "matrix, one column [v; a] per state"
                                    : "matrix, one column [dH/dp; -dH/dq] per state"),
        f_(f, extra, who, "the ODE function F", true),
        g_(g, extra, who, "ConstraintFcn", false),
        G_(G, extra, who, "ConstraintGradFcn", false),
        problem_(d, K, [this, d](double t, const ensemble::ConstMatRef& X, MatRef DX) {
          const double* r = f_.call(t, X, 2 * d, field_shape_);
          DX = Eigen::Map<const Mat>(r, 2 * d, X.cols());
        }) {
    raise_heap_thresholds(heap_threshold_for(2 * static_cast<std::size_t>(d) * static_cast<std::size_t>(K)));
    if (m > 0) {
      ensemble::EnsembleProblem::ConstraintGrad grad;
      if (G.is_defined())
        grad = [this, m, d](const ensemble::ConstMatRef& Q, MatRef out) {
          const double* r = G_.call(0.0, Q, m * d, "m-by-d-by-k array", 1, nullptr, m);
          out = Eigen::Map<const Mat>(r, m, d * Q.cols());
        };
      problem_.set_constraints(
          m,
          [this, m](const ensemble::ConstMatRef& Q, MatRef out) {
            const double* r = g_.call(0.0, Q, m, "matrix, one column of ConstraintsNb values per state");
            out = Eigen::Map<const Mat>(r, m, Q.cols());
          },
          grad);
    }
  }
  OctaveEnsembleProblem(const OctaveEnsembleProblem&) = delete;
  OctaveEnsembleProblem& operator=(const OctaveEnsembleProblem&) = delete;

  ensemble::EnsembleProblem& problem() { return problem_; }

 private:
  const char* field_shape_;  // odeVV: [v; a], the others: [dH/dp; -dH/dq]
  BatchFunction f_, g_, G_;
  ensemble::EnsembleProblem problem_;
};

/// odeset's Events, vectorised: [value, isterminal, direction] = ev (t, Y),
/// value nev x k, isterminal and direction nev x 1 (the same for every member).
class OctaveEnsembleEvents {
 public:
  OctaveEnsembleEvents(const octave_value& fcn, const octave_value_list& extra, std::string who)
      : fn_(fcn, extra, who, "the Events function", true), who_(std::move(who)) {}

  /// The number of event components, from a call at the initial states.
  int probe(double t0, const Mat& X0) {
    const octave_value_list r = fn_.call_raw(t0, X0, 3);
    const octave_idx_type K = X0.cols();
    if (r.length() < 1 || !r(0).isnumeric() || !r(0).isreal() || r(0).isempty() || r(0).numel() % K != 0)
      error_with_id("odepkg:badFcnOutput",
                    "%s: in ensemble mode the Events function is called with the %ld states as columns and must "
                    "return a real nev-by-%ld matrix of event values",
                    who_.c_str(), static_cast<long>(K), static_cast<long>(K));
    nev_ = static_cast<int>(r(0).numel() / K);
    Vec term(nev_), dir(nev_);
    flags(r, term, dir);
    return nev_;
  }

  ensemble::EnsembleIntegrator::EventFn callback() {
    return [this](double t, const ensemble::ConstMatRef& X, MatRef value, VecRef term, VecRef dir) {
      octave_value_list r;
      const double* v = fn_.call(t, X, nev_, "matrix of event values, one column per state", 3, &r);
      value = Eigen::Map<const Mat>(v, nev_, X.cols());
      flags(r, term, dir);
    };
  }

 private:
  void flags(const octave_value_list& r, VecRef term, VecRef dir) const {
    if (r.length() < 3)
      error_with_id("odepkg:badFcnOutput", "%s: the Events function must return [value, isterminal, direction]",
                    who_.c_str());
    for (int i = 0; i < 2; ++i) {
      const octave_value& o = r(1 + i);
      if (!(o.isnumeric() || o.islogical()) || o.numel() < nev_)
        error_with_id("odepkg:badFcnOutput",
                      "%s: the Events function's %s must have one entry per event (%d)", who_.c_str(),
                      i == 0 ? "isterminal" : "direction", nev_);
      const NDArray a = o.array_value();
      for (int e = 0; e < nev_; ++e) (i == 0 ? term : dir)(e) = a(e);
    }
  }

  BatchFunction fn_;
  std::string who_;
  int nev_ = 0;
};

}  // namespace odepkg::binding

#endif
