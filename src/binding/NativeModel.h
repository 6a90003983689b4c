// NativeModel.h — a model of odepkg_model (a scalar struct with the field
// odepkg_model) read from its Octave struct and its compiled kernels
// (NativeKernels.h) made the callbacks of a single run or of an ensemble:
// no interpreter between steps.
//
// odeVV with a model: its state is [q; v], v = dq/dt, and its f returns
// [v; a].  A model whose kinetic energy is quadratic, T = p' M^-1 p / 2
// (H separable, H_pp = M^-1 constant: the model's flag quadratic_kinetic),
// gives v = M^-1 p and a = dv/dt = M^-1 dp/dt = H_pp (-H_q(q)): VelocityMap.
#ifndef ODEPKG_BINDING_NATIVE_MODEL_H
#define ODEPKG_BINDING_NATIVE_MODEL_H

#include "EigenConfig.hpp"
#include "NativeKernels.h"
#include "ensemble/EnsembleProblem.hpp"
#include "ensemble/MemberThreads.hpp"

#include <octave/oct.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace odepkg::binding {

/// A model of odepkg_model: a scalar struct with the field odepkg_model.
inline bool is_native_model(const octave_value& v) {
  return v.isstruct() && v.numel() == 1 && v.scalar_map_value().isfield("odepkg_model");
}

/// What the driver put in the model's struct: the kernels' file, d, m and
/// the parameter values par (np-by-K: one column per member, K = 1 for a
/// single run).
struct NativeModelFields {
  std::string file;
  int d = 0, m = 0;
  Mat par;
};

inline NativeModelFields read_native_model(const octave_value& model, const char* who) {
  const octave_scalar_map mm = model.scalar_map_value();
  for (const char* f : {"file", "d", "m", "par"})
    if (!mm.isfield(f))
      error_with_id("odepkg:invalidInput", "%s: the model lacks the field \"%s\" (build it with odepkg_model)", who,
                    f);
  if (!mm.getfield("file").is_string())
    error_with_id("odepkg:invalidInput", "%s: the model's field \"file\" must be a file name", who);
  NativeModelFields r;
  r.file = mm.getfield("file").string_value();
  r.d = mm.getfield("d").int_value();
  r.m = mm.getfield("m").int_value();
  const Matrix par = mm.getfield("par").matrix_value();
  r.par.resize(par.rows(), std::max<octave_idx_type>(1, par.columns()));
  r.par.setZero();
  for (octave_idx_type j = 0; j < par.columns(); ++j)
    for (octave_idx_type i = 0; i < par.rows(); ++i) r.par(i, j) = par(i, j);
  return r;
}

/// The kernels of the model, loaded with the parameters of member `member`.
inline std::unique_ptr<NativeKernels> load_kernels(const NativeModelFields& f, int member = 0) {
  const double* p = f.par.col(member).data();
  return std::make_unique<NativeKernels>(f.file, f.d, f.m, std::vector<double>(p, p + f.par.rows()));
}

/// odeVV's f = [v; a] from the kernels' [H_p; -H_q] at [q; v] (the p half
/// is not read by -H_q: H is separable): a = H_pp (-H_q), H_pp = M^-1
/// taken once from the Hessian (constant: any point serves).
class VelocityMap {
 public:
  /// H_pp of the kernels (with their current parameters) at (t, x).
  void learn(NativeKernels& k, double t, const ConstVecRef& x) {
    const int d = k.dim();
    Mat hess(2 * d, 2 * d);
    k.hessian(t, x, hess);
    hpp_ = hess.bottomRightCorner(d, d);
    identity_ = hpp_ == Mat::Identity(d, d);
  }
  bool identity() const { return identity_; }
  bool operator==(const VelocityMap& o) const { return identity_ == o.identity_ && hpp_ == o.hpp_; }

  /// out = kernel f at x = [q; v] on entry, [v; a] on return.
  void apply(int d, const double* x, double* out) const {
    if (!identity_) {
      for (int i = 0; i < d; ++i) out[i] = out[d + i];  // -H_q; out's head as scratch
      const double* h = hpp_.data();
      for (int i = 0; i < d; ++i) {
        double a = 0.0;
        for (int j = 0; j < d; ++j) a += h[j * d + i] * out[j];
        out[d + i] = a;
      }
    }
    for (int i = 0; i < d; ++i) out[i] = x[d + i];
  }

 private:
  Mat hpp_;
  bool identity_ = true;
};

