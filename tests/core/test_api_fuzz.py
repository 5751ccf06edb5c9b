"""Schema-driven fuzzing of the REST API (schemathesis): every operation of /api/schema/, as every role, with valid
and invalid inputs. No answer may be a server error, and every answer must be one the schema documents (status
code, content type, body schema, headers)."""

import time
from collections import Counter

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation import services
from core.services import api_token_issue, user_create_with_role
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus, next_lease, submit_vote

pytestmark = pytest.mark.django_db

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]
# (role, generation modes, examples per operation and mode): the roles that may act get the full run; the annotator
# a positive pass that mostly meets refusals plus the annotation API it does own.
ROLES = (
    ("staff", (GenerationMode.POSITIVE, GenerationMode.NEGATIVE), 10),
    ("coordinator", (GenerationMode.POSITIVE, GenerationMode.NEGATIVE), 6),
    ("researcher", (GenerationMode.POSITIVE,), 6),
    ("annotator", (GenerationMode.POSITIVE, GenerationMode.NEGATIVE), 6),
)


@pytest.fixture
def app():
    """Django's WSGI app inside the test's transaction: like django.test.Client, keep the request_finished handler
    from closing the test connection around each request."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield WSGIHandler()
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def tokens():
    """A study with votes and open leases, and an API token for a user of each role."""
    build_corpus(figures=4, configurations=SLUGS)
    study = services.study_create(name="fuzz", configurations=SLUGS, min_dwell_ms=0, overlap_rate=0)
    voter = annotator("ann-fuzz")
    study.annotators.add(voter)
    voted = next_lease(study=study, annotator=voter)
    submit_vote(token=voted.token, annotator=voter, outcome="a", reason="clearer", dwell_ms=4000)
    next_lease(study=study, annotator=voter)
    staff, _ = user_create_with_role(username="staff-fuzz", password=PASSWORD, role="researcher", staff=True)
    user_create_with_role(username="coord-fuzz", password=PASSWORD, role="coordinator")
    user_create_with_role(username="res-fuzz", password=PASSWORD, role="researcher")
    users = {"staff": "staff-fuzz", "coordinator": "coord-fuzz", "researcher": "res-fuzz", "annotator": "ann-fuzz"}
    return {role: api_token_issue(username=name) for role, name in users.items()}


def fuzz(operation, *, mode, examples: int, headers: dict, statuses: Counter) -> list[str]:
    """Run `examples` generated cases of one operation; the check failures, one line each."""
    failures = []

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=examples, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def exercise(case):
        response = case.call(headers=headers)
        statuses[response.status_code] += 1
        try:
            case.validate_response(response, checks=CHECKS, headers=headers)
        except (AssertionError, FailureGroup) as error:
            failures.append(f"{mode.value} {operation.label}: {str(error)[:800]}")

    try:
        exercise()
    except Unsatisfiable:  # an operation without inputs has no invalid variant to generate
        assert mode is GenerationMode.NEGATIVE, operation.label
    return failures


def test_api_fuzz_no_server_error_and_schema_conformance(app, tokens):
    staff = {"Authorization": f"Token {tokens['staff']}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", app, headers=staff)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15, [op.label for op in operations]
    failures, statuses = [], Counter()
    started = time.perf_counter()
    for role, modes, examples in ROLES:
        headers = {"Authorization": f"Token {tokens[role]}"}
        for operation in operations:
            for mode in modes:
                found = fuzz(operation, mode=mode, examples=examples, headers=headers, statuses=statuses)
                failures += [f"{role} {failure}" for failure in found]
    elapsed = time.perf_counter() - started
    calls = sum(statuses.values())
    print(
        f"\nfuzz: {calls} calls over {len(operations)} operations in {elapsed:.1f} s; statuses {sorted(statuses.items())}"
    )
    assert not failures, "\n\n".join(failures[:20])
    assert statuses[500] == 0
    # The fuzzer got past authentication and validation, not only refusals.
    assert statuses[200] >= 50 and statuses[400] >= 20 and statuses[403] >= 20, statuses
