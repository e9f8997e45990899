"""Playback shared by the views that animate a schedule over time (the buffers view, the mesh): space plays and
pauses, + / - change the speed; each view says what one tick does (`_tick`)."""

from __future__ import annotations

from typing import Any

SPEEDS = (0.5, 1, 2, 4, 8, 16)  # ticks a second


class Playback:
    """Mixed into a Textual widget that declares the reactives `playing` (bool) and `speed_index` (int, into
    SPEEDS) and defines `_tick`; the timer lives here."""

    playing: bool
    speed_index: int
    _timer: Any = None

    def _tick(self) -> None:
        raise NotImplementedError

    def action_play(self) -> None:
        self.playing = not self.playing

    def watch_playing(self, playing: bool) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if playing:
            self._timer = self.set_interval(1 / SPEEDS[self.speed_index], self._tick)  # type: ignore[attr-defined]

    def watch_speed_index(self) -> None:
        if self.playing:
            self.watch_playing(True)

    def action_speed(self, delta: int) -> None:
        self.speed_index = min(max(self.speed_index + delta, 0), len(SPEEDS) - 1)
