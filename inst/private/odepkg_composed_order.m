## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {@var{p} =} odepkg_composed_order (@var{o})
## The classical order of a run with options @var{o}: the composition
## table's (its name ends in it), the Order option's, or 2 for the plain
## methods.
## @end deftypefn

function p = odepkg_composed_order (o)
  p = 2;
  if (isfield (o, "Composition") && ! isempty (o.Composition))
    p = str2double (regexp (o.Composition, '\d+$', "match", "once"));
  elseif (isfield (o, "Order") && ! isempty (o.Order))
    p = o.Order;
  endif
endfunction
