// NativeKernels.h — a model compiled by odepkg_model (a shared object of
// plain C functions, no Octave or Eigen header) loaded with dlopen, its
// kernels called by the core as the problem's callbacks: no interpreter
// between steps (as SciPy's LowLevelCallable, numbalsoda).
//
// C ABI 2 (written by inst/private/odepkg_model_derive.py; the signature a
// hand-written "CFile" or "Library" must export, doc/native-models.md):
//   int  odepkg_abi (void);                  2
//   void odepkg_dims (int* dims);            {d, m, number of parameters, nc}
//        nc: the constraint variables, d (g(q)) or 2d (g(q, p), y = [q; p])
//   int  odepkg_nnz (int which);             nonzeros of the pattern `which`:
//        0 the Hessian of H (2d x 2d), 1 G = dg/dy (m x nc), 2 the stacked
//        Hessians of g [H_1 ... H_m] (nc x nc m); -1: not given
//   void odepkg_pattern (int which, int* rows, int* cols);
//        its (row, column) pairs, 0-based, in column-major (CSC) order
//   void odepkg_H (double t, const double* x, const double* par, double* out);   out[0] = H
//   void odepkg_f (double t, const double* x, const double* par, double* out);
//        out = [H_p; -H_q] at x = [q; p] (2d)
//   void odepkg_hess (double t, const double* x, const double* par, double* val);
//        the Hessian's values on pattern 0
//   void odepkg_g (const double* y, const double* par, double* out);    m values
//   void odepkg_G (const double* y, const double* par, double* val);    pattern 1
//   void odepkg_GH (const double* y, const double* par, double* val);   pattern 2
// (g, G, GH only for m > 0, GH only where odepkg_nnz (2) >= 0.)
#ifndef ODEPKG_BINDING_NATIVE_KERNELS_H
#define ODEPKG_BINDING_NATIVE_KERNELS_H

#include "SparsePatternUnion.hpp"
#include "Types.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace odepkg::binding {

/// The loaded kernel files, kept open from call to call: a dlopen and
/// dlclose per solver call mapped and unmapped the file each time (about
/// half of the compiled side's fixed cost of a short run).  A file is
/// reused while its identity (device, inode, size, modification and change
/// times) is the one it was loaded with; a file replaced or rewritten at
/// the same path is loaded anew, after the old one is closed once no run
/// uses it (dlopen of a path still open would return the old code).  The
/// objects close when the oct-file is unloaded.
class KernelLibraries {
 public:
  /// An open shared object; closed with its last user.
  struct Library {
    explicit Library(void* h) : handle(h) {}
    ~Library() {
      if (handle) dlclose(handle);
    }
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    void* handle;
  };

  /// The library at `path`, loaded or reused; null with `error` set when
  /// dlopen fails.
  static std::shared_ptr<Library> open(const std::string& path, std::string& error) {
    Identity id;
    const bool known = identify(path, id);
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.entries.find(path);
    if (it != r.entries.end()) {
      if (known && it->second.id == id) return it->second.library;
      r.entries.erase(it);  // changed: closed once no run uses it
    }
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      error = e ? e : "dlopen failed";
      return nullptr;
    }
    auto lib = std::make_shared<Library>(h);
    if (known) r.entries[path] = Entry{id, lib};
    return lib;
  }

  /// Drop `path` from the cache (its kernels were refused).
  static void forget(const std::string& path) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.entries.erase(path);
  }

 private:
  struct Identity {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    long long mtime_s = 0, mtime_ns = 0, ctime_s = 0, ctime_ns = 0;
    bool operator==(const Identity& o) const {
      return dev == o.dev && ino == o.ino && size == o.size && mtime_s == o.mtime_s && mtime_ns == o.mtime_ns &&
             ctime_s == o.ctime_s && ctime_ns == o.ctime_ns;
    }
  };
  struct Entry {
    Identity id;
    std::shared_ptr<Library> library;
  };
  struct Registry {
    std::mutex mutex;
    std::map<std::string, Entry> entries;
  };
  static Registry& registry() {
    static Registry r;
    return r;
  }
  static bool identify(const std::string& path, Identity& id) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return false;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    id.size = st.st_size;
    id.mtime_s = st.st_mtim.tv_sec;
    id.mtime_ns = st.st_mtim.tv_nsec;
    id.ctime_s = st.st_ctim.tv_sec;
    id.ctime_ns = st.st_ctim.tv_nsec;
    return true;
  }
};

