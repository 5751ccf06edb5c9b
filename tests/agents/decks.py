"""Real PPTX files built with python-pptx for artifact tests."""

from pathlib import Path

from pptx import Presentation
from pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE
from pptx.util import Inches, Pt


def one_slide_deck(path: Path, *, title: str = "Encoder → Decoder", boxes: int = 3) -> Path:
    deck = Presentation()
    deck.slide_width, deck.slide_height = Inches(13.333), Inches(7.5)
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    heading = slide.shapes.add_textbox(Inches(0.5), Inches(0.3), Inches(8), Inches(0.8))
    heading.text_frame.text = title
    heading.text_frame.paragraphs[0].runs[0].font.size = Pt(28)
    shapes = []
    for index in range(boxes):
        box = slide.shapes.add_shape(
            MSO_SHAPE.ROUNDED_RECTANGLE, Inches(0.7 + 4 * index), Inches(2.5), Inches(3), Inches(1.5)
        )
        box.text_frame.text = f"Stage {index + 1}"
        shapes.append(box)
    for left, right in zip(shapes, shapes[1:]):
        connector = slide.shapes.add_connector(MSO_CONNECTOR.STRAIGHT, 0, 0, 0, 0)
        connector.begin_connect(left, 3)
        connector.end_connect(right, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    deck.save(path)
    return path


def multi_slide_deck(path: Path, slides: int = 3) -> Path:
    deck = Presentation()
    for index in range(slides):
        deck.slides.add_slide(deck.slide_layouts[6]).shapes.add_textbox(
            Inches(1), Inches(1), Inches(4), Inches(1)
        ).text_frame.text = f"slide {index}"
    path.parent.mkdir(parents=True, exist_ok=True)
    deck.save(path)
    return path
