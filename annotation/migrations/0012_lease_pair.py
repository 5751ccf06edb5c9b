"""Each lease carries its item's pair (config_x, config_y): added empty, filled from the items, then required
(0013)."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def leases_pairs_copy(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    Lease = apps.get_model("annotation", "Lease")
    item = Item.objects.filter(pk=OuterRef("item_id"))
    Lease.objects.using(schema_editor.connection.alias).update(
        config_x_id=Subquery(item.values("config_x_id")[:1]), config_y_id=Subquery(item.values("config_y_id")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0001_initial"),
        ("annotation", "0011_lease_study_annotator"),
    ]

    operations = [
        migrations.AddField(
            model_name="lease",
            name="config_x",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=models.deletion.CASCADE,
                related_name="+",
                to="agents.configuration",
            ),
        ),
        migrations.AddField(
            model_name="lease",
            name="config_y",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=models.deletion.CASCADE,
                related_name="+",
                to="agents.configuration",
            ),
        ),
        migrations.RunPython(leases_pairs_copy, migrations.RunPython.noop),
    ]
