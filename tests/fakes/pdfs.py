"""PDFs the tests make with pypdf's own writer: one Helvetica text line per string, one page per list."""

from __future__ import annotations

from pathlib import Path


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(path: Path, pages: list[list[str]]) -> Path:
    """Write a PDF with ``pages`` (each a list of text lines) through :class:`pypdf.PdfWriter`."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = DictionaryObject({
        NameObject("/Type"): NameObject("/Font"),
        NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
        NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
    })
    font_ref = writer._add_object(font)
    for lines in pages:
        page = writer.add_blank_page(width=595, height=842)
        ops = ["BT", "/F1 9 Tf", "11 TL", "40 800 Td"] + [f"({_escape(ln)}) Tj T*" for ln in lines] + ["ET"]
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject({
            NameObject("/Font"): DictionaryObject({NameObject("/F1"): font_ref})})
    with open(path, "wb") as fh:
        writer.write(fh)
    return path


def wrap(text: str, width: int = 90, keep: tuple[str, ...] = ("h = 8", "N = 6", "12 hours")) -> list[str]:
    """``text`` as lines of at most ``width`` characters, never breaking inside a ``keep`` phrase."""
    for k in keep:
        text = text.replace(k, k.replace(" ", "\x00"))
    lines, cur = [], ""
    for w in text.split():
        if cur and len(cur) + len(w) + 1 > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return [ln.replace("\x00", " ") for ln in lines + ([cur] if cur else [])]
