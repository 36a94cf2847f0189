"""sluice._convert: the source transformation behind ``enable_conditionals=True``.

``convert(func)`` returns func recompiled from its own source (found through its code object's
file and first line, parsed with ``ast``) with its original globals, closure cells and
defaults, after these rewrites (sluice._conditionals runs them; the converted code refers to
that module as the free variable ``__sl_ag__``):

- ``if test: A else: B`` becomes::

      with __sl_ag__.if_stmt(test, line, file, names, live, (lambda: v1, ...)) as __sl_if_k:
          if __sl_if_k.true():
              A
              if __sl_if_k.traced: (v1, ...) = __sl_if_k.end_true()
          if __sl_if_k.false():
              B
              if __sl_if_k.traced: (v1, ...) = __sl_if_k.end_false()

  names: the variables (and attributes ``obj.attr``) assigned in A or B; live: whether each is
  read after the ``if`` (a simple dataflow over the statements that follow, conservative inside
  loops). A Python test runs exactly one branch and assigns nothing more; a DataNode test
  traces both and merges (sluice._conditionals.IfStmt).
- ``a and b``, ``a or b`` become ``and_(lambda: a, lambda: b, text, line)`` / ``or_``
  (lazy; a DataNode left side makes a per-sample conditional), ``not a`` ``not_(a)``,
  ``x if c else y`` ``if_exp(c, lambda: x, lambda: y, line)``. Expressions holding ``:=``
  are left alone (a lambda would scope the name).
- every call ``f(...)`` becomes ``cc(f)(...)``: a user function called from converted code is
  converted too (as autograph does), unless marked ``@do_not_convert`` or from a library
  (sluice, the standard library, site/dist-packages).
- a function whose ``return`` sits inside an ``if`` is first rewritten so that every path
  assigns ``__sl_ret`` and one ``return`` ends it (the statements after such an ``if`` move
  into the branches that do not return). Returns inside loops, ``with`` or ``try`` are left as
  they are; taken while tracing a DataNode ``if`` they are an error naming the line.

Nested functions and lambdas in converted code are converted with it; functions are marked
(``is_autograph_artifact``). A function whose source cannot be found or parsed runs
unconverted.
"""
import ast
import copy
import functools
import inspect
import linecache
import os
import site
import sysconfig
import types
import weakref

from . import _conditionals

_AG = "__sl_ag__"
_RET = "__sl_ret"
_ARTIFACT = "__sl_converted__"
_NO_CONVERT = "__sl_do_not_convert__"


def do_not_convert(func=None):
    """Decorator: the function runs as written when called from a pipeline definition with
    conditionals (its ``if`` on DataNodes are then errors, its ``and``/``or`` Python's)."""
    if func is None:
        return do_not_convert
    try:
        setattr(func, _NO_CONVERT, True)
    except AttributeError:
        pass
    return func


def is_autograph_artifact(func):
    """Whether func was made by the conversion (DALI's name)."""
    return bool(getattr(func, _ARTIFACT, False))


def mark(func):
    """Decorator the converted code puts on its nested functions."""
    try:
        setattr(func, _ARTIFACT, True)
    except AttributeError:
        pass
    return func


# ---- which functions are converted ----------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _library_dirs():
    dirs = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            dirs.add(os.path.realpath(p))
    try:
        dirs.update(os.path.realpath(p) for p in site.getsitepackages())
    except AttributeError:
        pass
    dirs.add(os.path.realpath(os.path.dirname(__file__)))  # sluice itself
    return tuple(d + os.sep for d in dirs)


def _user_code(func):
    code = getattr(func, "__code__", None)
    if code is None or getattr(func, _NO_CONVERT, False) or getattr(func, _ARTIFACT, False):
        return False
    if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return False
    mod = (getattr(func, "__module__", None) or "").split(".")[0]
    if mod in ("sluice", "numpy", "torch", "nvidia"):
        return False
    path = os.path.realpath(code.co_filename)
    return not path.startswith(_library_dirs())


_cache = weakref.WeakKeyDictionary()


def cc(func):
    """func, converted when it is user code (cached); anything else as it is."""
    if isinstance(func, types.MethodType):
        conv = cc(func.__func__)
        return func if conv is func.__func__ else types.MethodType(conv, func.__self__)
    if not isinstance(func, types.FunctionType) or not _user_code(func):
        return func
    try:
        return _cache[func]
    except KeyError:
        pass
    conv = convert(func, strict=False)
    _cache[func] = conv
    return conv


# ---- finding the source ---------------------------------------------------------------------

_trees = {}


def _module_tree(filename):
    lines = linecache.getlines(filename)
    if not lines:
        return None
    text = "".join(lines)
    hit = _trees.get(filename)
    if hit is not None and hit[0] == text:
        return hit[1]
    try:
        tree = ast.parse(text, filename)
    except SyntaxError:
        return None
    _trees[filename] = (text, tree)
    return tree


