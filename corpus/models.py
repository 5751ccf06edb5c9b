from django.db import models

DEFAULT_FIELDS: tuple[str, ...] = ("cs.AI", "cs.CL", "cs.CV", "cs.LG")


class Figure(models.Model):
    """One source figure and its ORBIT provenance record; one per arXiv base id."""

    class Orientation(models.TextChoices):
        LANDSCAPE = "landscape"
        PORTRAIT = "portrait"
        SQUARE = "square"

    task_id = models.CharField(max_length=64, unique=True)
    arxiv_id = models.CharField(max_length=64)
    arxiv_base_id = models.CharField(max_length=64, unique=True)
    arxiv_version = models.CharField(max_length=16)
    title = models.TextField()
    authors = models.JSONField(default=list)
    abs_url = models.URLField(max_length=500)
    pdf_url = models.URLField(max_length=500)
    source_url = models.URLField(max_length=500)
    license = models.CharField(max_length=200)
    license_url = models.URLField(max_length=500, blank=True)
    caption = models.TextField(blank=True)
    label = models.CharField(max_length=200, blank=True)
    source_path = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64, db_index=True)
    selection_score = models.FloatField()
    selection_evidence = models.JSONField(default=list)
    field = models.CharField(max_length=32, db_index=True)
    manifest_image = models.CharField(max_length=500, help_text="image path as given in the manifest")

    # Derived image facts, read at import.
    image = models.FileField(upload_to="corpus/", max_length=300)
    image_format = models.CharField(max_length=16)
    image_mode = models.CharField(max_length=16)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    megapixels = models.FloatField()
    orientation = models.CharField(max_length=10, choices=Orientation.choices)
    file_size = models.PositiveBigIntegerField()

    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task_id"]

    def __str__(self) -> str:
        return self.task_id
