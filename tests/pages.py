"""Reading served pages in tests."""

import re

# Django masks its CSRF token afresh on every page: 64 random letters and digits, which now and then spell a word a
# test looks for ("...2slugwx..." once failed a check that a page never says "slug").
_CSRF_TOKEN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{64}(?![A-Za-z0-9])")


def without_csrf_tokens(page: str) -> str:
    """The page with every CSRF token taken out, for checks that a word is absent. Any other run of exactly 64
    letters and digits goes too (a sha256 in hex): only use it where such a run cannot hide the word."""
    return _CSRF_TOKEN.sub("", page)