def _find_def(func):
    """The ast node of func's definition (a FunctionDef, or a Lambda), or None."""
    code = func.__code__
    tree = _module_tree(code.co_filename)
    if tree is None:
        return None
    line = code.co_firstlineno
    params = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = []
    for node in ast.walk(tree):
        if code.co_name == "<lambda>" and isinstance(node, ast.Lambda):
            if node.lineno == line and [a.arg for a in _all_args(node.args)] == params[
                    :len(_all_args(node.args))]:
                found.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name == code.co_name:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            if line in (first, node.lineno):
                found.append(node)
    if len(found) > 1 and code.co_name == "<lambda>":
        found = _by_columns(code, found)
    return found[0] if len(found) == 1 else None


def _by_columns(code, lambdas):
    """The lambdas (of one line) whose source columns hold code's instructions, innermost."""
    try:
        cols = [(p[0], p[2], p[3]) for p in code.co_positions()
                if None not in (p[0], p[2], p[3]) and p[2] != p[3]]
    except AttributeError:  # before Python 3.11
        return lambdas
    if not cols:
        return lambdas

    def holds(node):
        return all((node.lineno, node.col_offset) <= (ln, c) and
                   (ln, e) <= (node.end_lineno, node.end_col_offset) for ln, c, e in cols)

    hits = [n for n in lambdas if holds(n)]
    hits.sort(key=lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset))
    return hits[:1]


def _all_args(a):
    return a.posonlyargs + a.args + ([a.vararg] if a.vararg else []) + a.kwonlyargs + (
        [a.kwarg] if a.kwarg else [])


# ---- analysis: assigned symbols, liveness ------------------------------------------------------

def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id] + parts[::-1])


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_EXPR_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _stores(node, out):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _SCOPES):
            out.append(child.name)
            continue
        if isinstance(child, _EXPR_SCOPES):
            continue
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            out.append(child.id)
        elif isinstance(child, ast.Attribute) and isinstance(child.ctx, ast.Store):
            d = _dotted(child)
            if d:
                out.append(d)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            out.extend((a.asname or a.name).split(".")[0] for a in child.names)
        elif isinstance(child, ast.ExceptHandler) and child.name:
            out.append(child.name)
        _stores(child, out)


def _assigned(stmts):
    out = []
    holder = ast.Module(body=list(stmts), type_ignores=[])
    _stores(holder, out)
    seen, result = set(), []
    for s in out:
        if s not in seen and not s.startswith("__sl_if_"):
            seen.add(s)
            result.append(s)
    return result


def _loads(node, name):
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               for n in ast.walk(node))


