"""What the annotation services refuse, as the kernel's application errors (core.errors maps them to HTTP)."""

from core.errors import Conflict, Forbidden, Invalid, NotFound


class LeaseNotFound(NotFound):
    pass


class LeaseForeign(Forbidden):
    pass


class LeaseClosed(Conflict):
    pass


class StudyUnavailable(Conflict):
    code = "study_unavailable"


class VoteInvalid(Invalid):
    pass
