"""Data files: eval sets and corpora, chunking, keyword ground truth, PDFs, TREC qrels and runs."""
