## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {@var{t} =} per_call (@var{fn}, @var{Y}, @var{sel}, @var{min_seconds}, @var{timings})
## Benchmark helper: the median CPU seconds per call of @var{fn} over the
## columns of @var{Y} (rows @var{sel} of each): the states looped over (after
## a warm-up call), the loop repeated until it takes at least
## @var{min_seconds} (default 0.2), the median of @var{timings} (default 5)
## such timings.
## @end deftypefn
function t = per_call (fn, Y, sel, min_seconds = 0.2, timings = 5)
  Ys = Y(sel,:);
  out = fn (Ys(:,1));
  reps = 1;
  while (loop_seconds (fn, Ys, reps) < min_seconds && reps < 2^16)
    reps *= 2;
  endwhile
  ts = zeros (timings, 1);
  for i = 1:timings
    ts(i) = loop_seconds (fn, Ys, reps) / (reps * columns (Ys));
  endfor
  t = median (ts);
endfunction

## CPU seconds of reps loops of fn over the columns of Ys
function c = loop_seconds (fn, Ys, reps)
  c0 = cputime ();
  for r = 1:reps
    for k = 1:columns (Ys)
      out = fn (Ys(:,k));
    endfor
  endfor
  c = cputime () - c0;
endfunction
