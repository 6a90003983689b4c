## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {@var{varargout} =} timed_callback (@var{k}, @var{fn}, @dots{})
## @deftypefnx {} {@var{acc} =} timed_callback ("read")
## @deftypefnx {} {} timed_callback ("reset")
## Benchmark helper: calls @var{fn} (@dots{}) and adds its wall time (tic,
## toc: microseconds; the process's CPU time advances in scheduler ticks of
## milliseconds, too coarse for calls of 0.02-5 ms) to the accumulator
## @var{k} (1, 2, 3), so that a solver's callbacks are timed as the solver
## calls them.  Meaningful on an idle machine.  @qcode{"read"} returns the
## accumulated seconds, @qcode{"reset"} zeroes them.
## @end deftypefn
function varargout = timed_callback (k, fn, varargin)
  persistent acc = zeros (1, 3);
  if (ischar (k))
    if (strcmp (k, "reset"))
      acc = zeros (1, 3);
    else
      varargout{1} = acc;
    endif
    return;
  endif
  t0 = tic ();
  [varargout{1:max (1, nargout)}] = fn (varargin{:});
  acc(k) += toc (t0);
endfunction
