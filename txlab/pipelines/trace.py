"""PipelineTrace: what :func:`txlab.pipelines.simulate` found (events, spans, problems), its swimlane
plot and its widget."""

from __future__ import annotations

from txlab.pipelines.protocol import (
    ADVANCE,
    ARRIVE,
    ARRIVE_EXPECT_TX,
    COMPLETE_TX,
    EV_BLOCK,
    EVENT_KINDS,
    EXPECT_TX,
    OP_NAMES,
    WAIT,
    BarrierSpec,
    Deadlock,
    Problem,
    Role,
    Span,
    Step,
)


class PipelineTrace:
    """What :func:`simulate` found. ``deadlock`` is None when every role finished; ``problems`` lists
    every diagnosis; ``steps`` has the full state after each event; ``spans`` the blocked waits."""

    def __init__(self, stages, barriers, roles, events, spans, deadlock, problems, finished, params):
        self.stages: int = stages
        self.barriers: tuple[BarrierSpec, ...] = tuple(barriers)
        self.roles: tuple[Role, ...] = tuple(roles)
        self._events = events  # list of compact tuples, see _ev_fields
        self.spans: tuple[Span, ...] = tuple(spans)
        self.deadlock: Deadlock | None = deadlock
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.finished: bool = finished
        self.params: dict = params
        self._steps = None
        self._roles_arg = None
        self._simulate = None  # set by simulate(), which made this trace
        #: what the simulated protocol assumed where the kernel could not be read (a pipeline from_kernel read with
        #: no wait on a barrier, a wait parity, a count or trip count known only at launch, a guard that reads
        #: memory): a verdict holds only under them, and summary() names them
        self.assumed: tuple[str, ...] = ()

    def rerun(self, **changes) -> "PipelineTrace":
        """Simulate again with some parameters changed (same role scripts), e.g.
        ``trace.rerun(producer_phase=1)``."""
        kw = {k: v for k, v in self.params.items() if k not in ("stages", "custom_roles")}
        kw.update(changes)
        stages = kw.pop("stages", self.stages)
        if isinstance(kw.get("tx_bytes"), list):
            kw["tx_bytes"] = tuple(kw["tx_bytes"])
        again = self._simulate(stages, roles=self._roles_arg, **kw)
        again.assumed = self.assumed  # what the protocol was read under still holds for the rerun
        return again

    # event tuple layout
    _ev_fields = (
        "role",
        "kind",
        "op",
        "bar",
        "stage",
        "iteration",
        "slot_phase",
        "slot_pending",
        "slot_tx",
        "role_stage",
        "role_phase",
    )

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def event_rows(self) -> tuple:
        """Every event as a tuple of ints, fields named by :attr:`event_fields` (what the
        widget streams as one int32 buffer)."""
        return tuple(self._events)

    @property
    def event_fields(self) -> tuple:
        return self._ev_fields

    def __len__(self) -> int:
        return len(self._events)

    @property
    def steps(self) -> list[Step]:
        """Per event: acting role, operation, stage, each role's (stage, phase) and each barrier
        slot's (phase, pending, tx) after the event. Built on first access."""
        if self._steps is None:
            self._steps = self._build_steps()
        return self._steps

    def _build_steps(self) -> list[Step]:
        names = [r.name for r in self.roles]
        bnames = [b.name for b in self.barriers]
        S = self.stages
        slots = [[(0, b.init, 0)] * S for b in self.barriers]
        rstate = [(0, r.phase) for r in self.roles]
        out = []
        for i, (r, kind, op, bar, st, it, sp, spend, stx, rs, rp) in enumerate(self._events):
            if bar >= 0:
                slots[bar][st] = (sp, spend, stx)
            rstate[r] = (rs, rp)
            out.append(
                Step(
                    i,
                    names[r],
                    EVENT_KINDS[kind],
                    OP_NAMES[op],
                    bnames[bar] if bar >= 0 else None,
                    st if st >= 0 else None,
                    it,
                    dict(zip(names, rstate)),
                    {bnames[b]: tuple(slots[b]) for b in range(len(bnames))},
                )
            )
        return out

    def summary(self) -> str:
        its = ", ".join(f"{r.name}×{r.iterations}" for r in self.roles)
        head = f"{self.stages}-stage pipeline, {len(self.roles)} roles ({its}), {len(self._events)} events: "
        if not self.problems and self.assumed:
            unrun = any(a.startswith("no wait on the") for a in self.assumed)
            return head + (
                "every role finished, no problem found in the protocol assumed where the kernel could not be read: "
                + "; ".join(self.assumed)
                + (
                    " (the kernel does not run this pipeline as simulated)"
                    if unrun
                    else " (the verdict holds only as far as these assumptions do)"
                )
            )
        if not self.problems:
            return head + "every role finished, no problem found."
        text = head + f"{len(self.problems)} problem(s)\n" + "\n".join(f"  - {p}" for p in self.problems)
        if self.assumed:
            text += "\n  assumed where the kernel could not be read:\n" + "\n".join(f"  - {a}" for a in self.assumed)
        return text

    def __repr__(self) -> str:
        state = "deadlock" if self.deadlock else ("ok" if self.ok else f"{len(self.problems)} problems")
        return (
            f"<PipelineTrace stages={self.stages} roles={[r.name for r in self.roles]} "
            f"events={len(self._events)} {state}>"
        )

    def to_dict(self, max_events: int | None = None) -> dict:
        """Compact JSON: per-event columns (ints) plus roles, barriers, spans, problems."""
        ev = self._events if max_events is None else self._events[:max_events]
        cols = {name: [e[i] for e in ev] for i, name in enumerate(self._ev_fields)}
        return {
            "stages": self.stages,
            "roles": [r.to_dict() for r in self.roles],
            "barriers": [b.to_dict() for b in self.barriers],
            "op_names": list(OP_NAMES),
            "event_kinds": list(EVENT_KINDS),
            "n_events": len(self._events),
            "truncated": max_events is not None and len(self._events) > max_events,
            "events": cols,
            "spans": [s.to_dict() for s in self.spans],
            "deadlock": self.deadlock.to_dict() if self.deadlock else None,
            "problems": [p.to_dict() for p in self.problems],
            "finished": self.finished,
            "params": self.params,
        }

    def plot(self, ax=None, max_events: int | None = 400):
        """Swimlanes: one row per role, x = event index; blocked waits as red bars, ops as marks,
        the deadlock point as a vertical line. Returns the matplotlib Figure (drawn on ``ax`` when
        given)."""
        import matplotlib.pyplot as plt

        ev = self._events if max_events is None else self._events[:max_events]
        n_roles = len(self.roles)
        if ax is None:
            _, ax = plt.subplots(figsize=(10, 0.55 * n_roles + 1.4))
        end = len(ev)
        for s in self.spans:
            if s.start >= end:
                continue
            stop = min(s.end if s.end is not None else end, end)
            ri = [r.name for r in self.roles].index(s.role)
            ax.barh(
                ri,
                max(stop - s.start, 0.6),
                left=s.start,
                height=0.5,
                color="#e15759" if s.end is None else "#f28e2b",
                alpha=0.45,
                linewidth=0,
            )
        style = {
            WAIT: ("v", "#4e79a7"),
            ARRIVE: ("^", "#59a14f"),
            ARRIVE_EXPECT_TX: ("^", "#76b7b2"),
            EXPECT_TX: ("+", "#76b7b2"),
            COMPLETE_TX: ("*", "#b07aa1"),
            ADVANCE: ("|", "#9c755f"),
        }
        for code, (marker, colour) in style.items():
            xs = [i for i, e in enumerate(ev) if e[2] == code and e[1] != EV_BLOCK]
            ys = [ev[i][0] for i in xs]
            if xs:
                ax.scatter(xs, ys, marker=marker, color=colour, s=28, label=OP_NAMES[code], zorder=3)
        if self.deadlock is not None and self.deadlock.step < end:
            ax.axvline(self.deadlock.step, color="#d62728", linewidth=2, label="deadlock")
        ax.set_yticks(range(n_roles), [r.name for r in self.roles])
        ax.invert_yaxis()
        ax.set_xlabel("event")
        title = f"{self.stages}-stage pipeline"
        if self.deadlock:
            title += " — DEADLOCK"
        elif self.problems:
            title += f" — {len(self.problems)} problem(s)"
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        ax.figure.tight_layout()
        return ax.figure

    def view(self, **kwargs):
        """The interactive widget of this simulation (:class:`txlab.views.PipelineView`), registered by
        ``txlab.views``; ``kwargs`` go to the widget."""
        from txlab.hooks import widget

        return widget(self, **kwargs)
