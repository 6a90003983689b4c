## -*- texinfo -*-
## @deftypefn {} {[@var{t}, @var{out}] =} median_time (@var{fn}, @var{runs})
## Median wall time in seconds of @var{runs} calls of @var{fn} (after one
## warm-up call), and the output of the last call.
## @end deftypefn
function [t, out] = median_time (fn, runs)
  out = fn ();                     # warm-up: loads oct-files, fills caches
  times = zeros (runs, 1);
  for k = 1:runs
    t0 = tic ();
    out = fn ();
    times(k) = toc (t0);
  endfor
  t = median (times);
endfunction
