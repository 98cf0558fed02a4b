"""The coloured token overlay: the token view, the ids strip, the palette, tooltips and export."""
