from corpus.management.role_command import RoleUserCommand
from corpus.roles import COORDINATOR


class Command(RoleUserCommand):
    help = "Create (or update the password of) a user with the coordinator role."
    role = COORDINATOR
