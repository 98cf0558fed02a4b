"""The coloured token overlay: the token view (with its tooltips), the ids strip and the palette."""
