"""The LLM judge and the judged metrics (RAGAS-style metrics, the RAG triad)."""
