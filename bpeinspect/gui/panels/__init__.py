"""Docked panels beside the text: vocabulary, merge tree, replay, compare, languages."""