/// The number of threads of a native ensemble: option "Threads" (a
/// positive integer), or by default MemberThreads::default_threads.
inline int ensemble_threads(const octave_value& options, int K, const char* who) {
  if (options.isstruct() && options.numel() == 1 && options.scalar_map_value().isfield("Threads")) {
    const octave_value v = options.scalar_map_value().getfield("Threads");
    if (!v.isempty()) {
      if (!v.is_real_scalar() || !(v.double_value() >= 1) || v.double_value() != std::floor(v.double_value()) ||
          v.double_value() > 1024)
        error_with_id("odepkg:invalidOption", "%s: option \"Threads\" must be a positive integer (at most 1024)",
                      who);
      return static_cast<int>(v.double_value());
    }
  }
  return ensemble::MemberThreads::default_threads(K);
}

/// The callbacks of an ensemble of a model over K members, member j with
/// the parameters par(:, j): f over the members split across threads (the
/// kernel is a pure C function of (t, x, par, out)), g and G member by
/// member on the calling thread.  odeVV: f = [v; a] per member.
class NativeEnsemble {
 public:
  NativeEnsemble(const NativeModelFields& fields, bool velocity, double t0, const Mat& X0, int threads)
      : kernels_(load_kernels(fields)), par_(fields.par), d_(fields.d), K_(static_cast<int>(X0.cols())),
        threads_(threads) {
    if (par_.cols() != K_)
      throw InputError("invalidInput", "the model's parameters must have one column per member");
    if (velocity) {
      maps_.resize(1);
      for (int j = 0; j < K_; ++j) {
        use_member(j);
        VelocityMap map;
        map.learn(*kernels_, t0, X0.col(j));
        if (j == 0)
          maps_[0] = map;
        else if (maps_.size() > 1 || !(map == maps_[0])) {
          if (maps_.size() == 1) maps_.assign(K_, maps_[0]);
          maps_[j] = map;
        }
      }
    }
  }

  int threads() const { return threads_.threads(); }

  /// f of member j alone (EnsembleProblem::set_member_field): the kernel
  /// with member j's parameters, and odeVV's map.
  void attach_member_field(ensemble::EnsembleProblem& pb) { pb.set_member_field(&member_field, this, &threads_); }

  ensemble::EnsembleProblem::Field field() {
    return [this](double t, const ensemble::ConstMatRef& X, MatRef DX) { evaluate(t, X, DX); };
  }
  ensemble::EnsembleProblem::Constraint constraint() {
    return [this](const ensemble::ConstMatRef& Q, MatRef g) {
      for (Eigen::Index j = 0; j < Q.cols(); ++j) {
        use_member(static_cast<int>(j));
        kernels_->constraint(Q.col(j), g.col(j));
      }
    };
  }
  ensemble::EnsembleProblem::ConstraintGrad constraint_grad() {
    return [this](const ensemble::ConstMatRef& Q, MatRef G) {
      for (Eigen::Index j = 0; j < Q.cols(); ++j) {
        use_member(static_cast<int>(j));
        kernels_->constraint_grad(Q.col(j), G.middleCols(j * d_, d_));
      }
    };
  }

 private:
  /// The kernels' own parameters (their member functions' calls) set to member j's.
  void use_member(int j) {
    std::vector<double>& p = kernels_->parameter_values();
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = par_(static_cast<Eigen::Index>(i), j);
  }

  static void member_field(const void* context, double t, int j, const double* x, double* out) {
    const NativeEnsemble& e = *static_cast<const NativeEnsemble*>(context);
    e.kernels_->field_kernel()(t, x, e.par_.data() + static_cast<Eigen::Index>(j) * e.par_.rows(), out);
    if (!e.maps_.empty()) e.maps_[e.maps_.size() > 1 ? j : 0].apply(e.d_, x, out);
  }

  /// DX = f(t, X) for all K members (the core's subset calls pass all K,
  /// EnsembleProblem::field).
  void evaluate(double t, const ensemble::ConstMatRef& X, MatRef DX) {
    if (X.cols() != K_) throw EigenAssertion("NativeEnsemble: a call on fewer than K members");
    const NativeKernels::FieldFn f = kernels_->field_kernel();
    const double* x = X.data();
    double* out = DX.data();
    const Eigen::Index sx = X.outerStride(), so = DX.outerStride();
    const double* par = par_.data();
    const Eigen::Index np = par_.rows();
    const int d = d_;
    const VelocityMap* maps = maps_.empty() ? nullptr : maps_.data();
    const bool per_member_map = maps_.size() > 1;
    auto body = [=](int begin, int end) {
      for (int j = begin; j < end; ++j) {
        f(t, x + j * sx, par + j * np, out + j * so);
        if (maps) maps[per_member_map ? j : 0].apply(d, x + j * sx, out + j * so);
      }
    };
    threads_.for_members(K_, body);
  }

  std::unique_ptr<NativeKernels> kernels_;
  Mat par_;  ///< np x K (np = 0: a column of nothing per member)
  int d_, K_;
  std::vector<VelocityMap> maps_;  ///< odeVV: one (all members alike) or K
  ensemble::MemberThreads threads_;
};

}  // namespace odepkg::binding

#endif
