# odepkg_model_derive.py: the body of ONE SymPy call (pycall_sympy__, one
# Python round trip) that derives a model's kernels and writes their C
# (ABI 2 of src/binding/NativeKernels.h).  Read by odepkg_model_derive.m;
# its text is part of the cache key (a change here rebuilds every model).
# Inputs _ins: H (sym or str), g (list of sym/str, or a Matrix), q, p, par
# (names or symbols), qp (g = g(q, p): gradients on y = [q; p]).
# Derivatives are taken term by term of a sum (O(size of H), not
# O(d * size): a chain of 10^4 links stays linear), sparse: only the
# entries whose expression depends on the variable exist.
import sympy as sp
# (the functions of odepkg_model_fold.py precede this text)
H, g, qn, pn, parn, qp, packed = _ins
# a cellstr arrives as one string of lines (odepkg_model_derive.m: pack)
H, g, qn, pn, parn = [v.split('\n') if flag == '1' else v for v, flag in zip((H, g, qn, pn, parn), packed)]
items = lambda v: list(v) if isinstance(v, (list, tuple, sp.MatrixBase)) else ([] if v is None else [v])
name = lambda s: s if isinstance(s, str) else (s.name if isinstance(s, sp.Symbol) else '(' + str(s) + ')')
qn = [name(s) for s in items(qn)]; pn = [name(s) for s in items(pn)]; parn = [name(s) for s in items(parn)]
g = items(g)
names = qn + pn + parn
nothing = ('', False, False, '', '', '', '', 0, 0, 0, 0, '', '', '')
bad = [s for s in names if not (isinstance(s, str) and s.isidentifier())]
from collections import Counter
dup = sorted(s for s, c in Counter(names).items() if c > 1)
if bad or dup:
    return ('badSymbol', 'not symbol names: ' + ', '.join(map(str, bad)) if bad else 'named twice in q, p and Parameters: ' + ', '.join(dup)) + nothing
class Symbols(dict):
    # name -> Symbol(name, real=True), made on first use: a chain of 10^5
    # links has 4 10^5 names, most of them only in folded families
    def __init__(self, names):
        super().__init__()
        self.names = set(names)
    def __contains__(self, k):
        return k in self.names
    def __missing__(self, k):
        if k not in self.names:
            raise KeyError(k)
        v = self[k] = sp.Symbol(k, real=True)
        return v
    def add(self, k):
        self.names.add(k)
        return self[k]
    def drop(self, k):
        self.names.discard(k)
        self.pop(k, None)
S = Symbols(names)
class InputErr(Exception):
    pass
import re
class Names(dict):
    # a name in a string: the user's symbol, else SymPy's function or
    # constant (sin, exp, pi, E, I), else a new symbol (reported as unknown)
    def __missing__(self, key):
        if key in S:
            return S[key]
        v = getattr(sp, {'abs': 'Abs'}.get(key, key), None)
        return v if v is not None and not isinstance(v, type(sp)) else sp.Symbol(key)
names_ns = Names(S, Integer=sp.Integer, Float=sp.Float)
number = re.compile(r'(?<![\w.])(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(?![\w.(])')
def parse(text):
    # sym's syntax, read by Python's own parser (SymPy's sympify takes ~1 ms
    # a term and fails on a sum of 10^3 terms): '^' is '**', integer
    # literals exact, the top-level sum read as a list of its terms (one
    # flat display, no recursion) and summed by one Add.  Anything this
    # does not read is left to sympify.
    num = lambda mt: ("Float('%s')" % mt.group(0)) if ('.' in mt.group(0) or mt.group(2)) else 'Integer(%s)' % mt.group(1)
    terms = split_terms(text)       # (odepkg_model_fold.py)
    parts = eval('[' + ', '.join(number.sub(num, x) for x in terms if x.strip()) + ']', {'__builtins__': {}}, names_ns)
    return sp.Add(*[sp.sympify(x) for x in parts])
def canon(e, what):
    # strings parsed with q, p and Parameters as symbols (a name such as
    # beta or S is then the user's symbol, not SymPy's function)
    if isinstance(e, (list, tuple)) and all(isinstance(x, str) for x in e):
        e = ' + '.join('(' + x + ')' for x in e) if e else '0'   # H as a cellstr of terms: their sum
    if isinstance(e, str):
        try:
            e = parse(e)
        except Exception:
            e = sp.sympify(e, locals=S)
    else:
        e = sp.sympify(e)
    unknown = sorted(str(s) for s in e.free_symbols if str(s) not in S)
    if unknown:
        raise InputErr('unknownSymbol', what + ' uses ' + ', '.join(unknown) + ', in none of q, p and Parameters')
    return e.xreplace({s: S[str(s)] for s in e.free_symbols})
