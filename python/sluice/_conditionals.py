"""sluice._conditionals: what a converted pipeline function calls at run time (DALI's
conditionals, issue 17).

sluice._convert rewrites a function's ``if``/``elif``/``else``, ``and``, ``or``, ``not``,
``x if c else y`` and calls into calls of this module (the converted code refers to it as
``__sl_ag__``). Each helper decides when it runs: a Python value as test gives Python's own
semantics (the branch not taken is not run, ``and``/``or`` return an operand), a DataNode
gives a conditional in the graph:

- ``if pred:`` pushes a scope on the pipeline's condition stack (``Stack``), traces the ``if``
  branch, then the ``else`` branch (from the variables' values before the ``if``), and merges
  every variable assigned in a branch and read after the ``if`` with ``_conditional.merge``.
- While a scope is open, every operator call (sluice.node.make calls ``Stack.inputs`` and
  ``Stack.produced``) has its inputs and argument inputs from outer scopes split by the
  scopes' predicates with ``_conditional.split`` on first use (cached per scope), as DALI
  does. Nodes without any input belong to the outermost scope (DALI's rule: a reader or a
  random generator called in a branch runs on the whole batch, its samples split on use).
- ``a and b`` is ``b if a else a`` and ``a or b`` is ``a if a else b``, per sample, the right
  side computed only for the samples that need it (``_conditional.validate_logical`` checks
  both sides); ``not a`` is ``_conditional.not_``.

Invariant: the stack's depth when a helper returns is the depth it found, also when the
branch raised; an ``if`` left by return/break/continue while tracing is an error (its
``with`` block's exit says so, naming the line).
"""
from .data_node import DataNode

# ---- values a variable has while it is not defined ------------------------------------------