class NativeKernels {
 public:
  using FieldFn = void (*)(double, const double*, const double*, double*);
  using QFn = void (*)(const double*, const double*, double*);
  static constexpr int kAbi = 2;

  /// A fixed sparsity pattern read from the kernels, in CSC form.
  struct Pattern {
    int rows = 0, cols = 0;
    std::vector<int> outer, inner;  ///< column pointers (cols + 1), row indices (nnz)
    int nnz() const { return static_cast<int>(inner.size()); }
  };

  /// Loads `path`, checks its ABI and dimensions against the model's
  /// (d, m, parameter count): a stale or foreign file is an InputError
  /// "nativeModel", never a call that writes out of bounds.  d < 0: the
  /// dimensions are read, not checked (odepkg_model's "Library").
  NativeKernels(const std::string& path, int d, int m, std::vector<double> par)
      : path_(path), par_(std::move(par)) {
    std::string error;
    library_ = KernelLibraries::open(path, error);
    if (!library_) fail("cannot load the model's kernels: " + error);
    handle_ = library_->handle;
    auto abi = reinterpret_cast<int (*)()>(sym("odepkg_abi"));
    auto dims = reinterpret_cast<void (*)(int*)>(sym("odepkg_dims"));
    const int a = abi();
    if (a != kAbi)
      fail("the model's kernels " + path + " have ABI " + std::to_string(a) + ", not " + std::to_string(kAbi) +
           " (rebuild the model)");
    int k[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    dims(k);
    d_ = k[0];
    m_ = k[1];
    np_ = k[2];
    nc_ = k[3];
    if (d_ < 1 || m_ < 0 || np_ < 0 || (m_ > 0 && nc_ != d_ && nc_ != 2 * d_) || (m_ > 0 && m_ >= d_))
      fail("the model's kernels " + path + " give invalid dimensions (odepkg_dims: d = " + std::to_string(d_) +
           ", m = " + std::to_string(m_) + ", parameters " + std::to_string(np_) + ", nc = " + std::to_string(nc_) +
           ")");
    if (m_ == 0) nc_ = d_;
    if (d >= 0 && (d_ != d || m_ != m || np_ != static_cast<int>(par_.size())))
      fail("the model's kernels " + path + " do not match the model's dimensions (rebuild the model)");
    H_ = reinterpret_cast<FieldFn>(sym("odepkg_H"));
    f_ = reinterpret_cast<FieldFn>(sym("odepkg_f"));
    hess_ = reinterpret_cast<FieldFn>(sym("odepkg_hess"));
    nnz_ = reinterpret_cast<int (*)(int)>(sym("odepkg_nnz"));
    pattern_fn_ = reinterpret_cast<void (*)(int, int*, int*)>(sym("odepkg_pattern"));
    read_pattern(0, 2 * d_, 2 * d_, hess_pattern_, path);
    hess_values_.resize(hess_pattern_.nnz());
    if (m_ > 0) {
      g_ = reinterpret_cast<QFn>(sym("odepkg_g"));
      G_ = reinterpret_cast<QFn>(sym("odepkg_G"));
      read_pattern(1, m_, nc_, G_pattern_, path);
      G_values_.resize(G_pattern_.nnz());
      if (nnz_(2) >= 0 && static_cast<double>(nc_) * m_ < 2147483647.0) {
        // its pattern read on first use: its column pointers take nc m + 1
        // ints (800 MB for a chain of 10^4 links), which runs that never
        // need the constraint Hessians (explicit RATTLE) should not pay
        GH_ = reinterpret_cast<QFn>(sym("odepkg_GH"));
      }
    }
  }
  ~NativeKernels() = default;  // the library stays open for the next run (KernelLibraries)
  NativeKernels(const NativeKernels&) = delete;
  NativeKernels& operator=(const NativeKernels&) = delete;

  int dim() const { return d_; }
  int constraints() const { return m_; }
  /// The parameter values the member functions pass to the kernels (an
  /// ensemble sets each member's in turn: NativeModel.h).
  std::vector<double>& parameter_values() { return par_; }
  /// The kernel f itself, a pure C function of (t, x, par, out): callable
  /// from several threads at once with their own x, par and out.
  FieldFn field_kernel() const { return f_; }
  int parameters() const { return np_; }
  /// g = g(q, p): g, G and the Hessians take y = [q; p] (ConstraintVariables "qp").
  bool phase_space() const { return m_ > 0 && nc_ == 2 * d_; }
  /// The constraint variables' count: d, or 2d for g(q, p).
  int constraint_variables() const { return nc_; }
  bool has_constraint_hess() const { return GH_ != nullptr; }
  const Pattern& hessian_pattern() const { return hess_pattern_; }
  const Pattern& constraint_grad_pattern() const { return G_pattern_; }
  const Pattern& constraint_hess_pattern() {
    if (GH_ && GH_pattern_.outer.empty()) {
      read_pattern(2, nc_, nc_ * m_, GH_pattern_, path_);
      GH_values_.resize(GH_pattern_.nnz());
    }
    return GH_pattern_;
  }

  /// G kept sparse in the solvers (the binding's choice: "Sparse" of the model).
  bool sparse() const { return sparse_; }
  void set_sparse(bool s) { sparse_ = s; }
  /// odepkg_model's "Sparse" "auto": G has at most a tenth of its entries
  /// and at least 2500 of them (smaller dense matrices are faster).
  bool sparse_pays() const {
    const double entries = static_cast<double>(m_) * nc_;
    return m_ > 0 && entries >= 2500 && G_pattern_.nnz() <= 0.1 * entries;
  }

  double hamiltonian(double t, const ConstVecRef& x) const {
    double h = 0.0;
    H_(t, x.data(), par_.data(), &h);
    return h;
  }
  void field(double t, const ConstVecRef& x, VecRef out) const { f_(t, x.data(), par_.data(), out.data()); }
  /// The Hessian (2d x 2d) made dense: `out` may be a block of a larger matrix.
  void hessian(double t, const ConstVecRef& x, MatRef out) {
    hess_(t, x.data(), par_.data(), hess_values_.data());
    scatter(hess_pattern_, hess_values_, out);
  }
  /// The Hessian on its pattern (the structure set on the first call, the
  /// values only after).
  void hessian_sparse(double t, const ConstVecRef& x, SpMat& out) {
    shape(hess_pattern_, out);
    hess_(t, x.data(), par_.data(), out.valuePtr());
  }
  void constraint(const ConstVecRef& q, VecRef out) const { g_(q.data(), par_.data(), out.data()); }
  /// G (m x nc) into the core's column-major matrix.
  void constraint_grad(const ConstVecRef& q, MatRef out) {
    G_(q.data(), par_.data(), G_values_.data());
    scatter(G_pattern_, G_values_, out);
  }
  void constraint_grad_sparse(const ConstVecRef& q, SpMat& out) {
    shape(G_pattern_, out);
    G_(q.data(), par_.data(), out.valuePtr());
  }
  /// G as a view of the pattern and this object's values (read in place by
  /// the core: HamiltonianProblem::GradSink).
  template <class Sink>
  void constraint_grad_view(const ConstVecRef& q, Sink& sink) {
    G_(q.data(), par_.data(), G_values_.data());
    sink(CscView<int>{m_, nc_, G_pattern_.nnz(), G_pattern_.outer.data(), G_pattern_.inner.data(),
                      G_values_.data()});
  }
  /// The stacked Hessians [H_1 ... H_m] (nc x nc m), dense or sparse.
  void constraint_hess(const ConstVecRef& q, MatRef out) {
    constraint_hess_pattern();
    GH_(q.data(), par_.data(), GH_values_.data());
    scatter(GH_pattern_, GH_values_, out);
  }
  void constraint_hess_sparse(const ConstVecRef& q, SpMat& out) {
    shape(constraint_hess_pattern(), out);
    GH_(q.data(), par_.data(), out.valuePtr());
  }

 private:
  void* sym(const char* name) {
    void* p = dlsym(handle_, name);
    if (!p) fail(std::string("the model's kernels lack ") + name + " (rebuild the model)");
    return p;
  }
  [[noreturn]] void fail(const std::string& what) {
    handle_ = nullptr;
    library_.reset();
    KernelLibraries::forget(path_);
    throw InputError("nativeModel", what);
  }

  /// Pattern `which` (rows x cols), checked: indices in range, column-major
  /// order, no duplicates.
  void read_pattern(int which, int rows, int cols, Pattern& p, const std::string& path) {
    static const char* names[] = {"the Hessian of H", "G", "the Hessians of g"};
    const int n = nnz_(which);
    if (n < 0 || static_cast<double>(n) > static_cast<double>(rows) * cols)
      fail("the model's kernels " + path + ": odepkg_nnz gives " + std::to_string(n) + " nonzeros for " +
           names[which]);
    std::vector<int> r(n), c(n);
    if (n > 0) pattern_fn_(which, r.data(), c.data());
    p.rows = rows;
    p.cols = cols;
    p.outer.assign(static_cast<std::size_t>(cols) + 1, 0);
    p.inner = r;
    for (int k = 0; k < n; ++k) {
      const bool ordered = k == 0 || c[k] > c[k - 1] || (c[k] == c[k - 1] && r[k] > r[k - 1]);
      if (r[k] < 0 || r[k] >= rows || c[k] < 0 || c[k] >= cols || !ordered)
        fail("the model's kernels " + path + ": the pattern of " + names[which] +
             " (odepkg_pattern) must list distinct (row, column) pairs in range, in column-major order");
      ++p.outer[c[k] + 1];
    }
    for (int j = 0; j < cols; ++j) p.outer[j + 1] += p.outer[j];
  }

  static void scatter(const Pattern& p, const std::vector<double>& v, MatRef out) {
    out.setZero();
    for (int j = 0; j < p.cols; ++j)
      for (int k = p.outer[j]; k < p.outer[j + 1]; ++k) out(p.inner[k], j) = v[k];
  }

  /// `out` given the pattern's structure, unless it has it already.
  static void shape(const Pattern& p, SpMat& out) {
    if (out.isCompressed() && out.rows() == p.rows && out.cols() == p.cols && out.nonZeros() == p.nnz() &&
        std::equal(p.outer.begin(), p.outer.end(), out.outerIndexPtr()) &&
        std::equal(p.inner.begin(), p.inner.end(), out.innerIndexPtr()))
      return;
    out.resize(p.rows, p.cols);
    out.resizeNonZeros(p.nnz());
    std::copy(p.outer.begin(), p.outer.end(), out.outerIndexPtr());
    std::copy(p.inner.begin(), p.inner.end(), out.innerIndexPtr());
  }

  std::string path_;
  std::shared_ptr<KernelLibraries::Library> library_;
  void* handle_ = nullptr;
  int d_ = 0, m_ = 0, np_ = 0, nc_ = 0;
  bool sparse_ = false;
  std::vector<double> par_;
  FieldFn H_ = nullptr, f_ = nullptr, hess_ = nullptr;
  QFn g_ = nullptr, G_ = nullptr, GH_ = nullptr;
  int (*nnz_)(int) = nullptr;
  void (*pattern_fn_)(int, int*, int*) = nullptr;
  Pattern hess_pattern_, G_pattern_, GH_pattern_;
  std::vector<double> hess_values_, G_values_, GH_values_;
};

}  // namespace odepkg::binding

#endif
