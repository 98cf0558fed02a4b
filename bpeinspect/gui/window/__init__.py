"""The main window: its actions, theme, panes and persisted settings."""
