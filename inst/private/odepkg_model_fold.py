# odepkg_model_fold.py: repeated structure in a model given as strings (the
# links of a chain, the bonds of a lattice), derived once and generated as
# a loop.  Read before odepkg_model_derive.py into the same SymPy call.
#
# A term of H, or a constraint g_k, is written with its variables replaced
# by placeholders numbered in the order they first appear:
# (x7 - x6)^2 + (y7 - y6)^2 - 1 and (x3 - x2)^2 + ... both read
# (V0 - V1)^2 + (V2 - V3)^2 - 1, with V = (x_i, x_{i-1}, y_i, y_{i-1}).
# Entries with the same text and the same roles (q or p) of their
# placeholders form a family: SymPy derives its template once (value,
# gradient, Hessian in the placeholders), and the C kernel runs a loop over
# the members, reading x at each member's indices and writing each output
# at its position in the model's global (sparse) pattern.  Index and
# position sequences that are affine in the member's number (a chain's)
# are written as arithmetic, others as tables.  The derivation's cost is
# then linear in the model's size with a small constant (Python integer
# work per member, SymPy work per family), not SymPy's cost per entry.
import re as _re
FOLD_MIN = 8                         # members for a family to be folded
PH = '_odepkg_v%d'                   # placeholder names (C identifiers too)
_ident = _re.compile(r'[A-Za-z_]\w*')

def split_terms(text):
    # the top-level terms of a sum, each with its sign (the rule of parse)
    t = text.replace('^', '**')
    cuts, depth, prev = [0], 0, ''
    for i, c in enumerate(t):
        if c in '([':
            depth += 1
        elif c in ')]':
            depth -= 1
        elif c in '+-' and depth == 0 and (prev.isalnum() or prev in '_)') and prev not in 'eE':
            cuts.append(i)
        if not c.isspace():
            prev = c
    cuts.append(len(t))
    return [x for x in (t[a:b].strip().lstrip('+').strip() for a, b in zip(cuts, cuts[1:])) if x]

def template(text, zi):
    # (text with placeholders, global indices of its variables in the order
    # of their first appearance: the order of a sprintf's arguments, however
    # q and p are listed)
    vs = tuple(dict.fromkeys(zi[n] for n in _ident.findall(text) if n in zi))
    rank = {v: k for k, v in enumerate(vs)}
    tpl = _ident.sub(lambda mt: PH % rank[zi[mt.group(0)]] if mt.group(0) in zi else mt.group(0), text)
    return tpl.replace(' ', ''), vs

def group(texts, zi, d):
    # {(template, roles): [(position in texts, indices)]}, in order of first appearance
    fam = {}
    for n, text in enumerate(texts):
        tpl, vs = template(text, zi)
        roles = ''.join('q' if v < d else 'p' for v in vs)
        fam.setdefault((tpl, roles), []).append((n, vs))
    return fam

class Family:
    # a template T(V_0, ..., V_{r-1}) with its members' global indices
    def __init__(self, tpl, roles, members, value):
        self.tpl, self.roles, self.members = tpl, roles, members
        self.V = [sp.Symbol(PH % k, real=True) for k in range(len(roles))]
        self.value = value
        self.grad = {}
        for k, v in enumerate(self.V):
            e = sp.diff(value, v)
            if e != 0:
                self.grad[k] = e
        self.hess = {}
        for k, e in self.grad.items():
            for l, v in enumerate(self.V):
                w = sp.diff(e, v)
                if w != 0:
                    self.hess[(l, k)] = w
    def at(self, e, n):
        # e (a template expression) written on member n's own symbols
        return e.xreplace({v: zsym[i] for v, i in zip(self.V, self.members[n][1])})

def affine(seq):
    # (a, s) with seq[i] = a + s i for every i, or None
    a = seq[0]
    s = seq[1] - a if len(seq) > 1 else 0
    for i, v in enumerate(seq):
        if v != a + s * i:
            return None
    return a, s

class Loop:
    # C of a loop over a family's members: out[pos(i)] op= expr(x[idx(i)])
    def __init__(self, name, fam, exprs, positions, slots, sub, op):
        # exprs: template expressions; positions: per expression, the output
        # position of each member; slots: per placeholder, x's index of each member
        self.name, self.count, self.op = name, len(fam.members), op
        self.tables, self.idx = [], []
        for k, seq in enumerate(slots):
            self.idx.append(self.index_expr('%s_x%d' % (name, k), seq))
        self.pos = [self.index_expr('%s_o%d' % (name, k), seq) for k, seq in enumerate(positions)]
        self.exprs = [e.xreplace(sub) for e in exprs]
        self.V = fam.V
    def index_expr(self, label, seq):
        af = affine(seq)
        if af is not None:
            a, s = af
            return '%d' % a if s == 0 else '%d + %d * i' % (a, s)
        self.tables.append('static const int %s[] = {%s};' % (label, ', '.join(map(str, seq))))
        return '%s[i]' % label
    def c(self, args):
        used = set()
        for e in self.exprs:
            used |= e.free_symbols
        reps, red = sp.cse(self.exprs, symbols=sp.numbered_symbols('w')) if self.exprs else ([], [])
        body = ['    const double %s = x[%s];' % (v.name, ix) for v, ix in zip(self.V, self.idx) if v in used]
        body += ['    const double %s = %s;' % (w, ccode(e)) for w, e in reps]
        body += ['    out[%s] %s %s;' % (p, self.op, ccode(e)) for p, e in zip(self.pos, red)]
        return ('\n'.join(self.tables) + ('\n' if self.tables else '') +
                'static void %s(%s) {\n  (void)x; (void)par;\n  for (int i = 0; i < %d; ++i) {\n%s\n  }\n}'
                % (self.name, args, self.count, '\n'.join(body)))
