## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {} fuzz_batch (@var{casefile}, @var{from}, @var{to}, @var{resultfile})
## Run the cases @var{from}..@var{to} of @var{casefile} (one statement per
## line) and append one line per case to @var{resultfile} as soon as it
## ends: index, class, identifier.  Classes: ok (a normal return with finite
## outputs, or non-finite ones with a warning), NONFINITE (non-finite output
## and no warning), odepkg (an odepkg: error), user (the user function's own
## error propagated: fuzz:user, or any error raised in a function the case
## defined), other (another identifier), EMPTYID.  A
## case that crashes Octave or hangs leaves no line: run_fuzz.sh finds it.
## @end deftypefn

function fuzz_batch (casefile, from, to, resultfile)
  cases = strsplit (fileread (casefile), "\n");
  fid = fopen (resultfile, "a");
  for i = from:min (to, numel (cases))
    if (isempty (cases{i}))
      continue;
    endif
    [cls, id] = run_case (cases{i});
    fprintf (fid, "%d\t%s\t%s\n", i, cls, id);
    fflush (fid);
  endfor
  fclose (fid);
endfunction

function [cls, id] = run_case (code)
  lastwarn ("");
  id = "";
  try
    out = {};
    eval ([code ";"]);
    cls = "ok";
    if (! all (cellfun (@finite_or_not_numeric, out)) && isempty (lastwarn ()))
      cls = "NONFINITE";
    endif
  catch err
    id = err.identifier;
    if (strncmp (id, "odepkg:", 7))
      cls = "odepkg";
    elseif (strcmp (id, "fuzz:user") || raised_in_user_code (err))
      cls = "user";
    elseif (isempty (id))
      cls = "EMPTYID";
      id = strrep (err.message, "\n", " ");
    else
      cls = "other";
    endif
  end_try_catch
  close all;
endfunction

## The user's own error, propagated as the package promises: raised inside
## (or below) a function handle that the case itself defined.  Those are
## created by the eval of run_case: their stack frames are anonymous
## functions without a file ("run_case>@<anonymous>"), while the package's
## own anonymous functions carry their m-file.
function u = raised_in_user_code (err)
  mine = @(f) ! isempty (strfind (f.name, "@<anonymous>")) && isempty (f.file);
  u = any (arrayfun (mine, err.stack));
endfunction

function ok = finite_or_not_numeric (v)
  ok = ! isnumeric (v) || all (isfinite (v(:)));
endfunction
