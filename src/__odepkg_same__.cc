// __odepkg_same__ — whether two values are the same input, for the
// drivers' memos of work that depends on the options only (isequal, an
// m-file, costs 120 us on a two-field struct; this a few us on a full
// options struct).
#include <octave/oct.h>
#include <octave/ov-struct.h>

#include <cstring>

// In the package's one oct-file (src/Makefile):
// PKG_ADD: autoload ("__odepkg_same__", "__odepkg_integrate__.oct");
// PKG_DEL: autoload ("__odepkg_same__", "__odepkg_integrate__.oct", "remove");

// Equal content: char, logical and real double full arrays of the same
// class, size and bits; cells and structs (same field names in the same
// order) element by element.  Anything else (function handles, objects,
// integer, single, complex or sparse arrays) only when it is the very same
// value (one shared representation: unchanged since, by copy-on-write).  A
// false "not the same" costs the caller its work, never a wrong result.
static bool
same (const octave_value& a, const octave_value& b)
{
  if (&a.get_rep () == &b.get_rep ())
    return true;
  if (a.class_name () != b.class_name () || a.dims () != b.dims ())
    return false;
  if (a.issparse () || b.issparse () || a.iscomplex () || b.iscomplex ())
    return false;
  if (a.is_string () && b.is_string ())
    {
      const charNDArray x = a.char_array_value (), y = b.char_array_value ();
      return x.numel () == y.numel ()
             && std::memcmp (x.data (), y.data (), x.numel () * sizeof (char)) == 0;
    }
  if (a.islogical () && b.islogical ())
    {
      const boolNDArray x = a.bool_array_value (), y = b.bool_array_value ();
      return std::memcmp (x.data (), y.data (), x.numel () * sizeof (bool)) == 0;
    }
  if (a.is_double_type () && b.is_double_type () && a.isreal () && b.isreal ())
    {
      const NDArray x = a.array_value (), y = b.array_value ();
      return std::memcmp (x.data (), y.data (), x.numel () * sizeof (double)) == 0;
    }
  if (a.iscell () && b.iscell ())
    {
      const Cell x = a.cell_value (), y = b.cell_value ();
      for (octave_idx_type i = 0; i < x.numel (); ++i)
        if (! same (x(i), y(i)))
          return false;
      return true;
    }
  if (a.isstruct () && b.isstruct ())
    {
      const octave_map x = a.map_value (), y = b.map_value ();
      const string_vector kx = x.keys (), ky = y.keys ();
      if (kx.numel () != ky.numel ())
        return false;
      for (octave_idx_type k = 0; k < kx.numel (); ++k)
        {
          if (kx(k) != ky(k))
            return false;
          const Cell cx = x.contents (kx(k)), cy = y.contents (ky(k));
          for (octave_idx_type i = 0; i < cx.numel (); ++i)
            if (! same (cx(i), cy(i)))
              return false;
        }
      return true;
    }
  return false;
}

DEFUN_DLD (__odepkg_same__, args, ,
           "-*- texinfo -*-\n\
@deftypefn {} {@var{tf} =} __odepkg_same__ (@var{a}, @var{b})\n\
Internal: true when @var{a} and @var{b} are the same input: char, logical and\n\
real double arrays of equal class, size and bits, cells and structs of such\n\
values (the same field names in the same order); other values (function\n\
handles among them) only when they are one value, unchanged.  For memos of\n\
work that depends on the options alone.\n\
@end deftypefn")
{
  if (args.length () != 2)
    print_usage ();
  return ovl (same (args(0), args(1)));
}

/*
%!test
%! o = struct ("RelTol", 1e-3, "Name", "x", "F", @sin, "C", {{1, "a"}}, "E", []);
%! assert (__odepkg_same__ (o, o));
%! p = o;  p.RelTol = 1e-3;
%! assert (__odepkg_same__ (o, p));            # equal content, another value
%! p.RelTol = 2e-3;
%! assert (! __odepkg_same__ (o, p));
%! p = o;  p.F = @sin;                         # another handle: not the same
%! assert (! __odepkg_same__ (o, p));
%! p = o;  p.C{2} = "b";
%! assert (! __odepkg_same__ (o, p));
%! p = o;  p.E = zeros (0, 1);                 # another size of empty
%! assert (! __odepkg_same__ (o, p));
%! assert (! __odepkg_same__ (1, single (1)));
%! assert (__odepkg_same__ ("on", 'on'));
%! assert (! __odepkg_same__ (true, 1));
%! assert (! __odepkg_same__ (struct ("a", 1, "b", 2), struct ("b", 2, "a", 1)));
*/
