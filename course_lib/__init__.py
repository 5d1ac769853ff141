"""course_lib: the small shared library of the course "RAG on messy HTML".

One module per pipeline stage: corpus -> parse -> chunking -> models/search -> evaluate.
Notebooks import from here and never redefine these functions.
"""

__version__ = "0.1.0"
