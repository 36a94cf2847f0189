"""sluice.node: the Python record of every operator node, and how a pipeline adopts one.

Each operator call (fn.*, an ops.* object, DataNode arithmetic and indexing, external_source,
a constant) makes a Node: the operator, the node's name, its device (given, and where it runs),
its inputs and argument inputs (DataNodes) and its constant arguments.

- Inside a pipeline definition (a current pipeline: ``with pipe:``, @pipeline_def,
  define_graph) the node is recorded into that pipeline's C graph at once: Graph.add_node
  checks it against the operator's schema, places it and names it ("<op>_<k>" when no name
  was given).
- Outside one, as DALI allows, the node belongs to no pipeline yet. Graph.check_node runs the
  same checks (the schema; the placement rule over its inputs' devices), so a bad call fails
  where it is made, in the same words. Until a pipeline adopts it, it is called by the name
  given or "<op>_<k>" with k counted over the process.

A pipeline adopts a node when one of its outputs (set_outputs, define_graph, @pipeline_def),
or a node recorded into it, reaches the node: the producers first, then the node, are replayed
into its graph from their records (add_node checks them again; the result is the same). The
pipeline keeps the name each node has in its graph: the given name, or a fresh "<op>_<k>" of
that graph for a node that was given none (so the seeds derived from node names do not depend
on what else the process created). A node may be adopted by several pipelines, each holding
its own copy: one ``fn.random.coin_flip(seed=1)`` feeds two pipelines built from it. A node
with side effects, or ``preserve=True``, needs a current pipeline (no output would reach it),
as in DALI.

An external_source call with a Python ``source`` is a Group of its nodes (one per output): the
pipeline that adopts one of them adopts them all and makes its own Source for them (its own
pass over the source, its own epochs). A python_function node carries its function
(``callback``): every pipeline that holds the node registers it for its copy.
Invariant: what a Node records (operator, inputs, arguments, device) never changes once it is
made; only its name (set once, by the first graph that names it), its placement (set once) and
its home are filled in later. Records refer to their producers, and to a pipeline only weakly,
so no cycle keeps a pipeline alive.
"""
import contextlib
import itertools
import weakref

from . import _sluice

_detached_names = itertools.count()


class Node:
    """One operator node. ``name``: its name (see the module comment); ``placed``: where it
    runs ("cpu", "mixed", "gpu"); ``inputs`` / ``arg_inputs``: DataNodes; ``args``: constant
    arguments as the C graph takes them."""

    __slots__ = ("op", "name", "auto", "named", "device", "placed", "inputs", "args",
                 "arg_inputs", "group", "callback", "_home")

    def __init__(self, op, name, device, inputs, args, arg_inputs):
        self.op, self.device = op, device
        self.auto = name is None  # every graph names it ("<op>_<k>" of that graph)
        self.named = not self.auto  # name final: given, or set by the first graph
        self.name = f"{op}_{next(_detached_names)}" if self.auto else name
        self.inputs, self.args, self.arg_inputs = inputs, args, arg_inputs
        self.placed = None
        self.group = None   # a Group, for the nodes of an external_source with a source
        self.callback = None  # python_function: its function (sluice.python_function.Spec)
        self._home = None   # weakref to the pipeline it was recorded in when made

    @property
    def home(self):
        """The pipeline whose definition made it, or None (made outside any)."""
        return self._home() if self._home is not None else None

    def producers(self):
        return [x._node for x in list(self.inputs) + list(self.arg_inputs.values())]


class Group:
    """The nodes of one external_source call with a source; make(pipe, names) returns the
    Source (or ParallelSource) that feeds them in pipeline ``pipe``, where they are named
    ``names``."""

    __slots__ = ("nodes", "make")

    def __init__(self, nodes, make):
        self.nodes, self.make = nodes, make
        for n in nodes:
            n.group = self


def make(op, name, device, inputs, args, arg_inputs, flags):
    """A node of op, recorded into the current pipeline, or checked and left detached when
    there is none. Raises the C checks' errors, and RuntimeError for an operator with side
    effects (or preserve=True) outside a pipeline definition."""
    from .pipeline import Pipeline

    # DALI's deprecated argument names: the current ones, once, with a DeprecationWarning
    args, arg_inputs = _sluice.resolve_aliases(op, name, args, arg_inputs)
    pipe = Pipeline.current()
    stack = getattr(pipe, "_cond_stack", None)
    if stack is not None:  # conditionals: inputs from outer scopes split (sluice._conditionals)
        inputs, arg_inputs = stack.inputs(inputs, arg_inputs)
    node = Node(op, name, device, inputs, args, arg_inputs)
    if pipe is not None:
        record(pipe, node)
        if stack is not None:
            stack.produced(node, bool(inputs or arg_inputs))
        return node
    if "side_effects" in flags or args.get("preserve"):
        raise RuntimeError(
            f"Current Pipeline not set: fn.{op} has side effects (or preserve=True), so it must "
            "be called while a pipeline is being defined: inside define_graph, a @pipeline_def "
            "function, `with pipe:`, or after Pipeline.push_current(pipe)")
    _check(node)
    return node


