"""What `make run` loads: sample accounts, and the synthetic demo (with PPTBench's scores when a copy is present)."""

from django.core.management.base import BaseCommand

from core.roles import ROLES
from core.services import user_create_with_role
from demo.sample_data import SAMPLE_LOADERS

SAMPLE_PASSWORD = "refig-sample"


class Command(BaseCommand):
    help = "Create the sample accounts (one per role) and load whatever sample data exists. Idempotent."

    def handle(self, *args, **options):
        from django.contrib.auth import get_user_model

        User = get_user_model()
        for role in ROLES:
            if not User.objects.filter(username=role).exists():
                user_create_with_role(username=role, password=SAMPLE_PASSWORD, role=role)
        if not User.objects.filter(username="admin").exists():
            User.objects.create_superuser("admin", "", SAMPLE_PASSWORD)
        for load in SAMPLE_LOADERS:
            message = load()
            if message:
                self.stdout.write(message)
        self.stdout.write(f"sample accounts: {', '.join(ROLES)}, admin (password {SAMPLE_PASSWORD!r})")
