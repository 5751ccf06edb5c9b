from core.management.role_command import RoleUserCommand
from core.roles import RESEARCHER


class Command(RoleUserCommand):
    help = "Create (or update the password of) a user with the researcher role."
    role = RESEARCHER
