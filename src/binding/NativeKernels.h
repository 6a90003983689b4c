// NativeKernels.h — a model compiled by odepkg_model (a shared object of
// plain C functions, no Octave or Eigen header) loaded with dlopen, its
// kernels called by the core as the problem's callbacks: no interpreter
// between steps (as SciPy's LowLevelCallable, numbalsoda).
//
// C ABI 1 (written by inst/private/odepkg_model_codegen.m):
//   int  odepkg_abi (void);                  1
//   void odepkg_dims (int* dims);            {d, m, number of parameters}
//   void odepkg_f (double t, const double* x, const double* par, double* out);
//        out = [H_p; -H_q] at x = [q; p] (2d)
//   void odepkg_hess (double t, const double* x, const double* par, double* out);
//        the 2d-by-2d Hessian of H in (q, p) order (symmetric)
//   void odepkg_g (const double* q, const double* par, double* out);   m values
//   void odepkg_G (const double* q, const double* par, double* out);   m-by-d, row-major
#ifndef ODEPKG_BINDING_NATIVE_KERNELS_H
#define ODEPKG_BINDING_NATIVE_KERNELS_H

#include "Types.hpp"

#include <dlfcn.h>

#include <string>
#include <vector>

namespace odepkg::binding {

class NativeKernels {
 public:
  using FieldFn = void (*)(double, const double*, const double*, double*);
  using QFn = void (*)(const double*, const double*, double*);

  /// Loads `path`, checks its ABI and dimensions against the model's
  /// (d, m, parameter count): a stale or foreign file is an InputError
  /// "nativeModel", never a call that writes out of bounds.
  NativeKernels(const std::string& path, int d, int m, std::vector<double> par)
      : d_(d), m_(m), par_(std::move(par)) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) fail(std::string("cannot load the model's kernels: ") + dlerror());
    auto abi = reinterpret_cast<int (*)()>(sym("odepkg_abi"));
    auto dims = reinterpret_cast<void (*)(int*)>(sym("odepkg_dims"));
    if (abi() != 1) fail("the model's kernels " + path + " have another ABI (rebuild the model)");
    int k[3] = {-1, -1, -1};
    dims(k);
    if (k[0] != d || k[1] != m || k[2] != static_cast<int>(par_.size()))
      fail("the model's kernels " + path + " do not match the model's dimensions (rebuild the model)");
    f_ = reinterpret_cast<FieldFn>(sym("odepkg_f"));
    hess_ = reinterpret_cast<FieldFn>(sym("odepkg_hess"));
    buffer_.resize(4 * static_cast<std::size_t>(d) * d);
    if (m > 0) {
      g_ = reinterpret_cast<QFn>(sym("odepkg_g"));
      G_ = reinterpret_cast<QFn>(sym("odepkg_G"));
      G_row_major_.resize(static_cast<std::size_t>(m) * d);
    }
  }
  ~NativeKernels() {
    if (handle_) dlclose(handle_);
  }
  NativeKernels(const NativeKernels&) = delete;
  NativeKernels& operator=(const NativeKernels&) = delete;

  int dim() const { return d_; }
  int constraints() const { return m_; }
  /// The parameter values the member functions pass to the kernels (an
  /// ensemble sets each member's in turn: NativeModel.h).
  std::vector<double>& parameters() { return par_; }
  /// The kernel f itself, a pure C function of (t, x, par, out): callable
  /// from several threads at once with their own x, par and out.
  FieldFn field_kernel() const { return f_; }

  void field(double t, const ConstVecRef& x, VecRef out) const { f_(t, x.data(), par_.data(), out.data()); }
  /// The Hessian (symmetric: row- and column-major alike), through a
  /// buffer: `out` may be a block of a larger matrix.
  void hessian(double t, const ConstVecRef& x, MatRef out) {
    hess_(t, x.data(), par_.data(), buffer_.data());
    out = Eigen::Map<const Mat>(buffer_.data(), 2 * d_, 2 * d_);
  }
  void constraint(const ConstVecRef& q, VecRef out) const { g_(q.data(), par_.data(), out.data()); }
  /// G (m x d) into the core's column-major matrix.
  void constraint_grad(const ConstVecRef& q, MatRef out) {
    G_(q.data(), par_.data(), G_row_major_.data());
    for (int i = 0; i < m_; ++i)
      for (int j = 0; j < d_; ++j) out(i, j) = G_row_major_[static_cast<std::size_t>(i) * d_ + j];
  }

 private:
  void* sym(const char* name) {
    void* p = dlsym(handle_, name);
    if (!p) fail(std::string("the model's kernels lack ") + name + " (rebuild the model)");
    return p;
  }
  [[noreturn]] void fail(const std::string& what) {
    if (handle_) dlclose(handle_);
    handle_ = nullptr;
    throw InputError("nativeModel", what);
  }

  void* handle_ = nullptr;
  int d_, m_;
  std::vector<double> par_;
  FieldFn f_ = nullptr, hess_ = nullptr;
  QFn g_ = nullptr, G_ = nullptr;
  std::vector<double> G_row_major_, buffer_;
};

}  // namespace odepkg::binding

#endif
