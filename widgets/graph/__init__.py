"""The graph view (view), the pure drawing of a layout window into cells (canvas), and two graphs side by side
(compare_screen)."""
