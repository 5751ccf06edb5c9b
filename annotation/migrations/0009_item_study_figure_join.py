import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """A join, not a column: Item.study_figure reads the (study, figure) columns it already has."""

    dependencies = [("annotation", "0008_study_pool_freshness")]

    operations = [
        migrations.AddField(
            model_name="item",
            name="study_figure",
            field=models.ForeignObject(
                from_fields=["study", "figure"],
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="annotation.studyfigure",
                to_fields=["study", "figure"],
            ),
        ),
    ]
