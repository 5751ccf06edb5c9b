"""Keyed pseudonyms (core.pseudonyms) and the licence allow-list (corpus.licences): pure, no database. Known answers
come from the standard library's hmac directly."""

import hashlib
import hmac
import os
import stat
import threading

import pandas as pd
import pytest

from core.pseudonyms import key_file_read_or_create, pseudonym, pseudonymise_frame
from corpus.licences import licence_classify

KEY = b"test-key"


def test_pseudonym_is_the_keyed_hmac_prefix():
    expected = "annotator-" + hmac.new(KEY, b"alice", hashlib.sha256).hexdigest()[:8]
    assert pseudonym("alice", key=KEY) == expected
    assert pseudonym("alice", key=b"other") != expected
    assert pseudonym(expected, key=KEY) == expected  # an already pseudonymous name (re-imported export) stays


def test_frame_person_columns_are_mapped_and_others_kept():
    frame = pd.DataFrame(
        {
            "annotator": ["alice", "bob", ""],
            "annotator_a": ["alice", None, "bob"],
            "reviewer_b": ["bob", "bob", "alice"],
            "decided_by": ["carol", "", None],
            "annotators": [3, 3, 3],
            "reason": ["alice", "x", "y"],
        }
    )
    mapped = pseudonymise_frame(frame, key=KEY)
    a, b = pseudonym("alice", key=KEY), pseudonym("bob", key=KEY)
    assert list(mapped["annotator"]) == [a, b, ""]
    assert mapped["annotator_a"][0] == a and pd.isna(mapped["annotator_a"][1])
    assert list(mapped["reviewer_b"]) == [b, b, a]
    assert mapped["decided_by"][0] == pseudonym("carol", key=KEY)
    assert list(mapped["annotators"]) == [3, 3, 3] and mapped["reason"][0] == "alice"
    assert frame["annotator"][0] == "alice"  # the input is not changed


def test_key_file_is_created_once_private_and_kept(tmp_path):
    path = tmp_path / "var" / "pseudonym.key"
    keys = []
    threads = [threading.Thread(target=lambda: keys.append(key_file_read_or_create(path))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(keys)) == 1 and len(keys[0]) == 64
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert key_file_read_or_create(path) == keys[0]
    assert [p.name for p in path.parent.iterdir()] == ["pseudonym.key"]  # no temporary left behind


def test_the_key_is_never_secret_key(settings, tmp_path):
    from core.pseudonyms import pseudonym_key

    settings.VAR_DIR = tmp_path
    settings.REFIG_PSEUDONYM_KEY = ""
    assert pseudonym_key() != settings.SECRET_KEY.encode()
    settings.REFIG_PSEUDONYM_KEY = "from-the-environment"
    assert pseudonym_key() == b"from-the-environment"


@pytest.mark.parametrize(
    "text, url, redistributable, name",
    [
        ("CC-BY-4.0", "", True, "CC-BY-4.0"),
        ("CC BY 4.0", "", True, "CC-BY-4.0"),
        ("cc by 2.0", "", True, "CC-BY-2.0"),
        ("", "https://creativecommons.org/licenses/by/4.0/", True, "CC-BY-4.0"),
        ("", "http://creativecommons.org/licenses/by/3.0/", True, "CC-BY-3.0"),
        ("Creative Commons Attribution 4.0 International", "", True, "CC-BY-4.0"),
        ("CC BY-SA 4.0", "", True, "CC-BY-SA-4.0"),
        ("Creative Commons Attribution-ShareAlike 4.0 International", "", True, "CC-BY-SA-4.0"),
        ("", "https://creativecommons.org/licenses/by-sa/4.0/", True, "CC-BY-SA-4.0"),
        ("CC0", "", True, "CC0-1.0"),
        ("CC0 1.0 Universal", "", True, "CC0-1.0"),
        ("", "http://creativecommons.org/publicdomain/zero/1.0/", True, "CC0-1.0"),
        ("Public Domain Mark 1.0", "", True, "PDM-1.0"),
        ("public domain", "", True, "PDM-1.0"),
        ("", "https://creativecommons.org/publicdomain/mark/1.0/", True, "PDM-1.0"),
        ("CC BY-NC 4.0", "", False, "CC-BY-NC-4.0"),
        ("CC-BY-NC-SA-4.0", "", False, "CC-BY-NC-SA-4.0"),
        ("Creative Commons Attribution-NonCommercial-NoDerivatives 4.0", "", False, "CC-BY-NC-ND-4.0"),
        ("", "http://creativecommons.org/licenses/by-nc-nd/4.0/", False, "CC-BY-NC-ND-4.0"),
        ("CC BY-ND 4.0", "", False, "CC-BY-ND-4.0"),
        ("", "http://arxiv.org/licenses/nonexclusive-distrib/1.0/", False, "arXiv-nonexclusive-distrib-1.0"),
        ("arXiv.org perpetual, non-exclusive license", "", False, "arXiv-nonexclusive-distrib-1.0"),
        # Text and URL disagreeing: the stricter reading wins.
        ("CC BY 4.0", "http://arxiv.org/licenses/nonexclusive-distrib/1.0/", False, "arXiv-nonexclusive-distrib-1.0"),
        ("", "", False, "unknown"),
        ("all rights reserved", "", False, "unknown"),
        ("", "https://example.org/licence", False, "unknown"),
    ],
)
def test_licence_spellings(text, url, redistributable, name):
    assert tuple(licence_classify(text, url)) == (redistributable, name)


def test_a_named_licence_is_included_on_request():
    arxiv = "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    assert licence_classify("CC BY-NC 4.0", include=["CC-BY-NC-4.0"]).redistributable
    assert licence_classify("CC BY-NC 4.0", include=["CC BY-NC 4.0"]).redistributable
    assert licence_classify("CC BY-NC 3.0", include=["CC-BY-NC"]).redistributable  # no version: every version
    assert not licence_classify("CC BY-NC-ND 4.0", include=["CC-BY-NC"]).redistributable
    assert licence_classify("", arxiv, include=["arXiv-nonexclusive-distrib-1.0"]).redistributable
    assert licence_classify("", include=["unknown"]).redistributable
    assert not licence_classify("", include=["CC-BY-NC-4.0"]).redistributable
