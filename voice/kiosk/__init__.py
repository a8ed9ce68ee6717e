"""`voice kiosk`: the headless assistant, its websocket API and its page."""
