"""`voice kiosk`: the headless assistant with its event API (docs/architecture.md §7, §8) on one port."""