def _effect(stmt, base, dotted):
    """'read' when stmt may read the symbol before writing it, 'kill' when it surely writes
    it first, None when it does neither."""
    if not dotted and isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
        if _loads(stmt.value, base):
            return "read"
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(_loads(t, base) for t in targets):
            return "read"
        names = [n.id for t in targets for n in ast.walk(t)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        return "kill" if base in names else None
    return "read" if _loads(stmt, base) else None


def _live(sym, cont):
    base, dotted = sym.split(".")[0], "." in sym
    for stmts in cont:
        for s in stmts:
            e = _effect(s, base, dotted)
            if e == "read":
                return True
            if e == "kill":
                return False
    return False


def _annotate(stmts, cont):
    """Stores on each If of the block (not in nested functions) its symbols and liveness."""
    for i, s in enumerate(stmts):
        c = [stmts[i + 1:]] + cont
        if isinstance(s, ast.If):
            syms = _assigned(s.body + s.orelse)
            s._sl_syms = syms
            s._sl_live = [_live(x, c) for x in syms]
            _annotate(s.body, c)
            _annotate(s.orelse, c)
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            _annotate(s.body, [[s]] + c)
            _annotate(s.orelse, c)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            _annotate(s.body, c)
        elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            _annotate(s.body, [s.orelse, s.finalbody] + c)
            for h in s.handlers:
                _annotate(h.body, [s.finalbody] + c)
            _annotate(s.orelse, [s.finalbody] + c)
            _annotate(s.finalbody, c)
        elif isinstance(s, ast.Match):
            for case in s.cases:
                _annotate(case.body, c)


# ---- return lowering -------------------------------------------------------------------------

class _CannotLower(Exception):
    pass


def _returns_in(node):
    """Whether node holds a return (not in nested functions or classes)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Return):
            return True
        stack.extend(c for c in ast.iter_child_nodes(n) if not isinstance(c, _SCOPES + (
            ast.Lambda,)))
    return False


def _lower(stmts):
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.Return):
            value = s.value if s.value is not None else ast.Constant(None)
            out.append(ast.copy_location(
                ast.Assign(targets=[ast.Name(_RET, ast.Store())], value=value), s))
            return out
        if isinstance(s, ast.If) and _returns_in(s):
            rest = stmts[i + 1:]
            s.body = _lower(s.body + copy.deepcopy(rest))
            s.orelse = _lower(s.orelse + rest)
            out.append(s)
            return out
        if _returns_in(s):
            raise _CannotLower()
        out.append(s)
    return out


def _lower_returns(fdef):
    body = fdef.body
    needs = any(_returns_in(s) for s in body if not isinstance(s, ast.Return))
    if not needs or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(fdef)):
        return
    try:
        lowered = _lower(copy.deepcopy(body))
    except _CannotLower:
        return
    first = body[0]
    init = ast.copy_location(ast.Assign(
        targets=[ast.Name(_RET, ast.Store())],
        value=ast.Attribute(ast.Name(_AG, ast.Load()), "UNDEFINED_RETURN", ast.Load())), first)
    last = body[-1]
    ret = ast.Return(ast.Call(ast.Attribute(ast.Name(_AG, ast.Load()), "retval", ast.Load()),
                              [ast.Name(_RET, ast.Load())], []))
    ret = ast.copy_location(ret, last)
    doc = [body[0]] if (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                        and isinstance(body[0].value.value, str)) else []
    fdef.body = doc + [init] + lowered[len(doc):] + [ret]


# ---- the rewriting -------------------------------------------------------------------------

def _ag(attr):
    return ast.Attribute(ast.Name(_AG, ast.Load()), attr, ast.Load())


def _thunk(expr):
    return ast.Lambda(ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                    kw_defaults=[], kwarg=None, defaults=[]), expr)


def _sym_expr(sym, ctx):
    parts = sym.split(".")
    node = ast.Name(parts[0], ast.Load() if len(parts) > 1 else ctx)
    for k, p in enumerate(parts[1:]):
        node = ast.Attribute(node, p, ctx if k == len(parts) - 2 else ast.Load())
    return node


def _has_walrus(node):
    return any(isinstance(n, ast.NamedExpr) for n in ast.walk(node))


_PLAIN_CALLS = {"super", "locals", "globals", "vars", "eval", "exec", "dir"}


class _Rewriter(ast.NodeTransformer):
    def __init__(self, filename):
        self.filename = filename
        self.count = 0

    def function(self, fdef):
        _lower_returns(fdef)
        _annotate(fdef.body, [])
        fdef.body = [self.visit(s) for s in fdef.body]
        fdef.body = [x for s in fdef.body for x in (s if isinstance(s, list) else [s])]

    def visit_FunctionDef(self, node):
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.decorator_list.append(_ag("mark"))
        self.function(node)
        return node

    def visit_AsyncFunctionDef(self, node):
        return node

    def visit_ClassDef(self, node):
        return node

    def visit_If(self, node):
        syms, live = getattr(node, "_sl_syms", []), getattr(node, "_sl_live", [])
        self.generic_visit(node)
        self.count += 1
        var = f"__sl_if_{self.count}"
        line = node.lineno
        call = ast.Call(_ag("if_stmt"), [
            node.test, ast.Constant(line), ast.Constant(self.filename),
            ast.Tuple([ast.Constant(s) for s in syms], ast.Load()),
            ast.Tuple([ast.Constant(x) for x in live], ast.Load()),
            ast.Tuple([_thunk(_sym_expr(s, ast.Load())) for s in syms], ast.Load())], [])

        def end(which):
            c = ast.Call(ast.Attribute(ast.Name(var, ast.Load()), which, ast.Load()), [], [])
            st = (ast.Assign(targets=[ast.Tuple([_sym_expr(s, ast.Store()) for s in syms],
                                                ast.Store())], value=c)
                  if syms else ast.Expr(c))
            return ast.If(ast.Attribute(ast.Name(var, ast.Load()), "traced", ast.Load()),
                          [st], [])

        def branch(which, body, closer):
            test = ast.Call(ast.Attribute(ast.Name(var, ast.Load()), which, ast.Load()), [], [])
            return ast.If(test, (body or [ast.Pass()]) + [end(closer)], [])

        new = ast.With(items=[ast.withitem(call, ast.Name(var, ast.Store()))],
                       body=[branch("true", node.body, "end_true"),
                             branch("false", node.orelse, "end_false")])
        ast.copy_location(new, node)  # what is made here points at the if's line
        return ast.fix_missing_locations(new)

    def visit_BoolOp(self, node):
        if _has_walrus(node):
            return node
        text = ast.unparse(node)
        self.generic_visit(node)
        helper = "and_" if isinstance(node.op, ast.And) else "or_"
        values = node.values
        expr = values[-1]
        for v in reversed(values[:-1]):
            expr = ast.Call(_ag(helper), [_thunk(v), _thunk(expr), ast.Constant(text),
                                          ast.Constant(node.lineno),
                                          ast.Constant(self.filename)], [])
        return ast.fix_missing_locations(ast.copy_location(expr, node))

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        return ast.copy_location(ast.Call(_ag("not_"), [node.operand], []), node)

    def visit_IfExp(self, node):
        if _has_walrus(node):
            return node
        self.generic_visit(node)
        new = ast.Call(_ag("if_exp"), [node.test, _thunk(node.body), _thunk(node.orelse),
                                       ast.Constant(node.lineno), ast.Constant(self.filename)],
                       [])
        return ast.fix_missing_locations(ast.copy_location(new, node))

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _PLAIN_CALLS:
            return node
        node.func = ast.copy_location(ast.Call(_ag("cc"), [node.func], []), node.func)
        return ast.fix_missing_locations(node)


class _Helpers:
    """What ``__sl_ag__`` names in converted code."""

    if_stmt = staticmethod(_conditionals.if_stmt)
    and_ = staticmethod(_conditionals.and_)
    or_ = staticmethod(_conditionals.or_)
    not_ = staticmethod(_conditionals.not_)
    if_exp = staticmethod(_conditionals.if_exp)
    retval = staticmethod(_conditionals.retval)
    UNDEFINED_RETURN = _conditionals.UNDEFINED_RETURN
    cc = staticmethod(cc)
    mark = staticmethod(mark)


def _transform(func, node):
    """The converted function for func, whose definition is node (FunctionDef or Lambda)."""
    code = func.__code__
    filename = code.co_filename
    node = copy.deepcopy(node)
    rw = _Rewriter(filename)
    if isinstance(node, ast.Lambda):
        node.body = rw.visit(node.body)
        inner = ast.Return(node)
    else:
        node.decorator_list = []
        rw.function(node)
        # Another name inside the factory: the function's own name in its body (a recursive
        # call) must stay what it was (a global, or a cell of its closure), not a cell of the
        # factory's local.
        node.name = "__sl_converted"
        inner = node
    params = list(code.co_freevars) + [_AG]
    factory = ast.FunctionDef(
        name="__sl_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[inner] if isinstance(inner, ast.Return) else [inner, ast.Return(
            ast.Name(node.name, ast.Load()))],
        decorator_list=[], returns=None)
    module = ast.Module(body=[ast.copy_location(factory, node)], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, filename, "exec", dont_inherit=True)
    fcode = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    want = "<lambda>" if isinstance(node, ast.Lambda) else node.name
    new_code = next(c for c in fcode.co_consts
                    if isinstance(c, types.CodeType) and c.co_name == want)
    cells = dict(zip(code.co_freevars, func.__closure__ or ()))
    helper = types.CellType(_Helpers)
    closure = tuple(helper if n == _AG else cells[n] for n in new_code.co_freevars)
    conv = types.FunctionType(new_code, func.__globals__, func.__name__, func.__defaults__,
                              closure or None)
    conv.__kwdefaults__ = copy.copy(func.__kwdefaults__)
    functools.update_wrapper(conv, func)
    del conv.__wrapped__
    setattr(conv, _ARTIFACT, True)
    return conv


def _mangles(func):
    """Whether func, a method, names class-private attributes (``self.__x``): recompiled
    outside its class they would not be mangled, so it is left as it is."""
    owner = func.__qualname__.replace("<locals>.", "").rpartition(".")[0].split(".")[-1]
    if not owner:
        return False
    prefix = "_" + owner.lstrip("_") + "__"
    return any(n.startswith(prefix) for n in func.__code__.co_names + func.__code__.co_varnames)


def convert(func, strict=True):
    """func with its conditionals rewritten (see the module comment). A function whose source
    cannot be found or recompiled: itself when strict is False, else a warning and itself."""
    if isinstance(func, types.MethodType):
        return types.MethodType(convert(func.__func__, strict), func.__self__)
    if not isinstance(func, types.FunctionType) or getattr(func, _NO_CONVERT, False):
        return func
    if getattr(func, _ARTIFACT, False):
        return func
    node = _find_def(func)
    why = None
    if _mangles(func):
        node, why = None, "it uses private (name-mangled) attributes of its class"
    elif node is None:
        why = "its source code was not found"
    else:
        try:
            return _transform(func, node)
        except (SyntaxError, KeyError, StopIteration, ValueError, TypeError) as e:
            why = f"it could not be recompiled ({e})"
    if strict:
        import warnings

        warnings.warn(f"enable_conditionals: {func.__qualname__} runs unconverted: {why}; an "
                      "`if`, `and`, `or` or `not` on a DataNode in it fails", stacklevel=3)
    return func
