"""Analysis over encodings: statistics across texts and languages, the vocabulary index, bundled samples."""
