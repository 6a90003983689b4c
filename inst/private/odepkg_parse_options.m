## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{o}, @var{opts}, @var{extra}, @var{same_again}] =} odepkg_parse_options (@var{solver}, @var{opts}, @var{extra}, @var{n})
## The options argument of an odepkg solver, as ode45 reads it: a fourth
## argument that is not a struct is the first of the extra parameters,
## f (t, y, P1, P2, @dots{}) with default options; an empty numeric [] stands
## for "no options" (odepkg's and Matlab's convention; so a first parameter
## that is [] or a struct needs an OPTS before it).  @var{o}: the options
## merged with their defaults for a state of @var{n} numbers
## (odepkg_options); @var{opts}: the struct given (empty if none);
## @var{same_again}: false when the options warned (odepkg_options).
## @end deftypefn

function [o, opts, extra, same_again] = odepkg_parse_options (solver, opts, extra, n)
  if (isnumeric (opts) && isempty (opts))
    opts = struct ();
  elseif (! isstruct (opts))
    extra = [{opts}, extra];
    opts = struct ();
  elseif (! isscalar (opts))
    error ("odepkg:invalidInput",
           "%s: OPTS must be a scalar struct from odepkgset or odeset (got a %s struct array)",
           solver, mat2str (size (opts)));
  endif
  [o, same_again] = odepkg_options (solver, opts, n);
endfunction
