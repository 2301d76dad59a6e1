"""Values that look like credentials, wherever a spec puts text that is stored in clear (env,
command and arguments, code files, labels and annotations): by the shapes of the tokens
services issue (`hf_`, `sk-`, `AKIA`, a password in a URL, `Bearer ...`, a private key) and,
where a name says a secret belongs (`WANDB_KEY`, `--api-key`), by the randomness of the value.
A name alone never decides, and a number never looks like a credential."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from gkeml_sdk.core.model import fail

# Tokens whose shape says what they are, found anywhere in a value.
_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])(?:hf_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|\b[Bb]earer +[A-Za-z0-9._~+/-]{16,}=*"
    # user:password@ in a URL (a $(REFERENCE) or ${VAR} is no password)
    r"|\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?!\$)[^\s@/]{3,}@"
)
# Words of a name that say a secret belongs there (split on '_' and '-': TOKENIZERS_PARALLELISM
# holds no token).
_SECRET_WORDS = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIALS", "KEY", "PAT"}
# What a random secret is made of, and how random: 40 hex digits carry about 3.7 bits per
# character, a base64 key more; words, paths and version strings carry less.
_SECRETISH = re.compile(r"[A-Za-z0-9+/=_.~-]{20,}")
_MIN_BITS_PER_CHAR = 3.3
NUMBER = re.compile(r"[-+]?[0-9][0-9_.,eE+-]*")  # 4096, 1e-4, 0.95, 1_000


def credential_reason(value: str, name: str = "") -> str | None:
    """Why `value` (held by `name`: an env variable, an argument's flag) looks like a
    credential, or None.

    Example:
        >>> credential_reason("Bearer hf_" + "a1B2" * 9)
        'it has the shape of an issued token'
        >>> credential_reason("da39a3ee5e6b4b0d3255bfef95601890afd80709", "WANDB_KEY")
        'WANDB_KEY names a secret and the value is random (40 characters)'
        >>> sha = "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        >>> credential_reason("4096", "MAX_TOKEN_COUNT"), credential_reason(sha, "GIT_SHA")
        (None, None)
    """
    if NUMBER.fullmatch(value.strip()):
        return None
    if _SHAPES.search(value):
        return "it has the shape of an issued token"
    if name and _names_secret(name):
        for run in _SECRETISH.findall(value):
            if _random(run):
                return f"{name} names a secret and the value is random ({len(run)} characters)"
    return None


def check_argv(argv: Sequence[str], field: str) -> None:
    """Refuse a command argument that looks like a credential: a token's shape anywhere, or
    a random value after a flag that names a secret (`--hf-token X`, `--api-key=X`).

    Example:
        >>> check_argv(["python", "serve.py", "--max-tokens", "4096"], "args")
        >>> check_argv(["--api-key", "sk-" + "x" * 40], "extra_args")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: extra_args[1] holds what looks like a credential ...
    """
    flag = ""
    for i, arg in enumerate(argv):
        name, value = flag, arg
        if arg.startswith("-") and "=" in arg:
            name, value = arg.split("=", 1)
        why = credential_reason(value, name.lstrip("-"))
        if why is not None:
            raise fail(
                f"{field}[{i}] holds what looks like a credential ({_masked(value)}: {why})",
                rule="arguments are written into the object in clear text, and a process's "
                "arguments are visible to every user of its node",
                fix="put it in secret_env={'NAME': 'SECRET/KEY'} and pass $(NAME)'s value "
                "from the environment (read os.environ['NAME'] in the program)",
                field=field,
            )
        flag = arg if arg.startswith("-") and "=" not in arg else ""


def check_texts(texts: Iterable[tuple[str, str]], field: str) -> None:
    """Refuse a file or label that holds a token of a known shape (`(where, text)` pairs).

    Example:
        >>> check_texts([("main.py", "import os\\nkey = os.environ['HF_TOKEN']\\n")], "files")
    """
    for where, text in texts:
        if credential_reason(text) is not None:
            raise fail(
                f"{field} {where!r} holds what looks like a credential",
                rule=f"{field} are written into the objects gkeml creates, in clear text",
                fix="put it in secret_env={'NAME': 'SECRET/KEY'} and read os.environ['NAME'] "
                "in the program",
                field=field,
            )


def _names_secret(name: str) -> bool:
    words = set(re.split(r"[_\-.]+", name.upper()))
    return bool(words & _SECRET_WORDS) or {"API", "KEY"} <= words


def _random(run: str) -> bool:
    if not (any(c.isdigit() for c in run) and any(c.isalpha() for c in run)):
        return False
    counts = Counter(run)
    bits = -sum(n / len(run) * math.log2(n / len(run)) for n in counts.values())
    return bits >= _MIN_BITS_PER_CHAR


def _masked(value: str) -> str:
    return f"{value[:4]}… {len(value)} characters" if len(value) > 8 else "a short value"
