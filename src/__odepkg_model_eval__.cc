// __odepkg_model_eval__ — one kernel of a native model (odepkg_model)
// evaluated from Octave: the drivers' handles for what runs outside the
// compiled loop (deval's projection, HamiltonianFcn monitoring), and tests.
#include "EigenConfig.hpp"
#include "binding/Conversions.h"
#include "binding/ErrorGuard.h"
#include "binding/NativeKernels.h"

#include <octave/oct.h>

#include <string>
#include <vector>

// In the package's one oct-file (src/Makefile):
// PKG_ADD: autoload ("__odepkg_model_eval__", "__odepkg_integrate__.oct");
// PKG_DEL: autoload ("__odepkg_model_eval__", "__odepkg_integrate__.oct", "remove");

using namespace odepkg;
using namespace odepkg::binding;

static octave_value
to_octave (const Mat& out)
{
  Matrix r (out.rows (), out.cols ());
  std::copy (out.data (), out.data () + out.size (), r.fortran_vec ());
  return r;
}

static octave_value
to_octave (const SpMat& a)
{
  SparseMatrix r (a.rows (), a.cols (), a.nonZeros ());
  for (Eigen::Index j = 0; j <= a.cols (); ++j)
    r.xcidx (j) = a.outerIndexPtr ()[j];
  for (Eigen::Index k = 0; k < a.nonZeros (); ++k)
    {
      r.xridx (k) = a.innerIndexPtr ()[k];
      r.xdata (k) = a.valuePtr ()[k];
    }
  return r;
}

// X for g and its derivatives: q (or y = [q; p] for g(q, p)), of any length
static Vec q_vector (const octave_value& v)
{
  if (! v.isnumeric () || ! v.isreal () || v.isempty () || (v.rows () != 1 && v.columns () != 1))
    error_with_id ("odepkg:invalidInput", "__odepkg_model_eval__: X must be a real vector");
  const NDArray a = v.array_value ();
  Vec x (a.numel ());
  for (octave_idx_type i = 0; i < a.numel (); ++i)
    x(i) = a(i);
  return x;
}

DEFUN_DLD (__odepkg_model_eval__, args, ,
           "-*- texinfo -*-\n\
@deftypefn {} {@var{v} =} __odepkg_model_eval__ (@var{model}, @var{what}, @var{t}, @var{x}, @var{par})\n\
Internal: the kernel @var{what} of the native @var{model} at (@var{t}, @var{x})\n\
with parameter values @var{par}: @qcode{\"H\"}, @qcode{\"f\"} ([H_p; -H_q],\n\
x = [q; p]), @qcode{\"hess\"} (2d-by-2d), @qcode{\"g\"} (m-by-1), @qcode{\"G\"}\n\
(m-by-nc) or @qcode{\"GH\"} (the Hessians of g stacked, nc-by-nc*m), x = q\n\
(nc = d) or [q; p] (g(q, p), nc = 2d); @qcode{\"hess_sparse\"},\n\
@qcode{\"G_sparse\"}, @qcode{\"GH_sparse\"}: the same on the kernels' patterns\n\
as sparse matrices.  @qcode{\"info\"}: a struct with the kernels' abi, dims\n\
[d, m, parameters, nc] and nnz [Hessian, G, GH] (only @var{model}.file read).\n\
@end deftypefn")
{
  return guarded ("__odepkg_model_eval__", [&] () -> octave_value_list {
    if (args.length () != 5 || ! args(0).isstruct () || ! args(1).is_string ())
      print_usage ();
    const octave_scalar_map m = args(0).scalar_map_value ();
    const std::string what = args(1).string_value ();
    if (! m.isfield ("file") || ! m.getfield ("file").is_string ())
      error_with_id ("odepkg:invalidInput", "__odepkg_model_eval__: MODEL must have a field \"file\"");
    if (what == "info")
      {
        NativeKernels k (m.getfield ("file").string_value (), -1, -1, {});
        const int nc = k.constraints () > 0 ? k.constraint_variables () : k.dim ();
        RowVector dims (4), nnz (3);
        dims(0) = k.dim (); dims(1) = k.constraints (); dims(2) = k.parameters (); dims(3) = nc;
        nnz(0) = k.hessian_pattern ().nnz ();
        nnz(1) = k.constraints () > 0 ? k.constraint_grad_pattern ().nnz () : 0;
        nnz(2) = k.has_constraint_hess () ? k.constraint_hess_pattern ().nnz () : -1;
        octave_scalar_map r;
        r.assign ("abi", NativeKernels::kAbi);
        r.assign ("dims", dims);
        r.assign ("nnz", nnz);
        return ovl (r);
      }
    const int d = m.getfield ("d").int_value ();
    const int nc = m.getfield ("m").int_value ();
    const NDArray pa = args(4).array_value ();
    NativeKernels k (m.getfield ("file").string_value (), d, nc, std::vector<double> (pa.data (), pa.data () + pa.numel ()));
    const double t = args(2).double_value ();
    const bool on_q = what == "g" || what == "G" || what == "GH" || what == "G_sparse" || what == "GH_sparse";
    // g and its derivatives take q (of any length d), the rest [q; p]
    const Vec x = on_q ? q_vector (args(3)) : state_vector (args(3), "__odepkg_model_eval__", "X");
    const int nx = on_q ? k.constraint_variables () : 2 * d;
    if (x.size () != nx)
      error_with_id ("odepkg:invalidInput", "__odepkg_model_eval__: X must have %d elements", nx);
    if (on_q && nc == 0)
      error_with_id ("odepkg:invalidInput", "__odepkg_model_eval__: the model has no constraints");
    if ((what == "GH" || what == "GH_sparse") && ! k.has_constraint_hess ())
      error_with_id ("odepkg:invalidInput", "__odepkg_model_eval__: the model's kernels have no constraint Hessians");
    if (what == "H")
      return ovl (k.hamiltonian (t, x));
    if (what == "f")
      {
        Vec out (2 * d);
        k.field (t, x, out);
        return ovl (to_column (out));
      }
    if (what == "g")
      {
        Vec g (nc);
        k.constraint (x, g);
        return ovl (to_column (g));
      }
    Mat out;
    SpMat sp;
    if (what == "hess")
      {
        out.resize (2 * d, 2 * d);
        k.hessian (t, x, out);
      }
    else if (what == "G")
      {
        out.resize (nc, nx);
        k.constraint_grad (x, out);
      }
    else if (what == "GH")
      {
        out.resize (nx, nx * nc);
        k.constraint_hess (x, out);
      }
    else if (what == "hess_sparse")
      {
        k.hessian_sparse (t, x, sp);
        return ovl (to_octave (sp));
      }
    else if (what == "G_sparse")
      {
        k.constraint_grad_sparse (x, sp);
        return ovl (to_octave (sp));
      }
    else if (what == "GH_sparse")
      {
        k.constraint_hess_sparse (x, sp);
        return ovl (to_octave (sp));
      }
    else
      error_with_id ("odepkg:invalidInput", "__odepkg_model_eval__: unknown kernel \"%s\"", what.c_str ());
    return ovl (to_octave (out));
  });
}
