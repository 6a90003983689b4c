## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{npass}, @var{nfail}] =} run_test_files (@var{files})
## Run the test blocks of each file in the cell @var{files}; one line per
## file (with its time) and the totals (shared by run_package_tests and run_tests_in).
## @end deftypefn

function [npass, nfail] = run_test_files (files)
  npass = 0;  nfail = 0;
  for i = 1:numel (files)
    [~, name, ext] = fileparts (files{i});
    t0 = tic ();
    [n, nmax] = test (files{i}, "quiet", stdout);
    printf ("%-28s %3d of %3d passed %7.1f s\n", [name ext], n, nmax, toc (t0));
    npass += n;  nfail += nmax - n;
  endfor
  printf ("octave: %d passed, %d failed\n", npass, nfail);
endfunction
