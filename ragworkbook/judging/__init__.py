"""The LLM judge, the judged metrics (RAGAS-style metrics, the RAG triad, the pairwise judge), and how the
judge itself is measured (public labelled data, ``judge-check``, reliability cards)."""
