"""`voice kiosk`: the headless assistant with its event API (design §7, §8) on one port."""