def record(pipe, node):
    """Records a new node into pipe's graph, its producers adopted first. A node that fails
    its checks adds nothing: one with producers to adopt is checked before they are (all but a
    name already taken, which only the graph knows: its producers then stay, unused, and the
    build prunes them)."""
    missing = [p for p in node.producers() if p not in pipe._names]
    if missing:
        _check(node)
    for p in missing:
        adopt(pipe, p)
    _add(pipe, node)
    node._home = weakref.ref(pipe)


def _check(node):
    node.placed = _sluice.Graph.check_node(
        node.op, node.name, node.device, [x.name for x in node.inputs],
        [x.device for x in node.inputs], node.args,
        {k: v.name for k, v in node.arg_inputs.items()})


@contextlib.contextmanager
def detached():
    """Within it, operators make detached nodes even while a pipeline is being defined: for
    the constants sluice makes from values given where a DataNode is expected, which their
    consumer's graph then adopts (so a call that fails records none of them)."""
    from .pipeline import Pipeline

    Pipeline.push_current(None)
    try:
        yield
    finally:
        Pipeline.pop_current()


def ref(pipe, data_node):
    """The reference ("name:k") of a DataNode in pipe's graph, adopting its node if needed."""
    return f"{adopt(pipe, data_node._node)}:{data_node.index}"


def name_in(pipe, data_node):
    """The name of data_node's node in pipe's graph (its own name if pipe never adopted it)."""
    return pipe._names.get(data_node._node, data_node._node.name)


def adopt(pipe, node):
    """Replays node, and whatever it reads that pipe's graph lacks, into pipe's graph; then
    gives every external_source group met its Source in pipe. Returns node's name there."""
    names = pipe._names
    if node in names:
        return names[node]
    groups = []
    stack = [(node, False)]
    while stack:  # depth first, producers before their consumers; no recursion limit
        n, ready = stack.pop()
        if n in names:
            continue
        if ready:
            _add(pipe, n)
            if n.op == "external_source" or n.op.startswith("readers."):
                # a source made outside the definition: its state is not the pipeline's to
                # checkpoint (Pipeline.build refuses it with enable_checkpointing, as DALI)
                pipe._adopted_sources.append(names[n])
            if n.group is not None:
                groups.append(n.group)
            continue
        stack.append((n, True))
        stack.extend((p, False) for p in reversed(n.producers()) if p not in names)
    for g in groups:
        register(pipe, g)
    return names[node]


def register(pipe, group):
    """Gives pipe a Source for group (once), adopting every node of the group first."""
    if group in pipe._groups:
        return
    for n in group.nodes:
        if n not in pipe._names:
            _add(pipe, n)  # a source: no producers
    pipe._add_source(group.make(pipe, [pipe._names[n] for n in group.nodes]))
    pipe._groups.add(group)


def register_callback(pipe, node):
    """Gives pipe the function of python_function node `node` (node.callback), registered
    with the C pipeline when it is created (Pipeline._c_pipeline)."""
    if pipe._cpipe is not None:
        raise RuntimeError("python_function: the pipeline is built (or serialized) already; "
                           "its operators must be made before")
    pipe._callbacks[pipe._names[node]] = node.callback


def _add(pipe, node):
    names = pipe._names
    refs = [f"{names[x._node]}:{x.index}" for x in node.inputs]
    arg_refs = {k: f"{names[x._node]}:{x.index}" for k, x in node.arg_inputs.items()}
    name, placed = pipe._graph.add_node(node.op, None if node.auto else node.name, node.device,
                                        refs, node.args, arg_refs)
    names[node] = name
    if node.callback is not None:  # adopted: this pipeline calls the function too
        register_callback(pipe, node)
    if not node.named:
        node.name, node.named = name, True  # the first graph to name it gives its name
    if node.placed is None:
        node.placed = placed


def holds_data_node(x):
    """Whether x is a DataNode or a list or tuple holding one, at any depth."""
    from .data_node import DataNode

    return isinstance(x, DataNode) or (
        isinstance(x, (list, tuple)) and any(holds_data_node(e) for e in x))


def outputs(values):
    """A pipeline's outputs as DataNodes, DALI's rules: a constant becomes a constant node on
    the CPU; a list or tuple holding DataNodes is a TypeError (an output is one DataNode: the
    list wanted unpacking), anything else too."""
    from . import types
    from .data_node import DataNode

    result = []
    for k, o in enumerate(values):
        if isinstance(o, DataNode):
            result.append(o)
            continue
        if holds_data_node(o):
            raise TypeError(f"Illegal pipeline output type. The output {k} contains a nested "
                            "`DataNode`: an output is one DataNode; unpack the list or tuple "
                            "(set_outputs(*nodes)), which is the likely cause")
        try:
            with detached():
                result.append(types.Constant(o, device="cpu"))
        except TypeError:
            raise TypeError(f"Illegal output type. The output {k} is a `{type(o)}`. An output "
                            "is a DataNode or a constant (a number, a list of numbers, a NumPy "
                            "array, types.Constant)") from None
    return result