class _Undefined:
    """The value of a variable that is not defined on some path (autograph's Undefined)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<undefined {self.name}>"


class _UndefinedReturn(_Undefined):
    pass


UNDEFINED_RETURN = _UndefinedReturn("return value")

_COMMON = ("Encountered inconsistent outputs out of the `if/else` control flow statement. "
           "Variables need to be initialized in every code path (both `if` branches).")


def retval(value):
    """The value a return-lowered function returns (None where no return ran)."""
    return None if value is UNDEFINED_RETURN else value


def _where(line, file):
    if line is None:
        return "(in the converted pipeline definition)"
    return f"(the `if` at {file}, line {line})" if file else f"(the `if` at line {line})"


def _load(thunk, name):
    try:
        return thunk()
    except (NameError, AttributeError):  # UnboundLocalError is a NameError
        return _Undefined(name)


# ---- the condition stack ----------------------------------------------------------------------

def _key(data_node):
    return (data_node._node, data_node.index)


class _Scope:
    """One open conditional: its predicate (a DataNode of the enclosing scope), the branch
    being traced (True, False, or None: neither, at the merge), the nodes made in each branch,
    and the splits of outer DataNodes made for it: {(node, index): (true half, false half)}."""

    __slots__ = ("predicate", "branch", "splits", "made")

    def __init__(self, predicate):
        self.predicate = predicate
        self.branch = None
        self.splits = {}
        self.made = {True: set(), False: set(), None: set()}

    def _made(self):
        if self.branch is None:
            return self.made[True] | self.made[False] | self.made[None]
        return self.made[self.branch]

    def has(self, dn):
        return dn._node in self._made() or (self.branch is not None and _key(dn) in self.splits)

    def get(self, dn):
        if dn._node in self._made():
            return dn
        return self.splits[_key(dn)][0 if self.branch else 1]


class Ops:
    """The graph operators the stack records (fn._conditional.*); a test may give others."""

    def __init__(self):
        self.count = 0

    def split(self, dn, predicate, line):
        from . import fn

        self.count += 1
        return fn._conditional.split(dn, predicate=predicate,
                                     name=f"__Split_{self.count}_line_{line}")

    def merge(self, true, false, predicate, line):
        from . import fn

        self.count += 1
        return fn._conditional.merge(true, false, predicate=predicate,
                                     name=f"__Merge_{self.count}_line_{line}")

    def validate_logical(self, value, name, side):
        from . import fn

        return fn._conditional.validate_logical(value, expression_name=name,
                                                expression_side=side)

    def not_(self, value):
        from . import fn

        return fn._conditional.not_(value)


class Stack:
    """A pipeline's open conditionals while its definition is traced. Level 0 is the whole
    batch: a DataNode no scope knows belongs to it (made outside any scope, detached, or with
    no inputs)."""

    def __init__(self, ops=None):
        self.ops = ops if ops is not None else Ops()
        self.scopes = [_Scope(None)]
        self.lines = [None]      # the line of each open conditional (for node names, errors)
        self.scoped = set()      # nodes ever made inside a scope
        self.internal = 0        # >0 while the stack records its own split/merge nodes

    @property
    def depth(self):
        return len(self.scopes)

    def _find(self, dn):
        for level in range(self.depth - 1, 0, -1):
            if self.scopes[level].has(dn):
                return level
        if dn._node in self.scoped:
            raise RuntimeError(
                f"{dn!r} was made inside a branch of a conditional that is not open here: a "
                "DataNode made in an `if` (or `else`) branch can be used after the `if` only "
                "through a variable assigned in both branches, and not in the other branch")
        return 0

    def preprocess(self, dn):
        """dn as seen in the current branch: itself when made there, else its half from the
        splits by the predicates of the scopes between where it was made and here (made on
        first use, cached per scope)."""
        level = self._find(dn)
        top = self.depth - 1
        if level == top:
            return self.scopes[top].get(dn) if top else dn
        cur = self.scopes[level].get(dn) if level else dn
        for lv in range(level + 1, top + 1):
            scope = self.scopes[lv]
            hit = scope.splits.get(_key(cur))
            if hit is None:
                self.internal += 1
                try:
                    hit = tuple(self.ops.split(cur, scope.predicate, self.lines[lv]))
                finally:
                    self.internal -= 1
                scope.splits[_key(cur)] = hit
                scope.made[True].add(hit[0]._node)
                scope.made[False].add(hit[1]._node)
                self.scoped.update((hit[0]._node, hit[1]._node))
            scope.splits[_key(dn)] = hit
            cur = hit[0] if scope.branch else hit[1]
        return cur

    def push(self, predicate, line):
        pred = self.preprocess(predicate)
        self.scopes.append(_Scope(pred))
        self.lines.append(line)
        return pred

    def pop(self):
        self.lines.pop()
        return self.scopes.pop()

    def unwind(self, depth):
        while self.depth > depth:
            self.pop()

    def branch(self, which):
        self.scopes[-1].branch = which

    def register(self, node):
        """node made in the current scope (it had inputs, or it is a merge of this level)."""
        if self.depth > 1:
            self.scopes[-1].made[self.scopes[-1].branch].add(node)
            self.scoped.add(node)

    # the hook of sluice.node.make
    def inputs(self, inputs, arg_inputs):
        if self.internal or self.depth == 1:
            return inputs, arg_inputs
        return ([self.preprocess(x) for x in inputs],
                {k: self.preprocess(v) for k, v in arg_inputs.items()})

    def produced(self, node, had_inputs):
        if not self.internal and had_inputs:
            self.register(node)

    def merge(self, true, false, predicate):
        self.internal += 1
        try:
            return self.ops.merge(true, false, predicate, self.lines[-1])
        finally:
            self.internal -= 1


def current_stack(what, line, file):
    """The condition stack of the pipeline being defined; an error when there is none."""
    from .pipeline import Pipeline

    pipe = Pipeline.current()
    stack = getattr(pipe, "_cond_stack", None)
    if stack is None:
        raise RuntimeError(
            f"{what} on a DataNode needs a pipeline defined with enable_conditionals=True "
            f"(pipeline_def(enable_conditionals=True) or Pipeline(enable_conditionals=True)) "
            f"and called while it is being defined {_where(line, file)}")
    return stack


def _check_predicate(pred, line, file):
    if pred.device != "cpu":
        raise RuntimeError(
            "Conditions inside `if` statements are restricted to scalar (0-d tensors) inputs, "
            "that are placed on CPU. Got a GPU input as a condition of the `if` statement "
            f"{_where(line, file)}. Named arguments inputs to operators must be CPU data "
            "nodes. However, a GPU data node was provided; use .cpu() or compute the "
            "predicate on the CPU")


# ---- branch outputs: structures of DataNodes and constants ------------------------------------

_DIVERGENT = ("Divergent data found in different branches of `if/else` control flow statement. "
              "Variables in all code paths are merged into common output batches. The values "
              "assigned to a given variable need to have the same nesting structure in every "
              "code path (both `if` branches).\nFor example, if we define a variable as a tuple "
              "in one branch, it must be defined as a tuple of the same length in the other "
              "branch - the contents of the tuples may be different. If we define a variable "
              "as a dictionary, the other branch must define it as a dictionary with the same "
              "set of keys, the values may be different.\n")


def _is_nest(x):
    return isinstance(x, (list, tuple, dict)) and not isinstance(x, DataNode)


def _map(f, x):
    if isinstance(x, dict):
        return type(x)((k, _map(f, x[k])) for k in x)
    if isinstance(x, (list, tuple)):
        items = [_map(f, e) for e in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    return f(x)


def _same_structure(a, b, name):
    if _is_nest(a) or _is_nest(b):
        if type(a) is not type(b):
            raise TypeError(f"{_DIVERGENT}The two structures don't have the same sequence type: "
                            f"variable '{name}' is a {type(a).__name__} in the `if` branch and "
                            f"a {type(b).__name__} in the `else` branch")
        if isinstance(a, dict):
            if set(a) != set(b):
                raise ValueError(
                    f"{_DIVERGENT}The two structures don't have the same nested structure. "
                    "The two dictionaries don't have the same set of keys. First structure "
                    f"has keys type=list str={list(map(str, a))}, while second structure has "
                    f"keys type=list str={list(map(str, b))} (variable '{name}')")
            for k in a:
                _same_structure(a[k], b[k], name)
        else:
            if len(a) != len(b):
                raise ValueError(
                    f"{_DIVERGENT}The two structures don't have the same nested structure: "
                    f"variable '{name}' has {len(a)} elements in the `if` branch and {len(b)} "
                    "in the `else` branch")
            for x, y in zip(a, b):
                _same_structure(x, y, name)


def _merge_nests(stack, a, b, predicate):
    if isinstance(a, dict):
        return type(a)((k, _merge_nests(stack, a[k], b[k], predicate)) for k in a)
    if isinstance(a, (list, tuple)) and not isinstance(a, DataNode):
        items = [_merge_nests(stack, x, y, predicate) for x, y in zip(a, b)]
        return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
    return stack.merge(a, b, predicate)


def _branch_value(stack, value):
    """A branch output as a DataNode of the current branch: a DataNode split as needed, a
    constant (a number, an array) promoted to a constant node first, as DALI does."""
    from . import types

    def one(x):
        if isinstance(x, DataNode):
            return stack.preprocess(x)
        if isinstance(x, types.ScalarConstant):
            node = types.Constant(x.value, dtype=x.dtype, device="cpu")
        else:
            node = types.Constant(x, device="cpu")
        return stack.preprocess(node)

    return _map(one, value)


# ---- if statements ------------------------------------------------------------------------------

class IfStmt:
    """One ``if`` statement of converted code: ``with if_stmt(...) as s: if s.true(): ...;
    if s.false(): ...`` (see sluice._convert). names: the variables assigned in its branches;
    live: for each, whether it is read after the ``if`` (only those are merged, and only
    those must be defined in both branches); thunks read their current values."""

    def __init__(self, test, line, file, names, live, thunks):
        self.line, self.file, self.names, self.live, self.thunks = line, file, names, live, thunks
        self.traced = isinstance(test, DataNode)
        self.finished = True
        if not self.traced:
            self.value = bool(test)
            return
        self.stack = current_stack("An `if`", line, file)
        _check_predicate(test, line, file)
        self.depth = self.stack.depth
        self.init = self._state()
        self.pred = self.stack.push(test, line)
        self.finished = False
        self.outputs = {}

    def _state(self):
        return tuple(_load(t, n) for t, n in zip(self.thunks, self.names))

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if self.traced and not self.finished:
            self.stack.unwind(self.depth)
            if kind is None:
                raise RuntimeError(
                    "`return`, `break` or `continue` inside a branch of an `if` whose condition "
                    f"is a DataNode {_where(self.line, self.file)} is not supported: every "
                    "code path must reach the end of the `if` (a `return` is supported where "
                    "every branch returns, outside loops and `with`/`try` blocks)")
            if hasattr(exc, "add_note"):
                exc.add_note(f"while tracing the conditional {_where(self.line, self.file)}")
        return False

    def true(self):
        if not self.traced:
            return self.value
        self.stack.branch(True)
        return True

    def false(self):
        if not self.traced:
            return not self.value
        self.stack.branch(False)
        return True

    def _outputs(self, which):
        state = self._state()
        name = "if" if which else "else"
        outs = []
        for n, live, v in zip(self.names, self.live, state):
            if not live:
                continue
            if isinstance(v, _UndefinedReturn):
                raise RuntimeError(f"{_COMMON} The `{name}` branch must also have a return "
                                   f"statement. {_where(self.line, self.file)}")
            if isinstance(v, _Undefined) or _has_undefined(v):
                raise RuntimeError(f"{_COMMON} Variable '{n}' must also be initialized in the "
                                   f"`{name}` branch. {_where(self.line, self.file)}")
            outs.append(_branch_value(self.stack, v))
        self.outputs[which] = outs

    def end_true(self):
        self._outputs(True)
        self.stack.branch(None)
        return self.init

    def end_false(self):
        self._outputs(False)
        stack = self.stack
        stack.branch(None)
        scope = stack.scopes[-1]
        scope.made[None].add(self.pred._node)
        merged = []
        live_names = [n for n, lv in zip(self.names, self.live) if lv]
        for n, t, f in zip(live_names, self.outputs[True], self.outputs[False]):
            _same_structure(t, f, n)
            merged.append(_merge_nests(stack, t, f, self.pred))
        stack.pop()
        self.finished = True
        _map(lambda dn: stack.register(dn._node), merged)
        it = iter(merged)
        return tuple(next(it) if lv else v for lv, v in zip(self.live, self.init))


def _has_undefined(v):
    found = []
    if _is_nest(v):
        _map(lambda x: found.append(x) if isinstance(x, _Undefined) else None, v)
    return bool(found)


def if_stmt(test, line, file, names, live, thunks):
    return IfStmt(test, line, file, names, live, thunks)


# ---- expressions --------------------------------------------------------------------------------

def _lazy(test, when_true, when_false, line, file):
    """A per-sample ``when_true() if test else when_false()`` for a DataNode test: each thunk
    traced in its branch (it runs for its samples only), the two merged."""
    stack = current_stack("A conditional expression", line, file)
    _check_predicate(test, line, file)
    depth = stack.depth
    try:
        pred = stack.push(test, line)
        stack.branch(True)
        t = _branch_value(stack, when_true(pred))
        stack.branch(False)
        f = _branch_value(stack, when_false(pred))
        stack.branch(None)
        stack.scopes[-1].made[None].add(pred._node)
        _same_structure(t, f, "<expression>")
        merged = _merge_nests(stack, t, f, pred)
        stack.pop()
    finally:
        stack.unwind(depth)
    _map(lambda dn: stack.register(dn._node), merged)
    return merged


def _validate_logical(value, name, side, text, line, file):
    stack = current_stack("A logical expression", line, file)
    if isinstance(value, DataNode) and value.device != "cpu":
        raise RuntimeError(
            f"Logical expression `{text}` is restricted to scalar (0-d tensors) inputs of "
            "`bool` type, that are placed on CPU. Got a GPU input as the "
            f"{side} argument in logical expression (line {line}).")
    return stack.ops.validate_logical(value, name, side)


def and_(left, right, text, line, file=None):
    """``left() and right()``: Python's for a Python left value; per sample for a DataNode."""
    a = left()
    if not isinstance(a, DataNode):
        return a and right()
    a = _validate_logical(a, "and", "left", text, line, file)
    return _lazy(a, lambda p: _validate_logical(right(), "and", "right", text, line, file),
                 lambda p: p, line, file)


def or_(left, right, text, line, file=None):
    """``left() or right()``: Python's for a Python left value; per sample for a DataNode."""
    a = left()
    if not isinstance(a, DataNode):
        return a or right()
    a = _validate_logical(a, "or", "left", text, line, file)
    return _lazy(a, lambda p: p,
                 lambda p: _validate_logical(right(), "or", "right", text, line, file),
                 line, file)


def not_(value):
    """``not value``: a ``_conditional.not_`` node for a DataNode."""
    if isinstance(value, DataNode):
        stack = current_stack("`not`", None, None)
        if value.device != "cpu":
            raise RuntimeError(
                "Logical expression `not` is restricted to scalar (0-d tensors) inputs, that "
                "are placed on CPU. Got a GPU input in logical expression.")
        return stack.ops.not_(value)
    return not value


def if_exp(test, when_true, when_false, line, file=None):
    """``when_true() if test else when_false()`` (sluice's addition: per sample for a DataNode
    test, DALI converts only statements)."""
    if not isinstance(test, DataNode):
        return when_true() if test else when_false()
    return _lazy(test, lambda p: when_true(), lambda p: when_false(), line, file)
