## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{times}, @var{o}] =} odepkg_time_mode (@var{solver}, @var{tspan}, @var{o}, @var{given})
## The time mode of a run from @var{tspan} and the step options, with every
## combination that would leave an option without effect refused
## (@code{odepkg:invalidOption}, naming both options).  @var{o} holds the
## merged options, @var{given} the user's own struct (whose non-empty fields
## are the options actually given).  @var{times} is the column of times for
## the compiled integrator: [t0; tf] (every step output) or the requested
## output times.
##
## The modes (@file{doc/usage.md}, @code{help odepkg}):
## @itemize
## @item scalar t0: @qcode{"TimeStepSize"} h and @qcode{"TimeStepNumber"} N,
## N fixed steps;
## @item [t0 tf]: adaptive steps; with @qcode{"TimeStepSize"} fixed steps of
## h (the last one shortened to end on tf); with @qcode{"TimeStepNumber"}
## alone N fixed steps of (tf - t0) / N; both only if N h = tf - t0;
## @item more than two times: output exactly at them; with
## @qcode{"TimeStepSize"} fixed steps, shortened to land on each time;
## @qcode{"TimeStepNumber"} is refused (N steps cannot land on the times).
## @end itemize
## With fixed steps there is no error control: @qcode{"RelTol"},
## @qcode{"AbsTol"}, @qcode{"NormControl"}, @qcode{"InitialStep"} and
## @qcode{"MaxStep"} would be ignored, and are refused.
## @end deftypefn

function [times, o] = odepkg_time_mode (solver, tspan, o, given)

  h_given = has (given, "TimeStepSize");
  n_given = has (given, "TimeStepNumber");
  if (numel (tspan) == 1)
    if (! h_given || ! n_given)
      error ("odepkg:invalidInput",
             "%s: a scalar TSPAN needs the options TimeStepSize and TimeStepNumber", solver);
    endif
    times = [tspan; tspan + o.TimeStepNumber * o.TimeStepSize];
    if (! isfinite (times(2)))
      error ("odepkg:invalidInput",
             "%s: the end time t0 + TimeStepNumber * TimeStepSize = %g + %g * %g is not a finite number",
             solver, tspan, o.TimeStepNumber, o.TimeStepSize);
    endif
  else
    times = tspan;
    span = abs (tspan(end) - tspan(1));
    if (n_given && numel (tspan) > 2)
      error ("odepkg:invalidOption",
             ['%s: option "TimeStepNumber" (%d) conflicts with a TSPAN of %d output times: ' ...
              'N fixed steps cannot land on them; give "TimeStepSize" (steps shortened to land ' ...
              'on each time) or a scalar TSPAN'], solver, o.TimeStepNumber, numel (tspan));
    endif
    if (n_given && h_given
        && abs (o.TimeStepNumber * o.TimeStepSize - span) > 1e-12 * span)
      error ("odepkg:invalidOption",
             ['%s: options "TimeStepNumber" (%d) and "TimeStepSize" (%g) conflict with TSPAN ' ...
              '[%g %g]: %d steps of %g span %g, not %g; give one of them, or a scalar TSPAN ' ...
              'for TimeStepNumber steps of TimeStepSize'], solver, o.TimeStepNumber,
             o.TimeStepSize, tspan(1), tspan(end), o.TimeStepNumber, o.TimeStepSize,
             o.TimeStepNumber * o.TimeStepSize, span);
    endif
    if (n_given && ! h_given)
      o.TimeStepSize = span / o.TimeStepNumber;
    endif
  endif

  if (h_given || n_given)
    step_option = "TimeStepSize";
    if (! h_given)
      step_option = "TimeStepNumber";
    endif
    adaptive_only = {"RelTol", "AbsTol", "NormControl", "InitialStep", "MaxStep"};
    adaptive_only = adaptive_only(isfield (given, adaptive_only));   # one call for the five
    for i = 1:numel (adaptive_only)
      if (! isempty (given.(adaptive_only{i})))
        error ("odepkg:invalidOption",
               ['%s: option "%s" conflicts with "%s": it controls adaptive steps, and fixed ' ...
                'steps have no error control; remove one of them'], solver, adaptive_only{i},
               step_option);
      endif
    endfor
  endif

endfunction

function tf = has (s, name)
  tf = isfield (s, name) && ! isempty (s.(name));
endfunction
