"""ragworkbook: RAG evaluation, hands-on.

The package the workbook's notebooks import. Importing it is cheap: heavy
dependencies (torch, sentence-transformers, llama.cpp, NLTK) are imported only
inside the functions that need them.
"""

__version__ = "0.1.0"
