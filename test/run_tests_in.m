## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{npass}, @var{nfail}] =} run_tests_in (@var{instdir}, @var{octdir})
## Run every test block of the package from a source tree, without
## installing it: the m-files of @var{instdir} (and its deval_odepkg/) and the
## @code{%!} blocks of the DEFUN sources in @var{octdir}, with both on the
## path (used by tools/sanitize.sh against sanitizer-built oct-files).
## @end deftypefn

function [npass, nfail] = run_tests_in (instdir, octdir)
  addpath (octdir);
  addpath (instdir);
  if (! exist ("deval"))
    addpath (fullfile (instdir, "deval_odepkg"));
  endif
  files = [glob(fullfile (instdir, "*.m")); glob(fullfile (instdir, "deval_odepkg", "*.m"));
           glob(fullfile (octdir, "*.cc"))];
  [npass, nfail] = run_test_files (files);
endfunction
