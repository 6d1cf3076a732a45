"""The running examples several notebooks' exercises share: the carbon-pricing ranking of notebooks 01-02
and the BLEU question of notebooks 05-06 (its reference and the wrong answer C3)."""

from __future__ import annotations

import json

from ragworkbook.paths import data_path

#: the reference answer to "What BLEU score did they get on English-to-German translation?"
REFERENCE = "The big model achieved a BLEU score of 28.4 on English-to-German translation."
#: the wrong answer C3 of notebooks 05-06: fluent, close in words, and 41.0 where the reference says 28.4
C3 = ("The paper reports that their big model achieved a BLEU score of 41.0 on the WMT 2014 "
      "English-to-German translation task.")


def carbon() -> tuple[list[str], dict[str, int]]:
    """The carbon-pricing ranking (chunk ids in rank order) and the grade of every chunk."""
    data = json.loads(data_path("carbon_pricing.json").read_text(encoding="utf-8"))
    return [c["id"] for c in data["chunks"]], {c["id"]: c["grade"] for c in data["chunks"]}
