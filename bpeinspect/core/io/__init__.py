"""Files: atomic writes, the built-in vocabularies, discovery of tokenizers on disk, and one module per file format."""
