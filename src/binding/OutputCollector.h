// OutputCollector.h — the Observer of the DEFUNs: stores the output points and
// calls the user's OutputFcn (ode45's convention: stop = fcn (t, y, [], ...)).
#ifndef ODEPKG_BINDING_OUTPUT_COLLECTOR_H
#define ODEPKG_BINDING_OUTPUT_COLLECTOR_H

#include "PagePrefault.hpp"
#include "loop/Integrator.hpp"
#include "OutputGuard.h"
#include "Settings.h"

#include <octave/oct.h>
#include <octave/parse.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace odepkg::binding {

class OutputCollector final : public Observer {
 public:
  /// `store` false: the output streams through the OutputFcn only (the
  /// caller asked for no output), and only the last point is kept (for the
  /// time reported by a failure): no memory limit applies.
  /// `exact`: `expected` is the number of points the run outputs (fixed
  /// steps, or output times), whose memory the caller checked: the states'
  /// storage is then reserved at the first point.
  /// `columns` (with `exact`): the states are wanted one per column
  /// (states_as_columns); they are then written straight into the storage
  /// that becomes the returned matrix, not copied into it at the end (at
  /// 2*10^4 numbers per state the copy, with the first touch of the
  /// matrix's pages, cost 0.15 ms per step).
  OutputCollector(const Settings& s, const octave_value_list& extra, std::size_t expected,
                  const char* who = "odepkg", bool store = true, bool exact = false, bool columns = false)
      : fcn_(s.output_fcn), sel_(s.output_sel), extra_(extra), who_(who), store_(store), exact_(exact),
        columns_(store && exact && columns), expected_(expected) {
    t_.reserve(store ? expected : 1);
  }
  ~OutputCollector() { release(); }
  OutputCollector(const OutputCollector&) = delete;
  OutputCollector& operator=(const OutputCollector&) = delete;

  bool operator()(double t, const Vec& x) override {
    n_ = x.size();
    if (!store_) {
      t_.assign(1, t);
      x_.assign(x.data(), x.data() + x.size());
      return call_output_fcn(t, x);
    }
    // The memory guard for runs whose point count is not known up front
    // (adaptive steps, SPVI node output): odepkg:outputTooLarge at the cap.
    if (t_.size() >= max_output_points(n_)) output_too_large(t_.size() + 1.0, n_, false, who_);
    if (columns_) {
      store_column(x);
    } else {
      if (x_.empty() && exact_) x_.reserve(t_.capacity() * x.size());  // no copies as it grows
      if (x_.size() + x.size() > x_.capacity()) {  // it moves: fresh pages again
        x_.reserve(std::max(2 * x_.capacity(), x_.size() + x.size()));
        prefault_.reset(x_.data(), x_.capacity() * sizeof(double), x_.size() * sizeof(double));
      } else if (x_.empty()) {
        prefault_.reset(x_.data(), x_.capacity() * sizeof(double));
      }
      prefault_.ensure((x_.size() + x.size()) * sizeof(double));
      x_.insert(x_.end(), x.data(), x.data() + x.size());
    }
    t_.push_back(t);
    return call_output_fcn(t, x);
  }

  /// ode45's fcn ([t0; tf], y0(sel), "init", extra...), called by the DEFUNs
  /// after every input check (validation before side effects: a plot
  /// window or a print must not precede an input error).
  void init(double t0, double tf, const Vec& x0) {
    if (fcn_.is_undefined()) return;
    ColumnVector tt(2);
    tt(0) = t0;
    tt(1) = tf;
    call_with(tt, selected(x0), "init");
  }
  /// fcn ([], [], "done", extra...) once the integration has ended.
  void done() {
    if (fcn_.is_undefined()) return;
    call_with(Matrix(), Matrix(), "done");
  }

