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

DEFUN_DLD (__odepkg_model_eval__, args, ,
           "-*- texinfo -*-\n\
@deftypefn {} {@var{v} =} __odepkg_model_eval__ (@var{model}, @var{what}, @var{t}, @var{x}, @var{par})\n\
Internal: the kernel @var{what} of the native @var{model} at (@var{t}, @var{x})\n\
with parameter values @var{par}: @qcode{\"f\"} ([H_p; -H_q], x = [q; p]),\n\
@qcode{\"hess\"} (2d-by-2d), @qcode{\"g\"} (m-by-1, x = q) or @qcode{\"G\"}\n\
(m-by-d, x = q).\n\
@end deftypefn")
{
  return guarded ("__odepkg_model_eval__", [&] () -> octave_value_list {
    if (args.length () != 5 || ! args(0).isstruct () || ! args(1).is_string ())
      print_usage ();
    const octave_scalar_map m = args(0).scalar_map_value ();
    const int d = m.getfield ("d").int_value ();
    const int nc = m.getfield ("m").int_value ();
    const NDArray pa = args(4).array_value ();
    NativeKernels k (m.getfield ("file").string_value (), d, nc, std::vector<double> (pa.data (), pa.data () + pa.numel ()));
    const std::string what = args(1).string_value ();
    const double t = args(2).double_value ();
    const Vec x = state_vector (args(3), "__odepkg_model_eval__", "X");
    const bool on_q = what == "g" || what == "G";
    if (x.size () != (on_q ? d : 2 * d))
      error_with_id ("odepkg:invalidInput", "__odepkg_model_eval__: X must have %d elements", on_q ? d : 2 * d);
    if (on_q && nc == 0)
      error_with_id ("odepkg:invalidInput", "__odepkg_model_eval__: the model has no constraints");
    if (what == "f")
      {
        Vec out (2 * d);
        k.field (t, x, out);
        return ovl (to_column (out));
      }
    Mat out;
    if (what == "hess")
      {
        out.resize (2 * d, 2 * d);
        k.hessian (t, x, out);
      }
    else if (what == "g")
      {
        Vec g (nc);
        k.constraint (x, g);
        return ovl (to_column (g));
      }
    else if (what == "G")
      {
        out.resize (nc, d);
        k.constraint_grad (x, out);
      }
    else
      error_with_id ("odepkg:invalidInput", "__odepkg_model_eval__: unknown kernel \"%s\"", what.c_str ());
    Matrix r (out.rows (), out.cols ());
    std::copy (out.data (), out.data () + out.size (), r.fortran_vec ());
    return ovl (r);
  });
}
