// OutputCollector.h — the Observer of the DEFUNs: stores the output points and
// calls the user's OutputFcn (ode45's convention: stop = fcn (t, y, [], ...)).
#ifndef ODEPKG_BINDING_OUTPUT_COLLECTOR_H
#define ODEPKG_BINDING_OUTPUT_COLLECTOR_H

#include "Integrator.hpp"
#include "Settings.h"

#include <octave/oct.h>
#include <octave/parse.h>

#include <vector>

namespace odepkg::binding {

class OutputCollector final : public Observer {
 public:
  OutputCollector(const Settings& s, const octave_value_list& extra, std::size_t expected)
      : fcn_(s.output_fcn), sel_(s.output_sel), extra_(extra) {
    t_.reserve(expected);
  }

  bool operator()(double t, const Vec& x) override {
    n_ = x.size();
    t_.push_back(t);
    x_.insert(x_.end(), x.data(), x.data() + x.size());
    if (fcn_.is_undefined()) return true;
    const octave_idx_type k = sel_.isempty() ? x.size() : sel_.numel();
    ColumnVector y(k);
    for (octave_idx_type i = 0; i < k; ++i) y(i) = x(sel_.isempty() ? i : sel_(i));
    octave_value_list args(3 + extra_.length());
    args(0) = t;
    args(1) = y;
    args(2) = Matrix();
    for (int i = 0; i < extra_.length(); ++i) args(3 + i) = extra_(i);
    octave_value_list r = octave::feval(fcn_, args, 1);
    const bool stop = r.length() > 0 && !r(0).isempty() && r(0).is_true();
    return !stop;
  }

  /// Times as a column, states as rows (ode45's [t, y]).
  octave_value times() const {
    ColumnVector t(t_.size());
    std::copy(t_.begin(), t_.end(), t.fortran_vec());
    return t;
  }
  octave_value states() const {
    const octave_idx_type m = t_.size();
    Matrix y(m, n_);
    for (octave_idx_type i = 0; i < m; ++i)
      for (octave_idx_type j = 0; j < n_; ++j) y(i, j) = x_[i * n_ + j];
    return y;
  }

 private:
  octave_value fcn_;
  Array<octave_idx_type> sel_;
  octave_value_list extra_;
  std::vector<double> t_, x_;
  Eigen::Index n_ = 0;
};

}  // namespace odepkg::binding

#endif
