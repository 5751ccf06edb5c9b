"""The single-artifact and calibration screens can set an item aside: an artifact lease may be skipped (with the
annotator's reason), a calibration item marked skipped. Nothing stored changes."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0013_lease_pair_required")]

    operations = [
        migrations.AddField(model_name="artifactlease", name="skip_reason", field=models.TextField(blank=True)),
        migrations.AddField(
            model_name="calibrationanswer",
            name="skipped",
            field=models.BooleanField(default=False, help_text="set aside unanswered; never served again"),
        ),
        migrations.AlterField(
            model_name="artifactlease",
            name="state",
            field=models.CharField(
                choices=[("open", "Open"), ("submitted", "Submitted"), ("skipped", "Skipped")],
                default="open",
                max_length=10,
            ),
        ),
    ]
