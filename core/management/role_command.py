"""Shared body of createannotator / createcoordinator / createresearcher."""

import getpass
import os
import sys

from django.core.management.base import BaseCommand, CommandError

from core.services import user_create_with_role


class RoleUserCommand(BaseCommand):
    role = ""

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument("--password", help="default: $REFIG_PASSWORD, else asked interactively")
        parser.add_argument("--staff", action="store_true", help="also allow the admin site")

    def handle(self, *args, username, email, password, staff, **options):
        password = password or os.environ.get("REFIG_PASSWORD")
        if not password:
            if not sys.stdin.isatty():
                raise CommandError("no password: pass --password or set REFIG_PASSWORD")
            password = getpass.getpass(f"Password for {username}: ")
        user, created = user_create_with_role(
            username=username, password=password, role=self.role, email=email, staff=staff
        )
        self.stdout.write(f"{'created' if created else 'updated'} {self.role} {user.username}")
