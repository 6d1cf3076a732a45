"""The RAG pipeline the workbook evaluates: retrieve, prompt, generate."""