def finite(e, what):
    if e.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise InputErr('nonFiniteExpression', what + ' is not finite: ' + str(e) + ' (a division by zero, 0/0 or an infinity)')
    if e.has(sp.I):
        raise InputErr('invalidInput', what + ' is complex: ' + str(e) + ' (H and g must be real)')
    return e
try:
    # repeated structure in string input: families of terms of H and of
    # constraints, derived once each (odepkg_model_fold.py)
    d = len(qn)
    zname = {s: i for i, s in enumerate(qn + pn)}
    Hfam, gfam, nterms = [], [], 0
    if isinstance(H, str) or (isinstance(H, (list, tuple)) and H and all(isinstance(x, str) for x in H)):
        texts = [t for x in ([H] if isinstance(H, str) else H) for t in split_terms(x)]
        nterms = len(texts)
        if nterms >= FOLD_MIN:
            rest = []
            for (tpl, roles), mem in group(texts, zname, d).items():
                if len(mem) >= FOLD_MIN:
                    Hfam.append((tpl, roles, mem))
                else:
                    rest += [texts[n] for n, vs in mem]
            if Hfam:
                H = ' + '.join('(' + t + ')' for t in rest) if rest else '0'
    if len(g) >= FOLD_MIN and all(isinstance(x, str) for x in g):
        for (tpl, roles), mem in group(g, zname, d).items():
            if len(mem) >= FOLD_MIN:
                if 'p' in roles and not qp:
                    raise InputErr('invalidInput', 'g must depend on q and the parameters only (holonomic constraints g(q) = 0); for constraints g(q, p) give "ConstraintVariables", "qp"')
                gfam.append((tpl, roles, mem))
                for n, vs in mem:
                    g[n] = None
    if Hfam or gfam:
        r = max(len(roles) for tpl, roles, mem in Hfam + gfam)
        for k in range(r):
            names_ns[PH % k] = S.add(PH % k)
        Hfam = [Family(tpl, roles, mem, finite(canon(tpl, 'H'), 'H')) for tpl, roles, mem in Hfam]
        gfam = [Family(tpl, roles, mem, finite(canon(tpl, 'g'), 'g(%d)' % (mem[0][0] + 1))) for tpl, roles, mem in gfam]
        for k in range(r):
            S.drop(PH % k)
    H = finite(canon(H, 'H'), 'H')
    g = [None if e is None else finite(canon(e, 'g'), 'g(%d)' % (k + 1)) for k, e in enumerate(g)]
    pnames = set(pn)
    if not qp and any(e is not None and any(s.name in pnames for s in e.free_symbols) for e in g):
        raise InputErr('invalidInput', 'g must depend on q and the parameters only (holonomic constraints g(q) = 0); for constraints g(q, p) give "ConstraintVariables", "qp"')
    m = len(g)
    zn = qn + pn
    class Index:
        # a symbol's index among names (by its name: symbols made on first use)
        def __init__(self, index):
            self.index = index
        def get(self, s, default=None):
            return self.index.get(s.name, default) if isinstance(s, sp.Symbol) else default
    zi = Index(zname)
    ci = zi if qp else Index({s: i for i, s in enumerate(qn)})
    class ZSym:
        def __getitem__(self, i):
            return S[zn[i]]
    zsym = ZSym()
    has_z = lambda syms: any(s.name in zname for s in syms if isinstance(s, sp.Symbol))
    nc = 2 * d if qp else d
    def terms(e):
        # the terms of a sum, c (a + b + ...) with c free of q, p opened
        if isinstance(e, sp.Add):
            for a in e.args:
                yield from terms(a)
        elif isinstance(e, sp.Mul):
            sums = [a for a in e.args if isinstance(a, sp.Add)]
            rest = [a for a in e.args if not isinstance(a, sp.Add)]
            if len(sums) == 1 and not any(has_z(a.free_symbols) for a in rest):
                c = sp.Mul(*rest)
                for a in terms(sums[0]):
                    yield c * a
            else:
                yield e
        else:
            yield e
    def grad(e, index):
        # {j: de/dv_j} for the v_j e depends on, term by term of a sum
        acc = {}
        for t in terms(e):
            for s in t.free_symbols:
                j = index.get(s)
                if j is not None:
                    acc.setdefault(j, []).append(sp.diff(t, s))
        out = {}
        for j, parts in acc.items():
            v = sp.Add(*parts)
            if v != 0:
                out[j] = v
        return out
    gH = grad(H, zi)
    f = [gH.get(d + i, sp.S.Zero) for i in range(d)] + [-gH.get(i, sp.S.Zero) for i in range(d)]
    hess = {}                       # (row, col) -> d2H/dz_row dz_col
    for j, e in gH.items():
        for i, v in grad(e, zi).items():
            hess[(i, j)] = v
    # separable: H_pq = 0 decided symbolically (simplify on the mixed entries only)
    for key in [k for k in hess if (k[0] < d) != (k[1] < d)]:
        if sp.simplify(hess[key]) == 0:
            del hess[key]
    for F in Hfam:                  # the same on the families' templates
        for key in [k for k in F.hess if F.roles[k[0]] != F.roles[k[1]]]:
            if sp.simplify(F.hess[key]) == 0:
                del F.hess[key]
    separable = (not any((i < d) != (j < d) for i, j in hess) and
                 not any(F.roles[a] != F.roles[b] for F in Hfam for a, b in F.hess))
    quadratic = separable and all(not has_z(v.free_symbols) for (i, j), v in hess.items() if i >= d)
    quadratic = quadratic and all(not (v.free_symbols & set(F.V)) for F in Hfam
                                  for (a, b), v in F.hess.items() if F.roles[a] == 'p')
    for F in Hfam:                  # the families' entries join the pattern
        for n, vs in F.members:
            for a, b in F.hess:
                hess.setdefault((vs[a], vs[b]), sp.S.Zero)
    G = {}                          # (k, j) -> dg_k/dy_j
    GH = {}                         # (i, k nc + j) -> d2g_k/dy_i dy_j
    stacked = nc * m < 2 ** 31 - 1  # the stacked Hessians' columns fit an int
    for F in gfam:
        for n, vs in F.members:     # n: the constraint's row
            for j in F.grad:
                G[(n, vs[j])] = sp.S.Zero
            if stacked:
                for a, b in F.hess:
                    GH[(vs[a], n * nc + vs[b])] = sp.S.Zero
    for F in Hfam + gfam:
        for e in [F.value] + list(F.grad.values()) + list(F.hess.values()):
            finite(e, 'the derivatives of ' + F.tpl.replace('_odepkg_v', 'V_'))
    for k, e in enumerate(g):
        if e is None:
            continue
        for j, v in grad(e, ci).items():
            G[(k, j)] = v
            if stacked:
                for i, w in grad(v, ci).items():
                    GH[(i, k * nc + j)] = w
    for what, table in (('dH', gH), ('the Hessian of H', hess), ('dg', G), ('the Hessian of g', GH)):
        for v in table.values():
            if v is not sp.S.Zero:  # (a family's entries, checked on its template)
                finite(v, what)
