"""retrograd.viz: draw the recorded graph (``draw``) as Graphviz DOT text and pictures.

Producing DOT needs only retrograd; rendering needs Graphviz's ``dot`` program (and uses
the ``graphviz`` Python package when installed: ``pip install 'retrograd[viz]'``).
"""

from .dot import Graph, GraphvizNotFoundError
from .forward import draw  # dot.draw, plus forward-mode traces (tangents on the edges)

__all__ = ["draw", "Graph", "GraphvizNotFoundError"]
