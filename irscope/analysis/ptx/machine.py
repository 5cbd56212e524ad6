"""Run a PTX kernel's integer and predicate instructions for every thread of some programs at once.

This is not a GPU simulator: it computes what addresses and guards are made of (thread and program ids,
kernel arguments, constants, loop counters) and follows the control flow they decide, so that every
execution of a watched instruction (a shared-memory access) is seen with each lane's operands. Only the
backward slice of the watched operands, the guards and the branches is evaluated; data loaded from
memory and floating-point results are unknown, and a watched operand made of them is reported as such.

Lanes are (program, thread) pairs, the programs of one batch side by side. A branch that goes both ways
for whole warps forks the state (different programs or warps take different paths, as the hardware
does); one that splits a warp stops the run, since what a warp executes after divergence is not modelled.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from irscope.analysis.ptx.program import (
    REGISTER,
    Instr,
    Program,
    destinations,
    immediate,
    is_special,
    sources,
)
from irscope.analysis.ptx.semantics import compute
from irscope.analysis.ptx.values import U64, Value, wrap

_ADDRESS = re.compile(r"^\[\s*([%$\w@.]+)?\s*(?:\+\s*(-?(?:0x[0-9a-fA-F]+|\d+)))?\s*\]$")


class Stop(Exception):
    """The run cannot go on (a branch on an unknown value, a warp split, the step limit)."""


@dataclass
class State:
    pc: int
    active: np.ndarray
    regs: dict[str, Value] = field(default_factory=dict)
    # (label, lanes that wait there)
    rejoin: list[tuple[int, np.ndarray]] = field(default_factory=list)

    def fork(self, pc: int, active: np.ndarray) -> "State":
        return State(pc, active, dict(self.regs), list(self.rejoin))


class Machine:
    """`watch(machine, state, instr)` is called before each execution of the instructions in `watched`, which
    maps each one's index to the operands whose values it needs (with its guard, they seed the slice)."""

    def __init__(
        self,
        program: Program,
        params: dict[str, int | None],
        grid: tuple[int, int, int],
        ctas: list[tuple[int, int, int]],
        threads: int,
        watched: dict[int, list[str]],
        watch: Callable,
        shared_symbols: dict[str, int] | None = None,
        step_limit: int = 5_000_000,
        time_limit: float | None = None,
    ):
        self.program, self.params, self.grid, self.threads = program, params, grid, threads
        self.lanes = len(ctas) * threads
        self.tid = np.tile(np.arange(threads, dtype=np.uint64), len(ctas))
        cta = np.repeat(np.array(ctas, dtype=np.uint64).reshape(-1, 3), threads, axis=0)
        self.ctaid = {"x": cta[:, 0], "y": cta[:, 1], "z": cta[:, 2]}
        self.shared_symbols = shared_symbols or {}
        self.watched, self.watch, self.step_limit = watched, watch, step_limit
        self.deadline = None if time_limit is None else time.monotonic() + time_limit
        self.time_limit = time_limit
        self.steps = 0
        self.dests = [destinations(ins) for ins in program.instrs]
        self.relevant = self._slice()

    # ------------------------------------------------------------------ what to evaluate
    def _slice(self) -> list[bool]:
        instrs = self.program.instrs
        needed: set[str] = set()
        for i, ins in enumerate(instrs):
            if i in self.watched:
                needed.update(
                    r
                    for op in self.watched[i]
                    for r in REGISTER.findall(op or "")
                    if not is_special(r)
                )
            if ins.parts[0] in ("bra", "ret", "exit") and ins.guard:
                needed.add(ins.guard)
            if i in self.watched and ins.guard:
                needed.add(ins.guard)
        writers: dict[str, list[Instr]] = {}
        for ins in instrs:
            for d in destinations(ins):
                writers.setdefault(d, []).append(ins)
        todo = list(needed)
        while todo:
            reg = todo.pop()
            for ins in writers.get(reg, []):
                for s in sources(ins):
                    if s not in needed:
                        needed.add(s)
                        todo.append(s)
        return [bool(set(destinations(ins)) & needed) for ins in instrs]

    # ------------------------------------------------------------------ operands
    def const(self, number: int) -> Value:
        return Value(np.full(self.lanes, number & 0xFFFFFFFFFFFFFFFF, dtype=U64))

    def unknown(self) -> Value:
        return Value(np.zeros(self.lanes, dtype=U64), np.zeros(self.lanes, dtype=bool))

    def value(self, state: State, text: str) -> Value:
        text = text.strip()
        negate = text.startswith("!")
        if negate:
            text = text[1:]
        got = self._value(state, text)
        if negate:
            return Value(~got.bits.astype(bool), got.known)
        return got

    def _value(self, state: State, text: str) -> Value:
        if text.startswith("%"):
            special = self._special_register(text)
            if special is not None:
                return special
            return state.regs.get(text) or self.unknown()
        number = immediate(text)
        if number is not None:
            return self.const(number)
        if text in self.shared_symbols:
            return self.const(self.shared_symbols[text])
        if self.params.get(text) is not None:
            return self.const(self.params[text])
        m = re.fullmatch(r"([\w$]+)\s*\+\s*(\d+)", text)
        if m and m.group(1) in self.shared_symbols:
            return self.const(self.shared_symbols[m.group(1)] + int(m.group(2)))
        return self.unknown()

    def _special_register(self, name: str) -> Value | None:
        base, _, axis = name.partition(".")
        if base == "%tid":
            return Value(self.tid.copy()) if axis == "x" else self.const(0)
        if base == "%ntid":
            return self.const(self.threads if axis == "x" else 1)
        if base == "%ctaid" and axis in self.ctaid:
            return Value(self.ctaid[axis].copy())
        if base == "%nctaid" and axis in "xyz" and axis:
            return self.const(self.grid["xyz".index(axis)])
        if name == "%laneid":
            return Value(self.tid % U64(32))
        if name == "%warpid":
            return Value(self.tid // U64(32))
        if base in ("%cluster_ctarank", "%cluster_ctaid"):
            return self.const(0)
        if base in ("%cluster_nctarank", "%cluster_nctaid"):
            return self.const(1)
        return None

    def address(self, state: State, text: str) -> Value:
        """The byte address an `[base + offset]` operand names, per lane."""
        m = _ADDRESS.match(text.strip())
        if m is None:
            return self.unknown()
        base = self.value(state, m.group(1)) if m.group(1) else self.const(0)
        offset = immediate(m.group(2)) if m.group(2) else 0
        return Value(wrap(base.bits + U64(offset & 0xFFFFFFFFFFFFFFFF), 64), base.known)

    # ------------------------------------------------------------------ running
    def run(self) -> list[str]:
        """Run every program of the batch to its end; returns why a path stopped early, if one did."""
        stops = []
        pending = [State(0, np.ones(self.lanes, dtype=bool))]
        while pending:
            state = pending.pop()
            try:
                self._run(state, pending)
            except Stop as stop:
                stops.append(str(stop))
        return stops

    def _run(self, state: State, pending: list[State]) -> None:
        instrs = self.program.instrs
        while state.pc < len(instrs) and state.active.any():
            while state.rejoin and state.rejoin[-1][0] == state.pc:  # the end of a divergent `if`
                state.active = state.active | state.rejoin.pop()[1]
            ins = instrs[state.pc]
            self.steps += 1
            if self.steps > self.step_limit:
                raise Stop(f"stopped after {self.step_limit} instructions")
            if (
                self.deadline is not None
                and self.steps % 4096 == 0
                and time.monotonic() > self.deadline
            ):
                raise Stop(f"stopped after {self.time_limit:g} s ({self.steps} instructions)")
            if state.pc in self.watched:
                self.watch(self, state, ins)
            head = ins.parts[0]
            if head == "bra":
                if self._branch(state, ins, pending):
                    continue
            elif head in ("ret", "exit"):
                lanes = self.guard_lanes(state, ins)
                if lanes is None:
                    raise Stop(
                        f"an exit on a value irscope cannot compute (PTX line {ins.line + 1})"
                    )
                state.active = state.active & ~lanes
            elif self.relevant[state.pc]:
                self._execute(state, ins)
            state.pc += 1

    def ahead(self, state: State, text: str, last: int) -> Value:
        """The value `text` has once the straight-line code from here to instruction `last` has run (the
        state itself stays where it is): what ptxas computes earlier than the PTX does."""
        probe = state.fork(state.pc, state.active)
        for pc in range(state.pc, last + 1):
            if self.program.instrs[pc].parts[0] in ("bra", "ret", "exit"):
                return self.unknown()
            if self.relevant[pc]:
                probe.pc = pc
                self._execute(probe, self.program.instrs[pc])
        return self.value(probe, text)

    def guard_lanes(self, state: State, ins: Instr) -> np.ndarray | None:
        """The active lanes the guard lets through (None: the guard is unknown on an active lane)."""
        if ins.guard is None:
            return state.active.copy()
        g = state.regs.get(ins.guard)
        if g is None or not g.known_in(state.active):
            return None
        on = g.bits.astype(bool)
        return state.active & (~on if ins.negated else on)

    def _branch(self, state: State, ins: Instr, pending: list[State]) -> bool:
        target = self.program.labels.get(ins.operands[0].strip()) if ins.operands else None
        if target is None:
            raise Stop(f"a branch to an unknown label (PTX line {ins.line + 1})")
        taken = self.guard_lanes(state, ins)
        if taken is None:
            # a branch on data (libdevice's special cases, say) over straight-line code with no watched access:
            # whatever the lanes did, what the code writes is unknown after it
            region = range(state.pc + 1, target)
            if self._plain_region(state.pc, target) and not any(i in self.watched for i in region):
                for i in region:
                    for name in self.dests[i]:
                        state.regs[name] = self.unknown()
                state.pc = target
                return True
            raise Stop(f"a branch on a value irscope cannot compute (PTX line {ins.line + 1})")
        if not taken.any():
            return False
        if (taken == state.active).all():
            state.pc = target
            return True
        warps_taken = taken.reshape(-1, 32).any(axis=1)
        warps_left = (state.active & ~taken).reshape(-1, 32).any(axis=1)
        if not (warps_taken & warps_left).any():  # whole warps go each way: two paths
            pending.append(state.fork(target, taken))
            state.active = state.active & ~taken
            return False
        if self._plain_region(state.pc, target):
            # a forward branch over straight-line code splits a warp: the other lanes run the code, and the
            # warp reconverges at the label (SIMT `if`)
            state.rejoin.append((target, taken))
            state.active = state.active & ~taken
            return False
        raise Stop(f"a branch that splits a warp (PTX line {ins.line + 1})")

    def _plain_region(self, pc: int, target: int) -> bool:
        """Whether the instructions between a branch and its (later) target have no control flow."""
        return target > pc and not any(
            self.program.instrs[i].parts[0] in ("bra", "ret", "exit") for i in range(pc + 1, target)
        )

    def _write(
        self, state: State, ins: Instr, name: str, result: Value | None, lanes: np.ndarray | None
    ) -> None:
        if lanes is None or result is None:
            state.regs[name] = self.unknown()
            return
        if lanes.all():
            state.regs[name] = result
            return
        old = state.regs.get(name) or self.unknown()
        bits = np.where(lanes, result.bits, old.bits)
        new_known = np.ones(self.lanes, bool) if result.known is None else result.known
        old_known = np.ones(self.lanes, bool) if old.known is None else old.known
        known = np.where(lanes, new_known, old_known)
        state.regs[name] = Value(bits, None if known.all() else known)

    def _execute(self, state: State, ins: Instr) -> None:
        lanes = self.guard_lanes(state, ins)
        dests = self.dests[state.pc]
        try:
            results = self._compute(state, ins, dests)
        except (IndexError, ValueError, KeyError, OverflowError):
            results = None
        if results is None:
            results = [None] * len(dests)
        for name, result in zip(dests, results):
            self._write(state, ins, name, result, lanes)

    def _compute(self, state: State, ins: Instr, dests: list[str]) -> list[Value | None] | None:
        return compute(self, state, ins, dests)
