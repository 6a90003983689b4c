## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{npass}, @var{nfail}] =} run_package_tests ()
## Run every test block of the loaded odepkg package: the m-files of its
## directory (and deval_odepkg/) and the extracted @code{*.cc-tst} files of the compiled
## functions.  Prints one line per file and the totals.  (@code{pkg test}
## always exits 0 in Octave 7, so it cannot gate CI.)
## @end deftypefn

function [npass, nfail] = run_package_tests ()
  p = pkg ("list", "odepkg");
  if (isempty (p))
    error ("odepkg:notInstalled", "run_package_tests: odepkg is not installed");
  endif
  p = p{1};
  files = [glob(fullfile (p.dir, "*.m")); glob(fullfile (p.dir, "deval_odepkg", "*.m"));
           glob(fullfile (p.archprefix, "*-tst"));
           glob(fullfile (p.archprefix, "*", "*-tst"))];
  [npass, nfail] = run_test_files (files);
endfunction