  /// Times as a column, states as rows (ode45's [t, y]).
  octave_value times() const {
    ColumnVector t(t_.size());
    std::copy(t_.begin(), t_.end(), t.fortran_vec());
    return t;
  }
  /// States as columns (sol.y's layout): the stored points as they are.
  /// (With `columns`, once: the storage is handed over to the result.)
  octave_value states_as_columns() {
    const octave_idx_type k = static_cast<octave_idx_type>(t_.size());
    if (columns_ && cols_ && k == static_cast<octave_idx_type>(cols_capacity_)) {
      // The n-by-k block as it is: Array's constructor from a pointer takes
      // ownership (allocated by std::allocator<double>, as Array frees it).
      double* p = cols_;
      cols_ = nullptr;
      cols_capacity_ = 0;
      return Matrix(Array<double>(p, dim_vector(n_, k)));
    }
    Matrix y(n_, k);
    const double* src = columns_ ? cols_ : x_.data();
    prefault_all(y.fortran_vec(), static_cast<std::size_t>(n_) * k);
    if (k > 0) std::copy(src, src + static_cast<std::size_t>(n_) * k, y.fortran_vec());
    return y;
  }
  octave_value states() const {
    const octave_idx_type m = t_.size();
    const octave_idx_type n = n_;
    Matrix y(m, n);
    double* yp = y.fortran_vec();
    prefault_all(yp, static_cast<std::size_t>(m) * n);
    const double* src = columns_ ? cols_ : x_.data();
    // the transpose of the stored points (one per row of x_), in tiles so
    // that the strided writes stay in cache (a large state: 10x faster)
    constexpr octave_idx_type tile = 64;
    for (octave_idx_type i0 = 0; i0 < m; i0 += tile)
      for (octave_idx_type j0 = 0; j0 < n; j0 += tile) {
        const octave_idx_type i1 = std::min(m, i0 + tile), j1 = std::min(n, j0 + tile);
        for (octave_idx_type i = i0; i < i1; ++i)
          for (octave_idx_type j = j0; j < j1; ++j) yp[j * m + i] = src[i * n + j];
      }
    return y;
  }

 private:
  /// A fresh result matrix's pages mapped at once (PagePrefault.hpp).
  static void prefault_all(double* p, std::size_t count) {
    PagePrefault(p, count * sizeof(double)).ensure(count * sizeof(double));
  }
  /// Column t_.size() of the column store; its capacity is the expected
  /// count (exact for fixed steps and output times), doubled if exceeded.
  void store_column(const Vec& x) {
    const std::size_t k = t_.size(), n = static_cast<std::size_t>(x.size());
    if (k >= cols_capacity_) {
      const std::size_t cap = std::max<std::size_t>(std::max<std::size_t>(expected_, 1), 2 * cols_capacity_);
      double* p = std::allocator<double>().allocate(cap * n);
      if (cols_) std::copy(cols_, cols_ + k * n, p);
      release();
      cols_ = p;
      cols_capacity_ = cap;
      prefault_.reset(p, cap * n * sizeof(double), k * n * sizeof(double));
    }
    prefault_.ensure((k + 1) * n * sizeof(double));  // fresh pages a block at a time (PagePrefault.hpp)
    std::copy(x.data(), x.data() + n, cols_ + k * n);
  }
  void release() {
    if (cols_) std::allocator<double>().deallocate(cols_, cols_capacity_ * static_cast<std::size_t>(n_));
    cols_ = nullptr;
    cols_capacity_ = 0;
  }

  /// fcn (t, y(sel), [], extra...): false when it asks to stop.
  bool call_output_fcn(double t, const Vec& x) {
    if (fcn_.is_undefined()) return true;
    octave_value_list r = call_with(t, selected(x), Matrix(), 1);
    if (r.length() < 1 || r(0).isempty()) return true;
    const octave_value& v = r(0);
    // ode45's convention: a logical (or numeric) scalar, true to stop
    if (!(v.islogical() || v.isnumeric()) || v.iscomplex() || v.numel() != 1 ||
        (v.isnumeric() && std::isnan(v.double_value())))
      error_with_id("odepkg:badFcnOutput",
                    "%s: the OutputFcn must return a logical scalar (true to stop) or nothing, "
                    "but returned a %s %s", who_, v.dims().str().c_str(), v.class_name().c_str());
    return !v.is_true();
  }

  ColumnVector selected(const Vec& x) const {
    const octave_idx_type k = sel_.isempty() ? x.size() : sel_.numel();
    ColumnVector y(k);
    for (octave_idx_type i = 0; i < k; ++i) y(i) = x(sel_.isempty() ? i : sel_(i));
    return y;
  }

  octave_value_list call_with(const octave_value& t, const octave_value& y, const octave_value& flag,
                              int nout = 0) {
    octave_value_list args(3 + extra_.length());
    args(0) = t;
    args(1) = y;
    args(2) = flag;
    for (int i = 0; i < extra_.length(); ++i) args(3 + i) = extra_(i);
    return octave::feval(fcn_, args, nout);
  }

  octave_value fcn_;
  Array<octave_idx_type> sel_;
  octave_value_list extra_;
  std::vector<double> t_, x_;
  Eigen::Index n_ = 0;
  const char* who_;
  bool store_ = true;
  bool exact_ = false;
  bool columns_ = false;
  std::size_t expected_ = 0;
  double* cols_ = nullptr;  ///< the column store (columns_), n_ x cols_capacity_
  std::size_t cols_capacity_ = 0;
  PagePrefault prefault_;  ///< of the store being written (cols_ or x_)
};

}  // namespace odepkg::binding

#endif
