"""System names of imported battles: kept as given, slugs derived reversibly (annotation.system_names, pure)."""

import pytest

from annotation.system_names import system_name, system_slug

# Worked by hand: `/` is 0x2f, `.` 0x2e, `_` 0x5f, `é` the UTF-8 bytes c3 a9, a space 0x20.
KNOWN = {
    "Qwen/Qwen2.5-72B-Instruct": "Qwen_2fQwen2_2e5-72B-Instruct",
    "Qwen__Qwen2.5-72B-Instruct": "Qwen_5f_5fQwen2_2e5-72B-Instruct",
    "gpt-4o": "gpt-4o",
    "GPT-4o": "GPT-4o",
    "café au lait": "caf_c3_a9_20au_20lait",
}


@pytest.mark.parametrize(("name", "slug"), KNOWN.items())
def test_slugs_by_hand_and_back(name, slug):
    assert system_slug(name) == slug
    assert system_name(slug) == name


def test_distinct_names_never_share_a_slug():
    names = ["A_b", "A/b", "a/b", "A.b", "A__b", "A_5fb", "A-b", "Ab"]
    assert len({system_slug(n) for n in names}) == len(names)
    assert all(system_name(system_slug(n)) == n for n in names)


@pytest.mark.parametrize("slug", ["a_2", "a_zz", "a_2F", "a.b", "_41"])
def test_text_no_name_derives_to_is_refused(slug):
    with pytest.raises(ValueError):
        system_name(slug)


def test_an_empty_name_has_no_slug():
    with pytest.raises(ValueError):
        system_slug("")
