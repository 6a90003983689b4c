// EventCallback.h — odeset's "Events" function as the core's EventFn:
// [value, isterminal, direction] = events (t, y, extra...), each a real
// vector of the same length k (isterminal and direction may be scalars,
// applied to every component), checked on every call.
#ifndef ODEPKG_BINDING_EVENT_CALLBACK_H
#define ODEPKG_BINDING_EVENT_CALLBACK_H

#include "loop/EventLocator.hpp"

#include <octave/oct.h>
#include <octave/parse.h>

#include <string>
#include <vector>

namespace odepkg::binding {

class OctaveEvents {
 public:
  OctaveEvents(const octave_value& fcn, const octave_value_list& extra, std::string who)
      : fcn_(fcn), who_(std::move(who)) {
    args_.resize(2 + extra.length());
    for (int i = 0; i < extra.length(); ++i) args_(2 + i) = extra(i);
  }

  /// Number of event components, from one call at (t0, x0).  Its values
  /// serve the locator's first request at the same point: no second call.
  int probe(double t0, const Vec& x0) {
    call(t0, x0, -1);
    probe_t_ = t0;
    probe_x_ = x0;
    probe_pending_ = true;
    return k_;
  }

  /// Calls of the user's function so far (the probe included).
  long calls() const { return calls_; }

  EventLocator::EventFn callback() {
    return [this](double t, const ConstVecRef& x, VecRef value, VecRef term, VecRef dir) {
      const bool reuse = probe_pending_ && t == probe_t_ && x == probe_x_;
      probe_pending_ = false;
      if (!reuse) call(t, x, k_);
      value = value_;
      term = term_;
      dir = dir_;
    };
  }

  /// Outputs te (column), ye (rows), ie (column, one-based) of ode45.
  static void outputs(const std::vector<EventRecord>& ev, octave_value& te, octave_value& ye,
                      octave_value& ie, int n) {
    ColumnVector t(ev.size()), i(ev.size());
    Matrix y(ev.size(), n);
    for (std::size_t k = 0; k < ev.size(); ++k) {
      t(k) = ev[k].t;
      i(k) = ev[k].index + 1;
      for (int j = 0; j < n; ++j) y(k, j) = ev[k].x(j);
    }
    te = t;
    ye = y;
    ie = i;
  }

 private:
  void call(double t, const ConstVecRef& x, int k) {
    ColumnVector xo(x.size());
    std::copy(x.data(), x.data() + x.size(), xo.fortran_vec());
    args_(0) = t;
    args_(1) = xo;
    ++calls_;
    const octave_value_list r = octave::feval(fcn_, args_, 3);
    if (r.length() < 3)
      error_with_id("odepkg:badFcnOutput",
                    "%s: the Events function must return [value, isterminal, direction]", who_.c_str());
    value_ = vector(r(0), "value", k < 0 ? -1 : k);
    if (k < 0) k_ = value_.size();
    if (k_ < 1)
      error_with_id("odepkg:badFcnOutput", "%s: the Events function returned no event values", who_.c_str());
    term_ = vector(r(1), "isterminal", k_);
    dir_ = vector(r(2), "direction", k_);
    for (int i = 0; i < k_; ++i)
      if (dir_(i) != -1 && dir_(i) != 0 && dir_(i) != 1)
        error_with_id("odepkg:badFcnOutput", "%s: the Events function's direction must be -1, 0 or 1",
                      who_.c_str());
  }

  // A real vector of k elements (a scalar is repeated); k < 0: any length.
  Vec vector(const octave_value& v, const char* what, int k) const {
    if (!(v.isnumeric() || v.islogical()) || v.iscomplex() || v.isempty())
      error_with_id("odepkg:badFcnOutput", "%s: the Events function's %s must be a real vector",
                    who_.c_str(), what);
    const NDArray a = v.array_value();
    const bool is_value = std::string(what) == "value";
    if (k >= 0 && a.numel() != k && (is_value || a.numel() != 1))
      error_with_id("odepkg:badFcnOutput", "%s: the Events function's %s must have %d elements (got %ld)",
                    who_.c_str(), what, k, static_cast<long>(a.numel()));
    const int m = k < 0 ? a.numel() : k;
    Vec out(m);
    for (int i = 0; i < m; ++i) out(i) = a.numel() == 1 ? a(0) : a(i);
    if (!out.allFinite() && !is_value)
      error_with_id("odepkg:badFcnOutput", "%s: the Events function's %s must be finite", who_.c_str(), what);
    return out;
  }

  octave_value fcn_;
  std::string who_;
  octave_value_list args_;
  Vec value_, term_, dir_;
  int k_ = 0;
  long calls_ = 0;
  double probe_t_ = 0.0;
  Vec probe_x_;
  bool probe_pending_ = false;
};

}  // namespace odepkg::binding

#endif
