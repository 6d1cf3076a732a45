"""Workbook helpers: widgets, the documented-numbers checklist, the quality model, the environment doctor."""
