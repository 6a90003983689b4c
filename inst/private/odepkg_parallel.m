## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {} odepkg_parallel (@var{caller})
## Make Octave's @code{parallel} package (Debian: @code{octave-parallel})
## usable for a parallel run of @var{caller}: nothing if its functions are
## already on the path, otherwise @code{pkg load parallel}.  If the package
## is not installed (or cannot be loaded), the error
## @code{odepkg:parallelMissing} names the Debian package and the command
## that loads it.  odepkg itself does not depend on the package: it is
## loaded here, on demand, only for a run that asks for parallel workers.
##
## Test hook: with the environment variable
## @env{ODEPKG_SIMULATE_NO_PARALLEL} set to a non-empty value the package
## is treated as not installed (the tests simulate its absence this way
## rather than uninstalling it).
## @end deftypefn

function odepkg_parallel (caller)

  simulated = ! isempty (getenv ("ODEPKG_SIMULATE_NO_PARALLEL"));
  if (! simulated && exist ("parcellfun") == 2 && exist ("netcellfun") == 2)
    return;                       # already loaded
  endif
  cause = "it is not installed";
  if (! simulated)
    installed = ! isempty (pkg ("list", "parallel"));
    if (installed)
      try
        pkg load parallel
        return;
      catch err
        cause = sprintf ("pkg load parallel failed: %s", err.message);
      end_try_catch
    endif
  endif
  error ("odepkg:parallelMissing",
         ["%s: a parallel run needs Octave's package \"parallel\" (%s); on Debian " ...
          "install it with: apt-get install octave-parallel (it is then loaded " ...
          "on demand, as by: pkg load parallel).  Without it, give \"Workers\", 1 " ...
          "for a run in this process"], caller, cause);

endfunction
