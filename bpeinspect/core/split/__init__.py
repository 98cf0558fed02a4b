"""Split rules: how text is cut into pre-tokens before byte-pair merging (presets, the fast splitter, its Unicode tables)."""
