"""Benchmark: compat's Dockerfile parser against the `dockerfile` package (PyPI; a wrapper of BuildKit's own Go
parser, github.com/asottile/dockerfile) on the Dockerfile corpus in tests/data/dockerfile (issue 12, item 7).

Prints, measured in one run:

- agreement on instruction splitting: per instruction, the keyword and the first line; then the arguments
  (continuation lines joined, comment lines inside dropped, whitespace runs collapsed; BuildKit's "original"
  text less its keyword) and the end line; and for heredocs the delimiters and bodies,
- the instructions where the two disagree (first few), so that each difference can be read,
- parse time of the whole corpus for each (best of N rounds, in-process, text already read).

`dockerfile` is not a dependency of compat: install it anywhere and point PYTHONPATH at it, e.g.
    pip download dockerfile --no-deps -d /tmp/df && pip install --no-deps --target /tmp/df/site /tmp/df/*.whl
    PYTHONPATH=/tmp/df/site:. python bench/bench_dockerfile_parser.py [ROUNDS]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "dockerfile"


def corpus() -> list[tuple[str, str]]:
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file() and "Dockerfile" in p.name)
    return [
        (p.relative_to(CORPUS).as_posix(), p.read_text(encoding="utf-8", errors="replace")) for p in files
    ]


# Syntax the corpus lacks (it has no heredoc): each case is a Dockerfile both parsers are asked to read.
EDGE_CASES: dict[str, str] = {
    "heredoc": "FROM a\nRUN <<EOF\npip install torch==2.1.0\nEOF\nRUN echo done\n",
    "heredoc-dash-quoted": "FROM a\nRUN <<-'END' python3\n\tprint(1)\n\tEND\n",
    "two-heredocs": "FROM a\nCOPY <<A <<B /dst/\none\nA\ntwo\nB\nRUN true\n",
    "heredoc-with-command": 'FROM a\nRUN <<EOF bash -ex\npip install "x<2"\nEOF\n',
    "heredoc-in-run-args": "FROM a\nRUN cat <<EOF > /f\nhello\nEOF\n",
    "here-string": "FROM a\nRUN cat <<<hello\nRUN echo\n",
    "continuation-comment": "FROM a\nRUN pip install \\\n# a comment\n    torch \\\n\n    numpy\n",
    "escape-backtick": "# escape=`\nFROM a\nRUN echo a `\n    b\n",
    "crlf": "FROM a\r\nRUN pip install \\\r\n  torch\r\n",
    "trailing-continuation": "FROM a\nRUN echo \\\n",
    "lowercase": "from a as b\nrun pip install x\n",
    "json-form": 'FROM a\nCMD ["python", "-c", "print(1)"]\n',
    "flags": "FROM --platform=linux/amd64 a\nRUN --mount=type=cache,target=/root/.cache pip install x\n",
    "unknown-instruction": "FROM a\nFOO bar\n",
    "unclosed-heredoc": "FROM a\nRUN <<EOF\npip install x\n",
    "empty": "",
    "comments-only": "# nothing\n\n# here\n",
    "onbuild": "FROM a\nONBUILD RUN pip install x\n",
    "blank-continuation-end": "FROM a\nRUN echo a \\\n\nRUN echo b\n",
}


def _ws(text: str) -> str:
    return " ".join(text.split())


def ours(text: str) -> list[dict[str, Any]]:
    from compat.dockerfile.parser import parse

    out = []
    for ins in parse(text).instructions:
        out.append(
            {
                "keyword": ins.keyword.upper(),
                "line": ins.line,
                "end": ins.end_line,
                "args": _ws(ins.args),
                "heredocs": [(h.name, h.body.rstrip("\n")) for h in ins.heredocs],
            }
        )
    return out


def theirs(text: str) -> list[dict[str, Any]]:
    import dockerfile  # type: ignore[import-not-found]  # optional: the BuildKit parser, installed by hand to compare

    out = []
    for c in dockerfile.parse_string(text):
        first = c.original.split("\n", 1)[0] if c.heredocs else c.original
        args = first[len(c.cmd) :] if first.upper().startswith(c.cmd.upper()) else first
        out.append(
            {
                "keyword": c.cmd.upper(),
                "line": c.start_line,
                "end": c.end_line,
                "args": _ws(args),
                "heredocs": [(h.name, h.content.rstrip("\n")) for h in c.heredocs],
            }
        )
    return out


def _strip_tabs(heredocs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(n, "\n".join(line.lstrip("\t") for line in b.split("\n"))) for n, b in heredocs]


def edge_cases() -> None:
    import dockerfile

    print("edge cases (syntax the corpus lacks):")
    for name, text in EDGE_CASES.items():
        try:
            a: Any = ours(text)
        except Exception as exc:
            a = f"refused: {str(exc)[:70]}"
        try:
            b: Any = theirs(text)
        except dockerfile.GoParseError as exc:
            b = f"refused: {str(exc)[:70]}"
        if isinstance(a, list) and isinstance(b, list):
            for x in a + b:
                x["heredocs"] = _strip_tabs(x["heredocs"])
        both_refuse = isinstance(a, str) and isinstance(b, str)
        verdict = "same" if a == b else "both refuse" if both_refuse else "DIFFERENT"
        print(f"  {name}: {verdict}")
        if a != b:
            print(f"    compat:   {a!r:.300}")
            print(f"    BuildKit: {b!r:.300}")


def compare(files: list[tuple[str, str]]) -> None:
    import dockerfile

    totals = {"files": 0, "instructions": 0, "split": 0, "args": 0, "end": 0, "heredoc": 0, "heredocs": 0}
    errors = {"ours": 0, "theirs": 0}
    diffs: list[str] = []
    for name, text in files:
        totals["files"] += 1
        try:
            a = ours(text)
        except Exception as exc:  # a finding of this benchmark, not a crash of it
            errors["ours"] += 1
            diffs.append(f"{name}: compat refuses it: {exc}")
            continue
        try:
            b = theirs(text)
        except dockerfile.GoParseError as exc:
            errors["theirs"] += 1
            diffs.append(f"{name}: BuildKit refuses it: {exc}")
            continue
        totals["instructions"] += len(b)
        ka = [(x["keyword"], x["line"]) for x in a]
        kb = [(x["keyword"], x["line"]) for x in b]
        if ka != kb:
            diffs.append(
                f"{name}: split differs: compat {len(ka)} instructions, BuildKit {len(kb)}: "
                f"first difference {next(((p, q) for p, q in zip(ka, kb, strict=False) if p != q), None)}"
            )
        by_line = {x["line"]: x for x in a}
        for x in b:
            y = by_line.get(x["line"])
            if y is None or y["keyword"] != x["keyword"]:
                continue
            totals["split"] += 1
            if y["args"] == x["args"] or (x["heredocs"] and y["args"].startswith(x["args"])):
                totals["args"] += 1
            elif len(diffs) < 40:
                diffs.append(
                    f"{name}:{x['line']} {x['keyword']} args: compat {y['args'][:90]!r} | "
                    f"BuildKit {x['args'][:90]!r}"
                )
            if y["end"] == x["end"]:
                totals["end"] += 1
            elif len(diffs) < 40:
                diffs.append(
                    f"{name}:{x['line']} {x['keyword']} end line: compat {y['end']}, BuildKit {x['end']}"
                )
            if x["heredocs"] or y["heredocs"]:
                totals["heredocs"] += 1
                # BuildKit's parser keeps a `<<-` body's leading tabs (they are removed when the heredoc is
                # used); compat strips them while parsing.
                if _strip_tabs(x["heredocs"]) == _strip_tabs(y["heredocs"]):
                    totals["heredoc"] += 1
                elif len(diffs) < 40:
                    diffs.append(
                        f"{name}:{x['line']} heredocs: compat {y['heredocs']!r:.120} | "
                        f"BuildKit {x['heredocs']!r:.120}"
                    )
    n = max(1, totals["instructions"])
    print(
        f"corpus: {totals['files']} files, {sum(len(t) for _, t in files) / 1024:.0f} KiB, "
        f"{totals['instructions']} instructions (BuildKit's count)"
    )
    print(f"refused: compat {errors['ours']}, BuildKit {errors['theirs']}")
    print(f"same keyword at the same line: {totals['split']}/{n} ({100 * totals['split'] / n:.1f}%)")
    print(
        f"same arguments: {totals['args']}/{totals['split']}; same end line: {totals['end']}/{totals['split']}"
    )
    print(f"same heredocs: {totals['heredoc']}/{totals['heredocs']} instructions with a heredoc")
    for d in diffs[:40]:
        print("  ", d)


def timing(files: list[tuple[str, str]], rounds: int) -> None:
    import dockerfile

    from compat.dockerfile.parser import parse

    texts = [t for _, t in files]

    def best(fn: Any) -> float:
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            for text in texts:
                try:
                    fn(text)
                except Exception:
                    pass
            times.append(time.perf_counter() - t)
        return min(times)

    t_ours = best(parse)
    t_theirs = best(dockerfile.parse_string)
    size = sum(len(t) for t in texts) / 1e6
    print(
        f"parse time, whole corpus (best of {rounds}): compat {1000 * t_ours:.1f} ms ({size / t_ours:.1f} MB/s), "
        f"BuildKit via dockerfile {1000 * t_theirs:.1f} ms ({size / t_theirs:.1f} MB/s); "
        f"ratio {t_theirs / t_ours:.2f}"
    )


def main() -> int:
    try:
        import dockerfile  # noqa: F401
    except ImportError:
        print("the `dockerfile` package is not importable: see this file's docstring", file=sys.stderr)
        return 2
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    files = corpus()
    compare(files)
    edge_cases()
    timing(files, rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
