## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {} odepkg ()
## @deftypefnx {} {@var{table} =} odepkg ()
## The conventions shared by every odepkg solver; without an output argument,
## print the table of all options with the solvers that honour each.
##
## @strong{Solvers.}  @code{odeSE} (symplectic Euler), @code{odeSV}
## (Störmer--Verlet), @code{odeVV} (velocity Verlet), @code{odeRATTLE} and
## @code{odeSHAKE} (holonomic g(q) = 0, or coisotropic g(q, p) = 0 with
## @qcode{"ConstraintVariables"}, @qcode{"qp"}), @code{odeRATTLie} (RATTLE on
## Lie groups) and @code{odeSPVI} (spectral variational integrators).  All are
## called as @code{ode45}:
## @example
## [t, y] = solver (fcn, tspan, y0, opts, par1, ...)
## sol = solver (...)
## [t, y, te, ye, ie] = solver (...)          # with "Events"
## @end example
## @var{y0} = [q0; p0] and @code{fcn (t, [q; p], par1, ...)} returns
## [dH/dp; -dH/dq] (odeVV: [v; a]; odeRATTLie: [q0; v0] with group coordinates
## q, and fcn returns the applied forces).  Extra arguments are passed to
## every user function; as in @code{ode45}, they may follow @var{y0} directly
## (@code{solver (fcn, tspan, y0, par1, ...)}, default options) when
## @var{par1} is not a struct, and an empty @code{[]} for @var{opts} means
## the default options.
##
## @strong{Time modes.}
## @itemize
## @item @var{tspan} = [t0 tf]: adaptive steps controlled by a step-doubling
## estimate of the local error (@qcode{"RelTol"}, @qcode{"AbsTol"},
## @qcode{"NormControl"}, @qcode{"InitialStep"}, @qcode{"MaxStep"}); every
## accepted step is output.  With @qcode{"TimeStepSize"} (or
## @qcode{"TimeStepNumber"}): fixed steps, which keep the long-time energy
## behaviour of a symplectic method.
## @item @var{tspan} with more than two times: output exactly at those times.
## @item scalar @var{tspan} = t0 with @qcode{"TimeStepSize"} and
## @qcode{"TimeStepNumber"}: that many fixed steps, every one output.
## @end itemize
##
## @strong{Outputs.}  A column @var{t} and one row of @var{y} per output
## time, or @var{sol} with fields @code{x}, @code{y}, @code{solver},
## @code{stats} (steps, rejected steps, calls of each user function, Newton
## iterations, largest constraint residuals); with @qcode{"Events"} also
## @code{xe}, @code{ye}, @code{ie}.  @code{deval (sol, t)} interpolates
## (constrained states projected onto the constraints; odeRATTLie's on the
## group, in its Lie algebra); @qcode{"Refine"}
## adds interpolated points inside each step as in @code{ode45}.
##
## @strong{Monitoring} (off by default, no extra call when off):
## @qcode{"HamiltonianFcn"} H(t, y) and @qcode{"InvariantFcn"} (a vector of
## first integrals) give @code{sol.invariants} (@code{names}, @code{values} at
## the output times, largest @code{deviation} from t0); constrained solvers
## then add @code{sol.residuals} (|g| and |Dg f| per output time) and the
## multipliers @code{sol.lambda}.
##
## @strong{Options} come from @code{odepkgset} (or @code{odeset}).  Every
## option is honoured or refused: one a solver does not use is an
## @code{odepkg:unsupportedOption} error naming it, never silently ignored.
## Errors carry @code{odepkg:} identifiers; a failure in the middle of a run
## returns what was computed so far with the warning
## @code{odepkg:integrationFailed}.
##
## Example:
## @example
## odepkg ()                                   # the options and who honours them
## T = odepkg ();  @{T(strcmp (@{T.solvers@}, "all")).name@}   # options of every solver
## @end example
## @seealso{odepkgset, odeSV, odeRATTLE, odeRATTLie, odeSPVI}
## @end deftypefn

function table = odepkg ()

  T = odepkg_option_table ();
  if (nargout > 0)
    table = T;
    return;
  endif
  printf ("%-20s %-11s %-34s %s\n", "option", "default", "solvers", "meaning");
  for i = 1:numel (T)
    s = T(i).solvers;
    if (iscell (s))
      s = strjoin (s, " ");
    endif
    printf ("%-20s %-11s %-34s %s\n", T(i).name, shown (T(i).default), s, T(i).help);
  endfor

endfunction

function s = shown (v)
  if (isempty (v))
    s = "[]";
  elseif (ischar (v))
    s = ['"' v '"'];
  else
    s = num2str (v);
  endif
endfunction

%!test
%! ## the printed list is the option table: every option, its solvers
%! T = odepkg ();
%! out = evalc ("odepkg ()");
%! for i = 1:numel (T)
%!   assert (! isempty (regexp (out, ["\n" T(i).name " "], "once")), T(i).name);
%! endfor
%! assert (numel (strsplit (strtrim (out), "\n")), numel (T) + 1);
%!test
%! ## the table drives odepkgset (every name accepted, a field of its result)
%! ## and odepkgset's help documents every option of the package
%! T = odepkg ();
%! o = odepkgset ();
%! txt = evalc ("help odepkgset");
%! for i = 1:numel (T)
%!   assert (isfield (o, T(i).name), T(i).name);
%!   assert (! isempty (strfind (txt, T(i).name)) || isfield (odeset (), T(i).name), T(i).name);
%! endfor
%!test
%! ## and it drives the refusals: an option is honoured by exactly the
%! ## solvers the table names (the others refuse it with its name)
%! T = odepkg ();
%! row = T(strcmp ({T.name}, "NodeOutput"));
%! assert (row.solvers, {"odeSPVI"});
%! try
%!   odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("NodeOutput", "on"));
%!   error ("not refused");
%! catch err
%!   assert (err.identifier, "odepkg:unsupportedOption");
%!   assert (! isempty (strfind (err.message, "odeSPVI")));
%! end_try_catch
%!test
%! ## citation ("odepkg") prints the package's CITATION (installed package only)
%! if (! isempty (pkg ("list", "odepkg")))
%!   txt = evalc ("citation ('odepkg')");
%!   assert (! isempty (strfind (txt, "Hairer")));
%!   assert (! isempty (strfind (txt, "McLachlan")));
%! endif
