"""What `make run` loads: sample accounts, and the real sample data that ships with the repository."""
from django.core.management.base import BaseCommand

from corpus.services import user_create_with_role
from corpus.roles import ROLES

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
        from corpus.sample_data import SAMPLE_LOADERS

        for loader in SAMPLE_LOADERS:
            message = loader()
            if message:
                self.stdout.write(message)
        self.stdout.write(f"sample accounts: {', '.join(ROLES)}, admin (password {SAMPLE_PASSWORD!r})")
