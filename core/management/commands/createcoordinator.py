from core.management.role_command import RoleUserCommand
from core.roles import COORDINATOR


class Command(RoleUserCommand):
    help = "Create (or update the password of) a user with the coordinator role."
    role = COORDINATOR
