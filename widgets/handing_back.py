"""`q` hands the terminal back at once (issue #73): Textual restores the terminal at the very end of its shutdown,
after joining its input thread (which waits out up to two 0.1 s selects) and unmounting every widget, so the
shell came back 200 ms or more after the key. Here the terminal's modes are restored and the alternate screen
left first, in the driver's own output order; the shutdown then runs as before (its second restore changes
nothing) with no paint in between."""

from __future__ import annotations

import contextlib
import termios
from typing import Any

from textual.app import App

# what Textual's Linux driver writes when it stops application mode: the Kitty keyboard protocol off, the normal
# screen back, the cursor shown, focus reports off
LEAVE = "\x1b[<u\x1b[?1049l\x1b[?25h\x1b[?1004l"


def hand_terminal_back(app: App) -> bool:
    """Give the terminal back now, when the app drives a real one (not headless, not a browser); True if it did."""
    from textual.drivers.linux_driver import LinuxDriver

    driver: Any = app._driver
    if not isinstance(driver, LinuxDriver) or driver._writer_thread is None:
        return False
    app._begin_batch()  # nothing painted on the normal screen after it
    try:
        driver._disable_bracketed_paste()
        driver._enable_line_wrap()
        driver._disable_in_band_window_resize()
        driver._disable_mouse_support()
        if driver.attrs_before is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(driver.fileno, termios.TCSANOW, driver.attrs_before)
        driver.write(LEAVE)
        driver.flush()
    except AttributeError:  # another Textual's driver: its own shutdown restores the terminal
        return False
    return True
