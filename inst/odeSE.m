## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {[@var{t}, @var{y}] =} odeSE (@var{fcn}, @var{tspan}, @var{y0})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeSE (@var{fcn}, @var{tspan}, @var{y0}, @var{opts})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeSE (@dots{}, @var{par1}, @var{par2}, @dots{})
## @deftypefnx {} {@var{sol} =} odeSE (@dots{})
## @deftypefnx {} {} odeSE (@dots{})
## Solve Hamilton's equations with the symplectic Euler method (order 1,
## symplectic): p1 = p0 - h dH/dq (q0, p1), q1 = q0 + h dH/dp (q0, p1)
## (Hairer, Lubich, Wanner, Theorem VI.3.3).  @var{y0} = [q0; p0] and
## @code{@var{fcn} (@var{t}, [q; p])} returns [dH/dp; -dH/dq].
##
## With @qcode{"Explicit"}, @qcode{"yes"} (separable H) the scheme is explicit
## (two calls of @var{fcn} per step); otherwise each step solves for p1 by
## Newton's method (@qcode{"HamiltonianHessFcn"}, @qcode{"NewtonTol"},
## @qcode{"MaxNewtonIterations"}).
##
## Time modes, as in odepkg:
## @itemize
## @item @var{tspan} = [t0 tf]: adaptive steps, the local error estimated by
## step doubling (one step of h against two of h/2, the latter kept) and
## controlled with @qcode{"RelTol"}, @qcode{"AbsTol"}, @qcode{"NormControl"},
## @qcode{"InitialStep"} and @qcode{"MaxStep"} as in @code{ode45}; every
## accepted step is output.  With @qcode{"TimeStepSize"} (or
## @qcode{"TimeStepNumber"}) fixed steps instead, the last one shortened to
## end on tf.  Fixed steps keep the long-time energy behaviour of a
## symplectic method; variable steps give it up.
## @item @var{tspan} with more than two times: output exactly at those times
## (steps are shortened to land on them; no interpolation).
## @item scalar @var{tspan} = t0 with @qcode{"TimeStepSize"} h and
## @qcode{"TimeStepNumber"} N: N fixed steps, every one output.
## @end itemize
##
## @var{opts} is a struct from @code{odepkgset} (or @code{odeset}).  Extra
## arguments @var{par1}, @dots{} are passed to every user function.  The
## outputs are those of @code{ode45}: a column @var{t} and one row of
## @var{y} per time, or a struct @var{sol} with fields @code{x}, @code{y},
## @code{solver} and @code{stats} (counted calls, steps, Newton iterations).
## @qcode{"OutputFcn"}/@qcode{"OutputSel"} are honoured (@code{odeplot}
## when there is no output argument); @qcode{"Stats"}, @qcode{"on"} prints
## the counts.  If a step fails midway (Newton diverges, step size
## underflow, non-finite values), the solution computed so far is returned
## with a warning @code{odepkg:integrationFailed} naming t and the cause.
##
## Example:
## @example
## f = @@(t, x, k, m) [x(2) / m; -k * x(1)];   # spring, extra args k, m
## opts = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes");
## [t, y] = odeSE (f, [0 1 2 3], [1; 0], opts, 4, 1);   # output at t = 0:3
## @end example
## @seealso{odeSV, odeVV, symplectic_euler, odepkgset}
## @end deftypefn

function varargout = odeSE (fcn, tspan, y0, opts = [], varargin)

  if (nargin < 3)
    print_usage ();
  endif
  varargout = odepkg_driver ("odeSE", "symplectic_euler", nargout, fcn, tspan, y0, opts, varargin);

endfunction