except InputErr as err:
    return (err.args[0], err.args[1]) + nothing
csc = lambda table: sorted(table, key=lambda rc: (rc[1], rc[0]))
hp, Gp, GHp = csc(hess), csc(G), csc(GH)
class Sub(dict):
    # the user's symbol -> its name in C (x[i], par[k]), made on first use
    def __init__(self, cname):
        super().__init__()
        self.cname = cname
    def __contains__(self, s):
        return isinstance(s, sp.Symbol) and s.name in self.cname
    def __len__(self):              # (xreplace skips an empty rule)
        return len(self.cname)
    def __missing__(self, s):
        v = self[s] = sp.Symbol(self.cname[s.name], real=True)
        return v
parc = {n: 'par[%d]' % k for k, n in enumerate(parn)}
sub = Sub({**{n: 'x[%d]' % i for i, n in enumerate(zn)}, **parc})
qsub = sub if qp else Sub({**{n: 'x[%d]' % i for i, n in enumerate(qn)}, **parc})
LIMIT = 200  # entries shown in the model's fields (printing is slow)
CHUNK = 256  # outputs per C function (bounds the compiler's work per function and cse's)
src = []
# Half-integer powers b^(k/2) (gravity's |q|^-3, written r2^(-3/2)) printed
# as sqrt(b) times b, not pow (a libm call: Kepler's f kernel took 37 ns per
# call with pow, 23 with sqrt; bench/native_vs_odeint.sh).
from sympy.printing.c import C99CodePrinter
class HalfPowerPrinter(C99CodePrinter):
    def _print_Pow(self, e):
        k = e.exp
        if k.is_Rational and k.q == 2 and abs(k.p) <= 7:
            b = '(' + self._print(e.base) + ')'
            r = '*'.join(['sqrt' + b] + [b] * ((abs(k.p) - 1) // 2))
            return '(' + r + ')' if k > 0 else '(1.0/(' + r + '))'
        return super()._print_Pow(e)
ccode = HalfPowerPrinter().doprint
def kernel(fname, args, exprs, s, loops=()):
    # out[k] = exprs[k], common subexpressions eliminated per chunk; with
    # loops (folded families): out zeroed, the nonzero entries written,
    # then each family's loop adds (or writes) its members' entries
    items = [(k, e) for k, e in enumerate(exprs) if not loops or e != 0]
    parts = []
    for c in range(0, max(len(items), 1), CHUNK):
        block = [sp.sympify(e).xreplace(s) for k, e in items[c:c + CHUNK]]
        reps, red = sp.cse(block, symbols=sp.numbered_symbols('w')) if block else ([], [])
        lines = ['  const double %s = %s;' % (w, ccode(e)) for w, e in reps]
        lines += ['  out[%d] = %s;' % (k, ccode(e)) for (k, _), e in zip(items[c:c + CHUNK], red)]
        parts.append(lines)
    unused = '  (void)t; (void)x; (void)par; (void)out;' if args.startswith('double t') else '  (void)x; (void)par; (void)out;'
    sig = 'void %s(%s)' % (fname, args)
    call = '(t, x, par, out)' if args.startswith('double t') else '(x, par, out)'
    if len(parts) == 1 and not loops:
        src.append(sig + ' {\n' + unused + '\n' + '\n'.join(parts[0]) + '\n}')
        return
    for c, lines in enumerate(parts):
        src.append('static void %s_%d(%s) {\n%s\n%s\n}' % (fname, c, args, unused, '\n'.join(lines)))
    for L in loops:
        src.append(L.c(args))
    zero = ['  memset(out, 0, %d * sizeof(double));' % len(exprs)] if loops else []
    src.append(sig + ' {\n' + '\n'.join(zero + ['  %s_%d%s;' % (fname, c, call) for c in range(len(parts))] +
                                         ['  %s%s;' % (L.name, call) for L in loops]) + '\n}')
def family_loops(kname, fams, outputs, s, op):
    # one Loop per family: outputs(F) = [(template expression, member -> position)]
    loops = []
    for n, F in enumerate(fams):
        outs = outputs(F)
        if not outs:
            continue
        slots = [[vs[k] for _, vs in F.members] for k in range(len(F.V))]
        loops.append(Loop('%s_fam%d' % (kname, n), F, [e for e, _ in outs],
                          [[pos(row, vs) for row, vs in F.members] for _, pos in outs], slots, s, op))
    return loops
def pattern_array(label, pat, which):
    rows = ', '.join(str(r) for r, c in pat) or '0'
    cols = ', '.join(str(c) for r, c in pat) or '0'
    src.append('static const int %s_rows[] = {%s};\nstatic const int %s_cols[] = {%s};' % (label, rows, label, cols))
tf = 'double t, const double *x, const double *par, double *out'
cf = 'const double *x, const double *par, double *out'
src += ['/* odepkg native model (ABI 2, src/binding/NativeKernels.h), generated by odepkg_model.',
        '   H = ' + ('(%d terms, %d families folded into loops)' % (nterms, len(Hfam)) if Hfam else
                  str(H) if len(H.args) < LIMIT else '(%d terms)' % len(H.args)).replace('*/', '* /'),
        '   SymPy cse + ccode. */',
        '#include <math.h>',
        '#include <string.h>',
        'int odepkg_abi(void) { return 2; }',
        'void odepkg_dims(int *dims) { dims[0] = %d; dims[1] = %d; dims[2] = %d; dims[3] = %d; }' % (d, m, len(parn), nc)]
pattern_array('hess', hp, 0)
nG = len(Gp) if m > 0 else -1
nGH = len(GHp) if m > 0 and stacked else -1
if m > 0:
    pattern_array('G', Gp, 1)
    if stacked:
        pattern_array('GH', GHp, 2)
src.append('int odepkg_nnz(int which) {\n  return which == 0 ? %d : which == 1 ? %d : which == 2 ? %d : -1;\n}' % (len(hp), nG, nGH))
src.append('void odepkg_pattern(int which, int *rows, int *cols) {\n'
           '  const int n = odepkg_nnz(which);\n'
           '  const int *r = which == 0 ? hess_rows : %s, *c = which == 0 ? hess_cols : %s;\n'
           '  if (n > 0) { memcpy(rows, r, n * sizeof(int)); memcpy(cols, c, n * sizeof(int)); }\n}'
           % ('which == 1 ? G_rows : ' + ('GH_rows' if nGH >= 0 else 'hess_rows') if m > 0 else 'hess_rows',
              'which == 1 ? G_cols : ' + ('GH_cols' if nGH >= 0 else 'hess_cols') if m > 0 else 'hess_cols'))
hpos = {rc: n for n, rc in enumerate(hp)}
Gpos = {rc: n for n, rc in enumerate(Gp)}
GHpos = {rc: n for n, rc in enumerate(GHp)}
fpos = lambda F, k: (lambda row, vs: vs[k] - d) if F.roles[k] == 'p' else (lambda row, vs: d + vs[k])
kernel('odepkg_H', tf, [H], sub, family_loops('odepkg_H', Hfam, lambda F: [(F.value, lambda row, vs: 0)], sub, '+='))
kernel('odepkg_f', tf, f, sub, family_loops('odepkg_f', Hfam, lambda F: [
    (e if F.roles[k] == 'p' else -e, fpos(F, k)) for k, e in F.grad.items()], sub, '+='))
kernel('odepkg_hess', tf, [hess[k] for k in hp], sub, family_loops('odepkg_hess', Hfam, lambda F: [
    (e, (lambda a, b: lambda row, vs: hpos[(vs[a], vs[b])])(a, b)) for (a, b), e in F.hess.items()], sub, '+='))
if m > 0:
    kernel('odepkg_g', cf, [sp.S.Zero if e is None else e for e in g], qsub,
           family_loops('odepkg_g', gfam, lambda F: [(F.value, lambda row, vs: row)], qsub, '='))
    kernel('odepkg_G', cf, [G[k] for k in Gp], qsub, family_loops('odepkg_G', gfam, lambda F: [
        (e, (lambda j: lambda row, vs: Gpos[(row, vs[j])])(j)) for j, e in F.grad.items()], qsub, '='))
    if stacked:
        kernel('odepkg_GH', cf, [GH[k] for k in GHp], qsub, family_loops('odepkg_GH', gfam, lambda F: [
            (e, (lambda a, b: lambda row, vs: GHpos[(vs[a], row * nc + vs[b])])(a, b)) for (a, b), e in F.hess.items()], qsub, '='))
# the fields shown: the first LIMIT entries, the families' members written out
for F in Hfam:
    for n, (row, vs) in enumerate(F.members):
        for k, e in F.grad.items():
            i = fpos(F, k)(row, vs)
            if i < LIMIT:
                f[i] = f[i] + F.at(e if F.roles[k] == 'p' else -e, n)
for F in gfam:
    for n, (row, vs) in enumerate(F.members):
        if row < LIMIT:
            g[row] = F.at(F.value, n)
            for j, e in F.grad.items():
                G[(row, vs[j])] = F.at(e, n)
g = [sp.S.Zero if e is None else e for e in g]
if Hfam:
    H = '%d terms (%d in %d folded families)' % (nterms, sum(len(F.members) for F in Hfam), len(Hfam))
show = lambda v: '\n'.join(str(e) for e in v[:LIMIT]) + ('\n... (%d more)' % (len(v) - LIMIT) if len(v) > LIMIT else '')
Gshow = ['G(%d,%d) = %s' % (k + 1, j + 1, G[(k, j)]) for k, j in sorted(G)[:LIMIT]] + ([''] * max(len(G) - LIMIT, 0))
return ('', '', '\n'.join(src) + '\n', separable, quadratic, (H if isinstance(H, str) else str(H) if len(H.args) < LIMIT else '%d terms' % len(H.args)), show(f[:LIMIT] + [''] * max(len(f) - LIMIT, 0)), show(g[:LIMIT] + [''] * max(len(g) - LIMIT, 0)), show(Gshow), len(hp), max(nG, 0), nGH, m,
        '\n'.join(qn), '\n'.join(pn), '\n'.join(parn))
