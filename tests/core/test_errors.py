"""The core's errors: bad input is a ValueError, a stop is not, and a missing id reads as a sentence."""

from __future__ import annotations

import inspect

import pytest

from bpeinspect.core import errors

INPUT_ERRORS = [
    errors.VocabularyError,
    errors.UnsupportedTokenizerError,
    errors.PatternError,
    errors.DisallowedSpecialError,
    errors.UnknownTokenError,
    errors.CorpusError,
    errors.CountsFileError,
    errors.SampleError,
    errors.QueryError,
    errors.ChatTemplateError,
    errors.DatasetError,
    errors.ShapeUnclear,
    errors.UnknownPreTokenizerError,
    errors.UnsupportedNormalizer,
    errors.TablesError,
]


@pytest.mark.parametrize("cls", INPUT_ERRORS, ids=lambda c: c.__name__)
def test_bad_input_can_be_caught_as_one_value_error(cls):
    assert issubclass(cls, ValueError)


def test_a_stop_and_a_failed_process_are_not_bad_input():
    assert not issubclass(errors.Cancelled, ValueError)
    assert not issubclass(errors.TrainingProcessError, ValueError)


def test_file_problems_are_vocabulary_errors():
    for cls in (errors.UnsupportedTokenizerError, errors.UnknownPreTokenizerError):
        assert issubclass(cls, errors.VocabularyError)


def test_an_unknown_id_is_a_key_error_whose_message_is_not_quoted():
    exc = errors.UnknownTokenError("unknown token id 99999999")
    assert isinstance(exc, KeyError)
    assert str(exc) == "unknown token id 99999999"
    assert str(errors.UnknownTokenError()) == ""
    with pytest.raises(KeyError):
        raise exc


def test_an_unclear_shape_carries_the_fields_to_choose_from():
    exc = errors.ShapeUnclear("no known shape", ["prompt", "answer"])
    assert isinstance(exc, errors.DatasetError)
    assert exc.fields == ("prompt", "answer")
    assert str(exc) == "no known shape"


def test_every_error_class_of_the_module_is_accounted_for():
    defined = {name for name, obj in inspect.getmembers(errors, inspect.isclass) if obj.__module__ == errors.__name__}
    known = {c.__name__ for c in INPUT_ERRORS} | {"Cancelled", "TrainingProcessError"}
    assert known <= defined
