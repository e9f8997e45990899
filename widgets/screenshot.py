"""`ir-explorer screenshot`: an SVG of one view at a given state, rendered headless (tests, reviews, docs)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from explorer.errors import LoadError
from widgets.app import make_app
from widgets.graph.view import GraphView

VIEWS = ("tree", "timeline", "buffers")


def take_screenshot(
    path: Path,
    *,
    view: str,
    output: Path,
    core: int | None = None,
    workload: int | None = None,
    member: str | None = None,
    line: int = 1,
    size: tuple[int, int] = (160, 48),
    strict: bool = False,
    node_data: list[Path] | None = None,
    compare: Path | None = None,
    force: bool = False,
    companions: dict[str, Path | None] | None = None,
    opens: list[str] | None = None,
) -> None:
    """Open `path` headless at `size`, show `view` at (core, workload) or the source view at (member, line),
    the graph view after Enter opened `opens` one after the other (ids like g12 or paths of labels), and write
    the screen as SVG."""
    from explorer.writing import refuse_inputs, write_atomically

    named = [path, *(node_data or []), *([compare] if compare else []), *(p for p in (companions or {}).values() if p)]
    refuse_inputs(output, named)  # before the work: FILE, the data and the compared file are known already
    if opens and view != "graph":
        raise LoadError(path, "--open", "--open opens groups of the graph view: give --view graph")
    svg, read = asyncio.run(_render(path, view, core, workload, size, strict, (member, line), node_data, compare,
                                    companions, opens or []))  # fmt: skip
    refuse_inputs(output, [*named, *read])  # and what loading found beside them (companions, external weights)
    write_atomically(output, svg.encode("utf-8"), force)


async def _render(
    path: Path,
    view: str,
    core: int | None,
    workload: int | None,
    size: tuple[int, int],
    strict: bool,
    source: tuple[str | None, int] = (None, 1),
    node_data: list[Path] | None = None,
    compare: Path | None = None,
    companions: dict[str, Path | None] | None = None,
    opens: Sequence[str] = (),
) -> tuple[str, list[Path]]:
    app = make_app(path, strict=strict, node_data=node_data, compare=compare, companions=companions)
    async with app.run_test(size=size) as pilot:
        # the whole file: a big schedule's first core (its preview) is on screen first
        while (app.document is None or app.document.partial) and app.load_error is None:
            await pilot.pause(0.02)
        if app.load_error is not None:
            raise app.load_error
        while not app.views_ready:
            await pilot.pause(0.02)
        document = app.document
        assert document is not None  # loaded: waited for above
        schedule = document.schedule
        offered = ("tree", *app.views_for(document))
        if view not in offered:
            raise LoadError(
                path, "", f"this {document.meta.format} file has no {view} view (it has: {', '.join(offered)})"
            )
        if core is not None or workload is not None:
            if schedule is None or not document.offers("timeline"):
                raise LoadError(path, "", "--core and --workload apply to files with a timeline (schedules)")
            chosen_core = int(schedule.core_ids[0]) if core is None else core
            rows = schedule.core_rows(chosen_core)
            if not len(rows):
                raise LoadError(path, "", f"there is no core {chosen_core} (cores: {schedule.core_ids.tolist()})")
            row = rows.start if workload is None else schedule.row_of(chosen_core, workload)
            if row is None:
                raise LoadError(path, "", f"core {chosen_core} has no workload {workload}")
            app.go_to_workload(row)
        app.action_view(view)
        await pilot.pause()
        member, line = source
        if member is not None:
            if view != "source" or app.source is None or document.sources is None:
                raise LoadError(path, "", "--member applies to the source view (--view source)")
            try:
                found = bool(document.sources.source_text(member))
            except (KeyError, OSError, ValueError):
                found = False
            if not found:
                raise LoadError(path, "", f"{member!r} is not a source file of this file")
            app.source.show(member, line)
            await pilot.pause()
        for widget in app.query("#graph").results(GraphView) if view == "graph" else ():  # laid out in a worker
            while not widget.ready:
                await pilot.pause(0.02)
            await pilot.pause()
            _open_groups(widget, opens, path)
            await pilot.pause()
        if compare is not None:  # the two graphs side by side, on the first change
            await _on_first_change(pilot, path)
        await pilot.pause()
        # the tab underline slides to the chosen tab: a picture taken mid-slide differed run to run (`make docs`
        # rewrote an SVG on an unchanged tree)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        title = f"{path.name} ⇄ {Path(compare).name}" if compare is not None else f"{path.name} · {view}"
        read = document.files_read()
        return app.export_screenshot(title=f"ir-explorer {title}"), read


def _open_groups(graph: GraphView, opens: Sequence[str], path: Path) -> None:
    """Enter on each group in turn, as a user opens them from the first screen, a group's closed ancestors first,
    outermost first (`graph --open` lays out the same)."""
    from explorer.exports.graph_json import UnknownGroup, resolve_group

    for spec in opens:
        try:
            group = resolve_group(graph.graph_model, spec)
        except UnknownGroup as error:
            raise LoadError(path, "--open", str(error)) from None
        for g in graph.graph_model.ancestors(group):  # outermost first, the group itself last
            if g in graph.expanded:
                continue
            visible = graph.shown_picture.visible
            if not ((visible.item_kind == 1) & (visible.item_id == g)).any():
                raise LoadError(path, "--open", f"group {spec!r} is not drawn (a group it is in is hidden)")
            graph.selected_key = (1, g)
            graph.action_toggle_group()


async def _on_first_change(pilot: Any, path: Path) -> None:
    from widgets.graph.compare_screen import CompareScreen

    app = pilot.app
    for _ in range(3000):  # the other file is loaded and matched in a worker; a refusal is a notification
        screen = app.screen
        if isinstance(screen, CompareScreen) and screen.ready:
            await pilot.press("n")
            await pilot.pause()
            return
        refused = [n for n in app._notifications if n.severity == "error"]
        if refused:
            raise LoadError(path, "--compare", str(refused[0].message))
        await pilot.pause(0.02)
    raise LoadError(path, "--compare", "the comparison did not open")
