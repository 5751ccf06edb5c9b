from django.core.management.base import BaseCommand, CommandError

from core.errors import AppError
from core.services import api_token_issue


class Command(BaseCommand):
    help = "Print the API token of USER (creating it on first use); scripts send `Authorization: Token <key>`."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--reset", action="store_true", help="replace the token; the old one stops working")

    def handle(self, *args, username, reset, **options):
        try:
            key = api_token_issue(username=username, reset=reset)
        except AppError as error:
            raise CommandError(error.detail) from None
        self.stdout.write(key)
