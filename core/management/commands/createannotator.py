from core.management.role_command import RoleUserCommand
from core.roles import ANNOTATOR


class Command(RoleUserCommand):
    help = "Create (or update the password of) a user with the annotator role."
    role = ANNOTATOR
