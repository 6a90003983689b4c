## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {@var{r} =} odepkg_model_derive (@var{H}, @var{g}, @var{q}, @var{p}, @var{par}, @var{qp})
## Derivatives and C kernels of a model in ONE SymPy call (one Python round
## trip, the code in odepkg_model_derive.py): f = [H_p; -H_q], H, the
## Hessian of H, g, its gradient G and its Hessians, each with its sparsity
## pattern; separability (H_pq = 0) and a quadratic kinetic part (H_pp
## constant) decided symbolically; C code (ABI 2 of
## src/binding/NativeKernels.h) with common subexpressions eliminated
## (SymPy @code{cse}, @code{ccode} per entry).  @var{H} and @var{g} are
## syms or strings (a cellstr for several g), @var{q}, @var{p}, @var{par}
## sym vectors of symbols or cellstrs of names; @var{qp} true: g = g(q, p),
## its derivatives taken on y = [q; p].  Symbols are matched by name.
## (@var{r}.g shows at most 200 of the constraints: @var{r}.m counts them.)
## @var{r}.err is "" or the identifier of an input error whose text is
## @var{r}.msg.
## @end deftypefn

function r = odepkg_model_derive (H, g, q, p, par, qp)

  persistent cmd = {};
  if (isempty (cmd))
    here = fileparts (mfilename ("fullpath"));
    cmd = strsplit ([fileread(fullfile (here, "odepkg_model_fold.py")), ...
                     fileread(fullfile (here, "odepkg_model_derive.py"))], "\n");
  endif
  ## a cellstr goes as one string, split in Python (octave-symbolic sends
  ## a cell element by element: 15 s for a chain of 2 10^4 links)
  [H, g, q, p, par, packed] = pack (H, g, q, p, par);
  [err, msg, src, sep, quad, Hs, fs, gs, Gs, nh, ng, ngh, m, qn, pn, parn] = ...
    pycall_sympy__ (cmd, H, g, q, p, par, logical (qp), char ("0" + packed));
  lines = @(s) ifelse_empty (s);
  r = struct ("err", err, "msg", msg, "source", src, "separable", logical (sep),
              "quadratic", logical (quad), "H", Hs, "f", {lines(fs)}, "g", {lines(gs)},
              "G", {lines(Gs)}, "q", {lines(qn)}, "p", {lines(pn)},
              "parameters", {lines(parn)}, "nnz", double ([nh, ng, ngh]), "m", double (m));

endfunction

function varargout = pack (varargin)
  packed = false (1, nargin);
  varargout = varargin;
  for k = 1:nargin
    c = varargin{k};
    if (iscellstr (c) && ! isempty (c) && ! any (cellfun (@(x) any (x == "\n"), c)))
      varargout{k} = strjoin (c(:).', "\n");
      packed(k) = true;
    endif
  endfor
  varargout{nargin + 1} = packed;
endfunction

function c = ifelse_empty (s)
  if (isempty (s))
    c = {};
  else
    c = strsplit (s, "\n").';
  endif
endfunction
