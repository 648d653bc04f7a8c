"""The source-to-source rewrite: a function's AST with its control flow made into calls.

Three passes over the function's body, as TensorFlow's AutoGraph does:

1. ``return`` inside ``if``/``while``/``for`` becomes ``do_return = True; retval_ = value``,
   the statements after it run only ``if not do_return`` (moved into the other branch of an
   ``if``, so both branches define the return value), and the function ends with
   ``return retval_``.
2. ``break`` and ``continue`` become flags; statements after them are guarded, and ``break``
   joins the loop's condition.
3. ``if``, ``while`` and ``for`` become ``ag__.if_stmt`` / ``while_stmt`` / ``for_stmt``
   calls on local functions, with ``get_state``/``set_state`` over the variables they modify;
   ``and``, ``or``, ``not`` and ``x if c else y`` become ``ag__`` calls, and calls of other
   functions go through ``ag__.converted_call`` (the user's functions are converted too).
"""
import ast
import itertools

# Builtins called as they are (the rest go through ``ag__.converted_call``, which converts the
# user's own functions when called; ``super``, ``locals`` and ``vars`` look at the calling frame).
_PLAIN_CALLS = frozenset(["super", "locals", "globals", "vars", "eval", "exec", "print", "len", "range", "isinstance",
                          "getattr", "setattr", "hasattr", "type", "int", "float", "bool", "str", "list", "tuple",
                          "dict", "set", "zip", "enumerate", "min", "max", "sum", "abs", "sorted", "reversed"])


# List methods that change a list in place: called in a loop on a list from before the loop,
# they go through ``ag__.list_append`` (a loop over a traced Tensor refuses them).
_LIST_METHODS = frozenset(["append", "extend", "insert"])


class ConversionError(SyntaxError):
    """A construct that cannot be converted; names the line and what to do instead."""


def _name(id_, ctx=None):
    return ast.Name(id=id_, ctx=ctx or ast.Load())


def _call(func, *args):
    return ast.Call(func=ast.Attribute(value=_name("ag__"), attr=func, ctx=ast.Load()), args=list(args),
                    keywords=[])


def _assign(name, value):
    return ast.Assign(targets=[_name(name, ast.Store())], value=value, lineno=0)


def _lambda(body):
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                      body=body)


