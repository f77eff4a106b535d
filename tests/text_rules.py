"""What a reviewer sends back in generated prose: doubled words, repeated sentences, a/an that does not fit the
sound of the next word, and definitions that name the thing by itself ("a GPU with compute capability 12.0 has
compute capability 12.0")."""

from __future__ import annotations

import re

# Acronyms are spelled out letter by letter unless listed here as read as a word. A spelled-out acronym takes "an"
# when the name of its first letter starts with a vowel sound: "an NVML", "an SM", "an Xid", "a GPU", "a PTX".
_VOWEL_NAMED_LETTERS = set("AEFHILMNORSX")
# Read as a word: the article follows the sound of that word ("a NCCL" is "a nickel", "an ALLREDUCE", "a SIGKILL").
_READ_AS_WORD = {
    "ALLREDUCE": "an",
    "ALLGATHER": "an",
    "CUDA": "a",
    "NCCL": "a",
    "NUMA": "a",
    "MIG": "a",
    "SASS": "a",
    "RAM": "a",
    "ROCM": "a",
    "NAN": "a",
    "HIP": "a",
    "SLURM": "a",
    "MAGMA": "a",
    "LAPACK": "a",
    "JAX": "a",
    "ONNX": "an",
    "EULA": "a",
    "SIGKILL": "a",
    "SIGSEGV": "a",
    "SIGBUS": "a",
    "SIGTERM": "a",
    "SIGABRT": "a",
    "SIGILL": "a",
    "SIGINT": "a",
    "SIGFPE": "a",
    "SIGPIPE": "a",
    "PYTHONPATH": "a",
    "PYTORCH": "a",
    "NVIDIA": "an",
}
_ARTICLE_ACRONYM = re.compile(r"\b(an?|An?)\s+([A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9_]*)")
# Lower-case words: a word starting with a vowel letter takes "an" unless it sounds like "you"/"one"; a consonant
# takes "a" unless its h is silent. Lower-case abbreviations (nvcc, sm_80, fp16) are spelled out: skipped.
_ARTICLE_WORD = re.compile(r"\b(an?|An?)\s+([a-z][a-z-]+)\b")
_YOU_OR_ONE = ("uni", "use", "usu", "uti", "ubi", "one", "once", "eu", "ur")
_SILENT_H = ("hour", "honest", "honor", "heir")
_SPELLED_LOWER = {
    "nvcc",
    "nvml",
    "smi",
    "mps",
    "rpm",
    "lts",
    "llvm",
    "xid",
    "rdma",
    "fft",
    "mkl",
    "mpi",
    "html",
    "http",
    "https",
    "svg",
    "ssh",
    "nfs",
    "hbm",
    "oom",
    "ecc",
    "sxm",
    "fsdp",
    "hf",
    "lxc",
    "mmap",
    "nvlink",
}


def expected_article(word: str) -> str:
    """'a' or 'an' for an upper-case acronym (or a name starting with one: NVLink, PCIe)."""
    head = word.split("_", 1)[0].upper()
    if head in _READ_AS_WORD:
        return _READ_AS_WORD[head]
    if head.startswith("SIG"):  # SIGKILL, SIGXCPU: "sig-"
        return "a"
    return "an" if head[:1] in _VOWEL_NAMED_LETTERS else "a"


_ARTICLE_NUMBER = re.compile(r"\b(an?|An?)\s+(\d[\d,]*)")


def number_article(number: str) -> str:
    """'an' for a number read with a vowel first: 8, 11, 18, 80-89, 800, 8000, 11000, 18 million; else 'a'."""
    digits = number.replace(",", "")
    lead = digits[: len(digits) % 3 or 3]
    return "an" if lead.startswith("8") or lead in ("11", "18") else "a"


def _article_problems(text: str) -> list[str]:
    out = []
    for m in _ARTICLE_NUMBER.finditer(text):
        want = number_article(m.group(2))
        if m.group(1).lower() != want:
            out.append(f"'{m.group(0)}' should be '{want} {m.group(2)}'")
    for m in _ARTICLE_ACRONYM.finditer(text):
        art, word = m.group(1).lower(), m.group(2)
        want = expected_article(word)
        if art != want:
            out.append(f"'{m.group(0)}' should be '{want} {word}'")
    for m in _ARTICLE_WORD.finditer(text):
        art, word = m.group(1).lower(), m.group(2)
        if word in _SPELLED_LOWER or any(word.startswith(s + "_") for s in ("sm", "compute")):
            continue
        vowel = word[0] in "aeio" or (word[0] == "u" and not word.startswith(_YOU_OR_ONE))
        if word.startswith(_YOU_OR_ONE):
            vowel = False
        if word.startswith(_SILENT_H) or word[0] == "x":  # "an hour", "an xformers" (ex-formers)
            vowel = True
        if vowel and art == "a":
            out.append(f"'{m.group(0)}' should be 'an {word}'")
        elif not vowel and art == "an":
            out.append(f"'{m.group(0)}' should be 'a {word}'")
    return out


_DOUBLED = re.compile(r"(?<![\w.-])([A-Za-z]+)\s+\1(?![\w-])", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'`])")
_CC_TWICE = re.compile(r"compute capability (\d+\.\d+)\b[^.;]*?\b(?:compute capability|is) \1\b")
# "5090 has compute capability 12.0", "for 5090 (sm_120)": a model number where a GPU's name belongs.
_BARE_PRODUCT = re.compile(
    r"(?:^|[.;:,(]\s*|\b(?:for|on|of|and|with|the|by|supports?|drive)\s+)(\d{3,5}) "
    r"(?:has compute capability|is \d|\(sm_|\(compute capability|with CUDA capability)"
)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _norm(sentence: str) -> str:
    """The sentence without case, end mark or parenthetical: a sentence said again with an aside is a repeat."""
    return " ".join(re.sub(r"\s*\([^)]*\)", "", sentence).lower().rstrip(".!?").split())


def problems(text: str) -> list[str]:
    """Every problem a reviewer would mark in one text (a title, a diagnosis, a fix)."""
    out: list[str] = []
    for m in _DOUBLED.finditer(text):
        out.append(f"doubled word {m.group(0)!r}")
    seen: set[str] = set()
    for s in sentences(text):
        key = _norm(s)
        if len(key.split()) >= 3 and key in seen:
            out.append(f"repeated sentence {s!r}")
        seen.add(key)
    out += _article_problems(text)
    for m in _CC_TWICE.finditer(text):
        out.append(f"defined by itself: {m.group(0)!r}")
    for m in _BARE_PRODUCT.finditer(text):
        out.append(f"a bare model number {m.group(1)!r} as a GPU's name (the matrix has the full name)")
    return out
