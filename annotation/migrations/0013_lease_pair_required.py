"""Every lease has its pair now (0012 copied it from the items): required from here on."""

from django.db import migrations, models


def _pair_field() -> models.ForeignKey:
    return models.ForeignKey(
        db_constraint=False,
        db_index=False,
        on_delete=models.deletion.CASCADE,
        related_name="+",
        to="agents.configuration",
    )


class Migration(migrations.Migration):
    dependencies = [("annotation", "0012_lease_pair")]

    operations = [
        migrations.AlterField(model_name="lease", name="config_x", field=_pair_field()),
        migrations.AlterField(model_name="lease", name="config_y", field=_pair_field()),
    ]