def assigned_names(nodes):
    """Names bound by ``nodes`` in the current scope (not inside nested functions or classes)."""
    found = []

    def add(name):
        if name not in found:
            found.append(name)

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name)
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            add(node.id)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                add((alias.asname or alias.name).split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    for n in nodes:
        visit(n)
    return found


def _contains(nodes, kinds, into_loops):
    for node in nodes:
        for child in _walk_scope(node, into_loops):
            if isinstance(child, kinds):
                return True
    return False


def _walk_scope(node, into_loops):
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if not into_loops and isinstance(child, (ast.While, ast.For)):
            continue
        yield from _walk_scope(child, into_loops)


def explicit_super(function):
    """``super()`` becomes ``super(__class__, self)``: the converted body runs inside local
    functions, where the zero-argument form would find no arguments."""
    args = function.args.posonlyargs + function.args.args
    if not args:
        return
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super" \
                and not node.args and not node.keywords:
            node.args = [_name("__class__"), _name(args[0].arg)]


class _Jumps:
    """Lowers one kind of jump (``return``, ``break`` or ``continue``) to a flag."""

    def __init__(self, kind, flag):
        self.kind, self.flag = kind, flag

    def block(self, stmts):
        """(new statements, may jump, always jumps)."""
        out = []
        may_jump = False
        for i, stmt in enumerate(stmts):
            branches = ({attr: self.block_info(getattr(stmt, attr)) for attr in ("body", "orelse")}
                        if isinstance(stmt, ast.If) else {})
            new, may, always = self.stmt(stmt)
            rest = stmts[i + 1:]
            if always:
                out.extend(new)
                return out, True, True
            if may and rest:
                rest_new, _, _ = self.block(rest)
                if isinstance(stmt, ast.If) and len(new) == 1:  # the rest goes into each branch that falls through
                    for attr in ("body", "orelse"):
                        branch = getattr(new[0], attr)
                        _, branch_may, branch_always = branches[attr]
                        if branch_always:
                            continue
                        extra = [ast.copy_location(ast.If(test=_call("not_", _name(self.flag)), body=list(rest_new),
                                                          orelse=[]), rest[0])] if branch_may else list(rest_new)
                        setattr(new[0], attr, [s for s in branch if not isinstance(s, ast.Pass)] + extra)
                    out.extend(new)
                    return out, True, False
                out.extend(new)
                out.append(ast.copy_location(ast.If(test=_call("not_", _name(self.flag)), body=rest_new, orelse=[]),
                                             rest[0]))
                return out, True, False
            out.extend(new)
            may_jump = may_jump or may
        return out, may_jump, False

    def block_info(self, stmts):
        may = always = False
        for stmt in stmts:
            m, a = self.stmt_info(stmt)
            may = may or m
            if a:
                return True, True, True
        return None, may, always

    def stmt_info(self, stmt):
        if self._is_jump(stmt):
            return True, True
        if isinstance(stmt, ast.If):
            _, m1, a1 = self.block_info(stmt.body)
            _, m2, a2 = self.block_info(stmt.orelse)
            return m1 or m2, a1 and a2
        if isinstance(stmt, (ast.While, ast.For)):
            return (self.kind == "return" and _contains(stmt.body, ast.Return, True)), False
        if isinstance(stmt, ast.With):
            return self.block_info(stmt.body)[1:]
        return False, False

    def _is_jump(self, stmt):
        return isinstance(stmt, {"return": ast.Return, "break": ast.Break, "continue": ast.Continue}[self.kind])

    def stmt(self, stmt):
        if self._is_jump(stmt):
            new = []
            if self.kind == "return":
                new.append(_assign("retval_", stmt.value if stmt.value is not None else ast.Constant(None)))
            new.append(_assign(self.flag, ast.Constant(True)))
            return new, True, True
        if isinstance(stmt, ast.If):
            body, m1, a1 = self.block(stmt.body)
            orelse, m2, a2 = self.block(stmt.orelse)
            stmt.body, stmt.orelse = body or [ast.Pass()], orelse
            return [stmt], m1 or m2, a1 and a2
        if isinstance(stmt, (ast.While, ast.For)) and self.kind == "return" and _contains(stmt.body, ast.Return, True):
            stmt.body, _, _ = self.block(stmt.body)
            stmt.ag_extra_flags = getattr(stmt, "ag_extra_flags", []) + [self.flag]
            return [stmt], True, False
        if isinstance(stmt, ast.With):
            stmt.body, may, always = self.block(stmt.body)
            return [stmt], may, always
        jump = {"return": ast.Return, "break": ast.Break, "continue": ast.Continue}[self.kind]
        if isinstance(stmt, ast.Try) and _contains([stmt], jump, self.kind == "return"):
            raise ConversionError(f"line {stmt.lineno}: `{self.kind}` inside a `try` statement cannot be converted; "
                                  "move the `try` into a helper function, or use autograph=False")
        return [stmt], False, False


def lower_returns(body):
    """Pass 1 on a function body (in place)."""
    if not any(_contains([s], ast.Return, True) for s in body if not isinstance(s, ast.Return)):
        return body
    new, _, _ = _Jumps("return", "do_return").block(body)
    return ([_assign("do_return", ast.Constant(False)), _assign("retval_", _call("Undefined", ast.Constant("retval_")))]
            + new + [ast.Return(value=_call("retval", _name("retval_")))])


class ControlFlow(ast.NodeTransformer):
    """Passes 2 and 3 (loops lower their own ``break``/``continue`` first)."""

    def __init__(self):
        self._ids = itertools.count()
        self._declared = [set()]  # per function being converted: its `global`/`nonlocal` names

    def _modified(self, nodes):
        """The local variables ``nodes`` assign (a ``global`` one is no local: not state)."""
        return [x for x in assigned_names(nodes) if x not in self._declared[-1]]

    def _functions(self, names, lineno):
        n = next(self._ids)
        state = ast.Tuple(elts=[_call("ld", _lambda(_name(x)), ast.Constant(x)) for x in names], ctx=ast.Load())
        get_state = ast.parse(f"def get_state_{n}():\n    return ()").body[0]
        get_state.body[0].value = state
        set_state = ast.parse(f"def set_state_{n}(vars_):\n    pass").body[0]
        if names:
            set_state.body = [ast.Nonlocal(names=list(names)),
                              ast.Assign(targets=[ast.Tuple(elts=[_name(x, ast.Store()) for x in names],
                                                            ctx=ast.Store())], value=_name("vars_"), lineno=0)]
        return n, [get_state, set_state]

    def _def(self, name, body, names, args=()):
        fn = ast.parse(f"def {name}({', '.join(args)}):\n    pass").body[0]
        declared_global = sorted(self._declared[-1])  # the function's `global` names stay global in its parts
        fn.body = (([ast.Global(names=declared_global)] if declared_global else [])
                   + ([ast.Nonlocal(names=list(names))] if names else []) + (body or [ast.Pass()]))
        return fn

    def _state_args(self, n, names, lineno):
        return [_name(f"get_state_{n}"), _name(f"set_state_{n}"),
                ast.Tuple(elts=[ast.Constant(x) for x in names], ctx=ast.Load()), ast.Constant(lineno)]

    def visit_If(self, node):
        names = self._modified(node.body + node.orelse)
        self.generic_visit(node)
        n, state = self._functions(names, node.lineno)
        body = self._def(f"if_body_{n}", node.body, names)
        orelse = self._def(f"else_body_{n}", node.orelse, names)
        call = _call("if_stmt", node.test, _name(body.name), _name(orelse.name),
                     *self._state_args(n, names, node.lineno))
        return [body, orelse, *state, ast.Expr(call)]

    def _lower_loop_jumps(self, node):
        before = []
        flags = list(getattr(node, "ag_extra_flags", []))
        if _contains(node.body, ast.Continue, False):
            flag = f"continue_{next(self._ids)}"
            body, _, _ = _Jumps("continue", flag).block(node.body)
            node.body = [_assign(flag, ast.Constant(False))] + body
            before.append(_assign(flag, ast.Constant(False)))
        after = []
        if _contains(node.body, ast.Break, False):
            flag = f"break_{next(self._ids)}"
            node.body, _, _ = _Jumps("break", flag).block(node.body)
            before.append(_assign(flag, ast.Constant(False)))
            flags.append(flag)
            if node.orelse:
                after = [ast.copy_location(ast.If(test=_call("not_", _name(flag)), body=node.orelse, orelse=[]),
                                           node.orelse[0])]
        elif node.orelse:
            after = node.orelse
        node.orelse = []
        return before, flags, after

    def _extra_test(self, flags):
        if not flags:
            return None
        test = _call("not_", _name(flags[0]))
        for flag in flags[1:]:
            test = _call("and_", _lambda(test), _lambda(_call("not_", _name(flag))))
        return test

    def _loop_options(self, node):
        """The keywords of a ``set_loop_options(...)`` call starting the loop body (removed)."""
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Call):
            func = first.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == "set_loop_options":
                node.body = node.body[1:] or [ast.Pass()]
                return [k for k in first.value.keywords if k.arg in ("maximum_iterations", "shape_invariants")]
        return []

    def _mark_outer_list_calls(self, node, assigned):
        """Marks ``x.append(...)``-style calls in the loop ``node``'s body on a name the body does
        not assign (a list from before the loop), for ``visit_Call`` to convert."""
        for child in (n for statement in node.body for n in _walk_scope(statement, True)):
            if (isinstance(child, ast.Expr) and isinstance(child.value, ast.Call)
                    and isinstance(child.value.func, ast.Attribute) and child.value.func.attr in _LIST_METHODS
                    and isinstance(child.value.func.value, ast.Name) and child.value.func.value.id not in assigned
                    and not child.value.keywords):
                loops = getattr(child.value, "ag_outer_loops", [])
                child.value.ag_outer_loops = loops + [node.lineno]

    def visit_While(self, node):
        self._mark_outer_list_calls(node, assigned_names(node.body))
        options = self._loop_options(node)
        before, flags, after = self._lower_loop_jumps(node)
        names = self._modified(node.body)
        self.generic_visit(node)
        after = [self.visit(s) for s in after]
        n, state = self._functions(names, node.lineno)
        test = node.test
        extra = self._extra_test(flags)
        if extra is not None:
            test = _call("and_", _lambda(extra), _lambda(test))
        test_fn = ast.parse(f"def loop_test_{n}():\n    return 0").body[0]
        test_fn.body[0].value = test
        body = self._def(f"loop_body_{n}", node.body, names)
        call = _call("while_stmt", _name(test_fn.name), _name(body.name), *self._state_args(n, names, node.lineno))
        call.keywords = options
        return before + [test_fn, body, *state, ast.Expr(call)] + _flat(after)

    def visit_For(self, node):
        self._mark_outer_list_calls(node, assigned_names([node.target] + node.body))
        options = self._loop_options(node)
        before, flags, after = self._lower_loop_jumps(node)
        names = self._modified([node.target] + node.body)
        self.generic_visit(node)
        after = [self.visit(s) for s in after]
        n, state = self._functions(names, node.lineno)
        body = self._def(f"loop_body_{n}", [ast.Assign(targets=[node.target], value=_name("itr_"), lineno=0)]
                         + node.body, names, args=("itr_",))
        extra = self._extra_test(flags)
        extra_arg = ast.Constant(None)
        defs = []
        if extra is not None:
            extra_fn = ast.parse(f"def extra_test_{n}():\n    return 0").body[0]
            extra_fn.body[0].value = extra
            defs.append(extra_fn)
            extra_arg = _name(extra_fn.name)
        iterable = node.iter
        if isinstance(iterable, ast.Call) and not iterable.keywords and (
                isinstance(iterable.func, ast.Name) and iterable.func.id == "range"
                or isinstance(iterable.func, ast.Attribute) and iterable.func.attr == "range"):
            iterable = _call("range_", iterable.func, *iterable.args)
        call = _call("for_stmt", iterable, extra_arg, _name(body.name), *self._state_args(n, names, node.lineno))
        targets = ast.Tuple(elts=[ast.Constant(x) for x in assigned_names([node.target])], ctx=ast.Load())
        call.keywords = options + [ast.keyword(arg="targets", value=targets)]
        return before + defs + [body, *state, ast.Expr(call)] + _flat(after)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        func = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(func, _lambda(value), _lambda(result))
        return result

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _call("not_", node.operand)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return _call("if_exp", node.test, _lambda(node.body), _lambda(node.orelse), ast.Constant(node.lineno))

    def visit_FunctionDef(self, node):
        arguments = node.args
        params = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
        params |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        here = [n for statement in node.body for n in _walk_scope(statement, True)]
        declared = {name for n in here if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
        local = [x for x in assigned_names(node.body) if x not in params and x not in declared]
        node.body = lower_returns(node.body)
        self._declared.append({name for n in here if isinstance(n, ast.Global) for name in n.names})
        try:
            self.generic_visit(node)
        finally:
            self._declared.pop()
        # Every local starts as Undefined, so the local functions below can declare it nonlocal.
        node.body = [_assign(x, _call("Undefined", ast.Constant(x))) for x in local] + node.body
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        loops = getattr(node, "ag_outer_loops", None)
        if loops:  # a list from before a loop, changed in it (see _mark_outer_list_calls)
            return _call("list_append", func.value, ast.Constant(func.attr), ast.Constant(func.value.id),
                         ast.Constant(node.lineno), ast.Tuple(elts=[ast.Constant(n) for n in loops], ctx=ast.Load()),
                         *node.args)
        if isinstance(func, ast.Name) and func.id in _PLAIN_CALLS or isinstance(func, ast.Attribute) and (
                func.attr == "range" or isinstance(func.value, ast.Name) and func.value.id == "ag__"):
            return node  # a builtin, a range (see visit_For) or the converted code's own calls
        return ast.Call(func=ast.Attribute(value=_name("ag__"), attr="converted_call", ctx=ast.Load()),
                        args=[node.func] + node.args, keywords=node.keywords)

    def visit_ClassDef(self, node):
        return node  # a class defined inside the function is left as written

    def visit_Lambda(self, node):
        return node  # a lambda's body is an expression run by whoever calls it; left as written

    visit_AsyncFunctionDef = visit_FunctionDef


def _flat(stmts):
    out = []
    for s in stmts:
        out.extend(s if isinstance(s, list) else [s])
    return out
