# synthetic demo: stands in for the agent's python-pptx code (not executed)
from pptx import Presentation
from pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE

LABELS = ["Embedding", "Cross Attention", "Alignment", "Answer Head", ...]
deck = Presentation()
slide = deck.slides.add_slide(deck.slide_layouts[6])
# ... one shape per module, one connector per arrow ...
deck.save('output.pptx')
