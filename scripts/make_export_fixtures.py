"""Write tests/data/exports: the same answered questions exported by the tools themselves.

Each file is written by the tool's own export method, never by hand, so the readers of
:mod:`ragworkbook.corpus.answers` are tested on what the tools really write:

- ragas (``EvaluationDataset``): ``to_jsonl``, ``to_csv``, ``to_pandas().to_json``, and through
  ``to_hf_dataset()``: Hugging Face ``datasets``' ``to_csv`` (list cells as numpy arrays' text,
  ``['p7-c1' 'p7-c2']``), ``to_json`` and ``to_parquet``;
- Hugging Face ``datasets`` (``Dataset.from_list``): ``to_csv``, ``to_json``, ``to_parquet``;
- deepeval (``EvaluationDataset.save_as``): ``json``, ``jsonl``, ``csv`` (lists joined by ``|``);
- pandas (``DataFrame``): ``to_csv`` (Python list literals), ``to_json`` in each orient with column
  names (records, split, index, columns, table; and records as JSON Lines), ``to_parquet``.

``reference.jsonl`` holds the same samples as the workbook writes them (``json.dumps``), and
``reference_deepeval.jsonl`` the fields deepeval keeps (it has no ids). ``MANIFEST.json`` names the
tool and version behind each file. The samples are the project's own text (a few lines about the
Transformer), short, with what trips readers up: commas, quotes, newlines, non-Latin text, and
contexts long enough for numpy to wrap its array text over lines.

Run it where the tools are installed (a tool that is missing is skipped and said so)::

    python scripts/make_export_fixtures.py [OUT_DIR]    # default: tests/data/exports

The files are deterministic for given tool versions; the tests read them and never need the tools.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")  # no network from deepeval's import
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]

#: The samples: RAGAS 0.2+ field names, with ids as RAGAS has them (retrieved / reference context ids).
SAMPLES: list[dict[str, Any]] = [
    {
        "user_input": "How many attention heads does the base Transformer use?",
        "response": "It uses 8 parallel attention heads, each of dimension 64.",
        "retrieved_contexts": [
            "In this work we employ h = 8 parallel attention layers, or heads. For each of these we use "
            "d_k = d_v = d_model/h = 64.",
            "Multi-head attention allows the model to jointly attend to information from different "
            "representation subspaces at different positions.",
            "The encoder is composed of a stack of N = 6 identical layers.",
        ],
        "retrieved_context_ids": ["p5-c2", "p5-c1", "p3-c1"],
        "reference": "8 heads",
        "reference_context_ids": ["p5-c2"],
        "reference_contexts": ["In this work we employ h = 8 parallel attention layers, or heads."],
    },
    {
        "user_input": "Which optimizer was used, and with which betas?",
        "response": 'Adam, with "beta1 = 0.9" and beta2 = 0.98.',
        "retrieved_contexts": [
            "We used the Adam optimizer with beta1 = 0.9, beta2 = 0.98 and epsilon = 1e-9.\n"
            "We varied the learning rate over the course of training.",
            "It's the warmup_steps = 4000 that sets the schedule's peak.",
        ],
        "retrieved_context_ids": ["p7-c1", "p7-c2"],
        "reference": "Adam (beta1 = 0.9, beta2 = 0.98)",
        "reference_context_ids": ["p7-c1", "p7-c3"],
        "reference_contexts": [
            "We used the Adam optimizer with beta1 = 0.9, beta2 = 0.98 and epsilon = 1e-9.",
        ],
    },
    {
        "user_input": "Что такое позиционное кодирование?",
        "response": "Синусоидальные функции разной частоты, добавленные к эмбеддингам.",
        "retrieved_contexts": [
            "Позиционное кодирование: синусоидальные функции разной частоты.",
            "位置编码使用不同频率的正弦和余弦函数。",
        ],
        "retrieved_context_ids": ["ru-1", "zh-1"],
        "reference": "Синусоидальные функции разной частоты.",
        "reference_context_ids": ["ru-1"],
        "reference_contexts": ["Позиционное кодирование: синусоидальные функции разной частоты."],
    },
    {
        "user_input": "What BLEU did the big model reach on English-to-German?",
        "response": "28.4 BLEU on WMT 2014 English-to-German.",
        "retrieved_contexts": [],
        "retrieved_context_ids": [],
        "reference": "28.4",
        "reference_context_ids": ["p8-c1"],
        "reference_contexts": ["The big transformer model achieves 28.4 BLEU on English-to-German."],
    },
]

#: What deepeval keeps of a sample (its ``Golden``): no ids of any kind.
DEEPEVAL_NAMES = {"user_input": "input", "response": "actual_output", "reference": "expected_output",
                  "retrieved_contexts": "retrieval_context", "reference_contexts": "context"}


def _version(module: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:  # noqa: BLE001 - not installed
        return None


def write_reference(out: Path, manifest: dict[str, Any]) -> None:
    with open(out / "reference.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(s, ensure_ascii=False) + "\n" for s in SAMPLES)
    manifest["reference.jsonl"] = {"tool": "json", "fields": "all"}
    with open(out / "reference_deepeval.jsonl", "w", encoding="utf-8") as fh:
        for s in SAMPLES:
            fh.write(json.dumps({DEEPEVAL_NAMES[k]: v for k, v in s.items() if k in DEEPEVAL_NAMES},
                                ensure_ascii=False) + "\n")
    manifest["reference_deepeval.jsonl"] = {"tool": "json", "fields": "deepeval"}


def write_pandas(out: Path, manifest: dict[str, Any]) -> None:
    import pandas as pd

    v = f"pandas {pd.__version__}"
    df = pd.DataFrame(SAMPLES)
    df.to_csv(out / "pandas.csv", index=False)
    manifest["pandas.csv"] = {"tool": v, "call": "DataFrame.to_csv(index=False)", "fields": "all"}
    for orient in ("records", "split", "index", "columns", "table"):
        name = f"pandas_{orient}.json"
        df.to_json(out / name, orient=orient, force_ascii=False)
        manifest[name] = {"tool": v, "call": f"DataFrame.to_json(orient={orient!r})", "fields": "all"}
    df.to_json(out / "pandas_lines.jsonl", orient="records", lines=True, force_ascii=False)
    manifest["pandas_lines.jsonl"] = {"tool": v, "call": "DataFrame.to_json(orient='records', lines=True)",
                                      "fields": "all"}
    try:
        df.to_parquet(out / "pandas.parquet", index=False)
        manifest["pandas.parquet"] = {"tool": f"{v}, pyarrow {_version('pyarrow')}",
                                      "call": "DataFrame.to_parquet(index=False)", "fields": "all"}
    except ImportError as exc:
        print(f"pandas.parquet skipped: {exc}", file=sys.stderr)


def write_datasets(out: Path, manifest: dict[str, Any], ds: Any, prefix: str, via: str, fields: str) -> None:
    v = f"{via}, datasets {_version('datasets')}"
    ds.to_csv(str(out / f"{prefix}.csv"), index=False)
    manifest[f"{prefix}.csv"] = {"tool": v, "call": "Dataset.to_csv(index=False)", "fields": fields}
    ds.to_json(str(out / f"{prefix}.jsonl"), force_ascii=False)
    manifest[f"{prefix}.jsonl"] = {"tool": v, "call": "Dataset.to_json()", "fields": fields}
    ds.to_parquet(str(out / f"{prefix}.parquet"))
    manifest[f"{prefix}.parquet"] = {"tool": v, "call": "Dataset.to_parquet()", "fields": fields}


def write_hf(out: Path, manifest: dict[str, Any]) -> None:
    from datasets import Dataset

    write_datasets(out, manifest, Dataset.from_list(SAMPLES), "hf", "Dataset.from_list", "all")


def write_ragas(out: Path, manifest: dict[str, Any]) -> None:
    from ragas import EvaluationDataset, SingleTurnSample

    v = f"ragas {_version('ragas')}"
    known = set(SingleTurnSample.model_fields)
    kept = sorted(k for k in SAMPLES[0] if k in known)
    dropped = sorted(k for k in SAMPLES[0] if k not in known)
    if dropped:
        print(f"ragas: SingleTurnSample has no field {', '.join(dropped)}", file=sys.stderr)
    data = EvaluationDataset(samples=[SingleTurnSample(**{k: s[k] for k in kept}) for s in SAMPLES])
    fields = "all" if not dropped else "ragas"
    data.to_jsonl(str(out / "ragas.jsonl"))
    manifest["ragas.jsonl"] = {"tool": v, "call": "EvaluationDataset.to_jsonl", "fields": fields}
    data.to_csv(str(out / "ragas.csv"))
    manifest["ragas.csv"] = {"tool": v, "call": "EvaluationDataset.to_csv", "fields": fields}
    data.to_pandas().to_json(out / "ragas_pandas.json", force_ascii=False)
    manifest["ragas_pandas.json"] = {"tool": f"{v}, pandas {_version('pandas')}",
                                     "call": "EvaluationDataset.to_pandas().to_json()", "fields": fields}
    try:
        hf = data.to_hf_dataset()
    except ImportError as exc:
        print(f"ragas to_hf_dataset skipped: {exc}", file=sys.stderr)
        return
    write_datasets(out, manifest, hf, "ragas_hf", f"{v} EvaluationDataset.to_hf_dataset()", fields)


def write_deepeval(out: Path, manifest: dict[str, Any]) -> None:
    from deepeval.dataset import EvaluationDataset, Golden

    v = f"deepeval {_version('deepeval')}"
    goldens = [Golden(**{DEEPEVAL_NAMES[k]: val for k, val in s.items() if k in DEEPEVAL_NAMES})
               for s in SAMPLES]
    data = EvaluationDataset(goldens=goldens)
    for kind in ("json", "jsonl", "csv"):
        data.save_as(file_type=kind, directory=str(out), file_name="deepeval")
        manifest[f"deepeval.{kind}"] = {"tool": v, "call": f"EvaluationDataset.save_as(file_type={kind!r})",
                                        "fields": "deepeval"}


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "tests" / "data" / "exports"
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {}
    write_reference(out, manifest)
    for name, writer in (("pandas", write_pandas), ("datasets", write_hf), ("ragas", write_ragas),
                         ("deepeval", write_deepeval)):
        try:
            with tempfile.TemporaryDirectory() as home:  # the tools' caches stay out of the user's home
                os.environ.setdefault("HF_HOME", home)
                writer(out, manifest)
        except ImportError as exc:
            print(f"{name}: not installed, its files are not written ({exc})", file=sys.stderr)
    text = json.dumps(dict(sorted(manifest.items())), indent=1, ensure_ascii=False) + "\n"
    (out / "MANIFEST.json").write_text(text, encoding="utf-8")
    print(f"wrote {len(manifest)} files to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
