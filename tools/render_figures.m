## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {@var{nbad} =} render_figures (@var{outdir})
## @deftypefnx {} {@var{nbad} =} render_figures (@var{outdir}, @var{solvers})
## Run every %!demo of the package's solvers headless and print each figure
## to @var{outdir}/<solver>_<k>.png (gnuplot toolkit, invisible figures; needs
## @code{octave --no-gui}, not octave-cli), then check each PNG: it exists, is
## larger than 4 kB and is not blank (more than 0.5 % of its pixels differ
## from the background colour, and it has at least 3 distinct colours).
## @var{solvers}, a cell array of names, renders only those solvers' demos
## (default: all of them).  From a source tree, without @code{pkg load}:
## @example
## addpath ("inst"); addpath ("src"); source ("PKG_ADD"); addpath ("tools");
## render_figures ("build/figures", @{"odeSV"@})
## @end example
## Returns the number of demos that failed or gave a bad figure.
## @end deftypefn

function nbad = render_figures (outdir = "build/figures", solvers = {})
  warning ("off", "Octave:gnuplot-graphics");   # its "discouraged" notice, once per run
  graphics_toolkit ("gnuplot");
  set (0, "defaultfigurevisible", "off");
  set (0, "defaultaxesfontsize", 9);
  set (0, "defaulttextfontsize", 9);
  if (! exist (outdir, "dir"))
    mkdir (outdir);
  endif
  if (isempty (solvers))
    solvers = {"odeSE", "odeSV", "odeVV", "odeRATTLE", "odeSHAKE", "odeRATTLie", "odeSPVI", "odepkg_model"};
  elseif (ischar (solvers))
    solvers = {solvers};
  endif
  nbad = 0;  nfig = 0;
  warning ("off", "odepkg:inconsistentInitialData");
  for i = 1:numel (solvers)
    [code, idx] = test (solvers{i}, "grabdemo");
    for k = 1:numel (idx) - 1
      close all;
      name = fullfile (outdir, sprintf ("%s_%d.png", solvers{i}, k));
      t0 = tic ();
      try
        eval_demo (code(idx(k):idx(k+1)-1));
        fit_axes_for_gnuplot (gcf ());
        print (gcf (), name, "-dpng", "-S1000,520");
        [ok, why] = png_ok (name);
      catch err
        ok = false;  why = err.message;
      end_try_catch
      nfig += 1;
      if (ok)
        d = dir (name);
        printf ("%-24s %6.1f kB  %5.1f s\n", [solvers{i} "_" num2str(k) ".png"], d.bytes / 1024, toc (t0));
      else
        printf ("%-24s FAILED: %s\n", [solvers{i} "_" num2str(k) ".png"], why);
        nbad += 1;
      endif
    endfor
  endfor
  close all;
  printf ("figures: %d rendered, %d bad, in %s\n", nfig - nbad, nbad, outdir);
endfunction

## gnuplot lays out an axes whose outer position is given by its own margin
## estimates, which leave no room for tick labels and axis labels (a lone
## axes fills the whole page, log tick labels are cut at the left edge, a
## y label falls onto the tick labels).  Pin each axes' inner box instead,
## shrunk by a margin for the x label below and the title above.  (A "-F"
## font option to print has the same effect on labels: gnuplot places them
## for its default font.)
function fit_axes_for_gnuplot (fig)
  for ax = findobj (fig, "type", "axes", "-not", "tag", "legend").'
    p = get (ax, "position");
    set (ax, "positionconstraint", "innerposition",
         "position", [p(1), p(2) + 0.035, p(3), p(4) - 0.07]);
  endfor
endfunction

## A demo's code runs in a function workspace of its own.
function eval_demo (code)
  eval (code);
endfunction

function [ok, why] = png_ok (name)
  ok = false;  why = "";
  d = dir (name);
  if (isempty (d))
    why = "no file";  return;
  elseif (d.bytes < 4096)
    why = sprintf ("only %d bytes", d.bytes);  return;
  endif
  img = imread (name);
  px = reshape (double (img), [], size (img, 3));
  bg = mode (px, 1);
  differ = mean (any (px != bg, 2));
  ncol = rows (unique (px, "rows"));
  if (differ < 0.005 || ncol < 3)
    why = sprintf ("blank: %.2f %% of pixels drawn, %d colours", 100 * differ, ncol);  return;
  endif
  ok = true;
endfunction
