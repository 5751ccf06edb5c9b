"""Screening studies: the kind, and the screeners' accept / reject decisions on candidate figures (one per screener
and figure; a skip is a row without a decision)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0014_task_screen_skips'),
        ('corpus', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='study',
            name='kind',
            field=models.CharField(choices=[('pairwise', 'Pairwise'), ('gate_review', 'Gate Review'), ('rating', 'Rating'), ('screening', 'Screening')], default='pairwise', max_length=12),
        ),
        migrations.CreateModel(
            name='ScreeningDecision',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('accepted', models.BooleanField(help_text='empty: set aside (skipped) without a decision', null=True)),
                ('reason', models.TextField(blank=True, help_text='why: required to reject or skip, optional to accept')),
                ('decided_at', models.DateTimeField(auto_now_add=True)),
                ('annotator', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='screening_decisions', to=settings.AUTH_USER_MODEL)),
                ('figure', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='corpus.figure')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='screening_decisions', to='annotation.study')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('study', 'figure', 'annotator'), name='one_screening_decision_per_annotator')],
            },
        ),
    ]
