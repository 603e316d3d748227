"""`when` conditions: a table of expressions and their results for a context,
and syntax errors reported with their column (and, through the config loader,
with file and line)."""
from __future__ import annotations

import pytest

from ralph.loop.lifecycle import condition
from ralph.loop.lifecycle.context import key_for

CONTEXT = {"iteration": "20", "stage": "build", "story_id": "US-007", "last_result": "verify_failed",
           "story_title": "it's $(rm -rf ~) `x`", "error": "", "commits_made": "0", "last_duration": "12.5"}


def evaluate(source: str, values: dict | None = None) -> bool:
    return condition.evaluate(condition.parse(source), values if values is not None else CONTEXT, key_for)


CASES = [
    ("${ITERATION} % 10 == 0", True),
    ("${ITERATION} % 10 == 0 && ${STAGE} == 'build'", True),
    ("${ITERATION} % 3 == 0", False),
    ("${ITERATION} == 20", True),
    ("${ITERATION} == '20'", True),
    ("${ITERATION} != 20", False),
    ("${ITERATION} > 5", True),
    ("${ITERATION} >= 20", True),
    ("${ITERATION} < 100", True),  # numeric, not text ("20" < "100" is false as text)
    ("${ITERATION} <= 19", False),
    ("${LAST_DURATION} > 12", True),
    ("${STAGE} == \"plan\"", False),
    ("${STAGE} == 'plan' || ${STAGE} == 'build'", True),
    ("!(${STAGE} == 'plan')", True),
    ("!${ERROR}", True),
    ("${ERROR}", False),
    ("${STORY_ID}", True),
    ("${COMMITS_MADE}", False),  # "0" is false
    ("$ITERATION == 20", True),
    ("${RALPH_ITERATION} == 20", True),
    ("${TASK_ID} == 'US-007'", True),  # iteratr's name for the story id
    ("${STORY_TITLE} == 'it\\'s $(rm -rf ~) `x`'", True),  # text compared, never run
    ("true", True),
    ("false || ${LAST_RESULT} == 'verify_failed'", True),
    ("${ITERATION} > 5 && (${STAGE} == 'work' || ${STAGE} == 'build') && !${ERROR}", True),
    ("1 == 1 && 2 == 3 || 4 == 4", True),  # && binds tighter than ||
    ("1 == 1 && (2 == 3 || 4 == 5)", False),
    ("${NEXT_STAGE} == ''", True),  # missing from the context: empty
]


@pytest.mark.parametrize("source,expected", CASES)
def test_condition_table(source: str, expected: bool) -> None:
    assert evaluate(source) is expected


SYNTAX_ERRORS = [
    ("", "empty condition"),
    ("${ITERATION} % == 2", "column 16"),
    ("${ITERATION} = 2", "use == to compare"),
    ("${STAGE} == build", "bare word 'build'"),
    ("(${ITERATION} == 1", "expected ')'"),
    ("${ITERATION} == 1)", "unexpected ')'"),
    ("${STAGE} == 'build", "unterminated string"),
    ("1 < 2 < 3", "do not chain"),
    ("${ITERATION} ==", "expected a value"),
    ("&& 1", "expected a value at column 1"),
    ("__import__('os').system('touch x')", "unexpected '.' at column 17"),
    ("__import__('os')", "bare word '__import__'"),
    ("${ITER ATION} == 1", "unexpected '$'"),
]


@pytest.mark.parametrize("source,message", SYNTAX_ERRORS)
def test_syntax_errors_are_caught_by_the_parser(source: str, message: str) -> None:
    with pytest.raises(condition.ConditionError) as caught:
        condition.parse(source)
    assert message in str(caught.value)


def test_modulo_of_text_is_an_evaluation_error_not_a_crash() -> None:
    with pytest.raises(condition.ConditionError, match="% needs numbers"):
        evaluate("${STAGE} % 2 == 0")
    with pytest.raises(condition.ConditionError, match="by zero"):
        evaluate("${ITERATION} % 0 == 0")


def test_variables_are_listed_with_columns() -> None:
    tree = condition.parse("${ITERATION} % 10 == 0 && $STAGE == 'x'")
    assert condition.variables(tree) == [("ITERATION", 1), ("STAGE", 27)]

