"""Reading ralph.toml (at the project root, or the file named by
$RALPH_CONFIG): the file, its cached parse, and one table's checked values.

Parsed only when the file exists, so a project without config pays nothing on
the hook path; a hook validates only the table it uses. A hook that finds the
file broken logs the problem and takes that table's defaults (the safe
settings); commands print it.

This is what a hook imports to read its table: it loads no `re`, `tomllib`,
`json` or `enum`. TOML is parsed (ralph.config.parse) only when the file is
not in the cache, and a message's `file:line` is looked up only when one is
written.
"""
import os

from _blake2 import blake2b  # hashlib's own BLAKE2, without hashlib: its OpenSSL load costs a hook call 2 ms

from ralph import fastjson
from ralph.config import registry
from ralph.config.schema import ConfigError, KeyLine, Table, validate_table
from ralph.state.denials import PROTECTED_DIR
from ralph.state.files import atomic_write
from ralph.state.locations import CONFIG_FILE, config_path, state_dir
from ralph.plugins import load

# what only some reads need -> "module:NAME", imported by name (ralph.plugins.load):
# TOML parsing (tomllib, re) when the file is not in the cache, and the
# message about an unknown table (its "did you mean" uses difflib, with re)
PARSE = "ralph.config.parse:parse_toml"
UNKNOWN_TABLE = "ralph.config.unknown:unknown_table"
UNKNOWN_TABLES = "ralph.config.unknown:unknown_tables"


def parse_config(text: str, path: str) -> dict:
    """The parsed TOML text. Raises ConfigError `<file>:<line>: invalid TOML: ...`."""
    return load(PARSE)(text, path)  # type: ignore[operator]


def load_config(root: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> dict:
    """The parsed config, or {} when there is none. Raises ConfigError."""
    path = config_path(root, environ)
    if path is None:
        return {}
    return cached_parse(root, read_text(path), path)


def read_text(path: str) -> str:
    """A config file's text. Raises ConfigError naming the file."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}; fix its permissions or unset RALPH_CONFIG") from None


# The parsed config, kept in the project's state directory (the one the hooks
# use: `.ralph/` in a loop project, else inside the git directory), under
# protected/, which ralph-loop's sandbox layer makes read-only to the agent:
# parsing TOML costs more than the rest of a hook call, and hooks run on every
# tool call while ralph.toml rarely changes. The entry holds no copy of the
# file, only the BLAKE2b digest of the text it was parsed from, and is used
# only for the same path and digest: for another text to match, someone would
# have to find a BLAKE2b-256 collision. The parse itself holds whatever the
# file holds (hook and stage commands, webhook headers, the tokens in them),
# so it is kept sealed: XORed with a keystream of keyed BLAKE2b blocks whose
# key is derived from the file's text (another BLAKE2b, personalised apart
# from the digest), so only who can read ralph.toml can read the entry, and
# who can read ralph.toml needs no entry. Written 0600 besides.
CACHE_FILE = os.path.join(PROTECTED_DIR, "config.json")
DIGEST_BYTES = 32
SEAL_PERSON = b"ralph-cfg-seal"  # the key's personalisation: not the digest's (none)
NONCE_BYTES = 16  # fresh per entry: two entries never share a keystream


def text_digest(text: str) -> str:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=DIGEST_BYTES).hexdigest()


def seal_key(text: str) -> bytes:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=32, person=SEAL_PERSON).digest()


def sealed(data: bytes, key: bytes, nonce: bytes) -> bytes:
    """`data` XORed with the keystream of (key, nonce): sealing and opening are the same."""
    stream = blake2b(nonce, key=key, digest_size=64)  # keyed once; each block a copy fed its number
    blocks = []
    for index in range((len(data) + 63) // 64):
        block = stream.copy()
        block.update(index.to_bytes(8, "little"))
        blocks.append(block.digest())
    return (int.from_bytes(data, "little") ^ int.from_bytes(b"".join(blocks)[: len(data)], "little")).to_bytes(len(data), "little")


def cache_entry(path: str, text: str, config: dict) -> bytes:
    """The cache file for `config` parsed from `text` at `path`: a line of
    JSON (path, digest, nonce), then the sealed parse as raw bytes (as hex in
    the JSON, parsing it would cost a hook more than the opening). Raises
    TypeError/ValueError for a parse JSON cannot hold (TOML dates)."""
    nonce = os.urandom(NONCE_BYTES)
    plain = fastjson.dumps(config).encode("utf-8", "surrogatepass")
    header = fastjson.dumps({"path": path, "blake2b": text_digest(text), "nonce": nonce.hex()})
    return header.encode("utf-8", "surrogatepass") + b"\n" + sealed(plain, seal_key(text), nonce)


def cached_config(data: bytes, path: str, text: str, digest: str) -> dict | None:
    """The parse a cache file holds for this path and text, or None."""
    head, newline, body = data.partition(b"\n")
    try:
        header = fastjson.loads(head.decode("utf-8", "surrogatepass"))
        if not newline or not isinstance(header, dict) or header.get("path") != path or header.get("blake2b") != digest:
            return None
        plain = sealed(body, seal_key(text), bytes.fromhex(header["nonce"]))
        config = fastjson.loads(plain.decode("utf-8", "surrogatepass"))
    except (KeyError, TypeError, ValueError, RecursionError):
        return None  # an older entry (the parse in clear), a torn or a forged one: parsed again
    return config if isinstance(config, dict) else None


def cached_parse(root: str, text: str, path: str, cache_file: str = CACHE_FILE) -> dict:
    """parse_config(text, path), remembered per project in its state directory
    (`cache_file`: one entry each, so two files read on every call each keep theirs)."""
    digest = text_digest(text)
    try:
        cache = os.path.join(state_dir(root), cache_file)
    except OSError:
        return parse_config(text, path)  # no state directory can be made: parsed each time
    try:
        with open(cache, "rb") as f:
            config = cached_config(f.read(), path, text, digest)
    except OSError:
        config = None
    if config is not None:
        return config
    config = parse_config(text, path)
    try:
        data = cache_entry(path, text, config)
    except (TypeError, ValueError):
        data = None  # dates and times are not JSON: parsed each time
    try:
        if data is None:
            os.unlink(cache)  # an entry for an older text is of no use
        else:
            atomic_write(cache, data, fsync=False, mode=0o600)  # a cache: a lost write is parsed again
    except OSError:
        pass
    return config


def section(config: dict, name: str, path: str = CONFIG_FILE) -> dict:
    """The [name] table of a parsed config ({} when absent). Raises
    ConfigError when it is not a table."""
    value = config.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{KeyLine(path, name, '')}: [{name}] must be a table, got {type(value).__name__}; write it as [{name}] followed by key = value lines")
    return value


def section_values(config: dict, name: str, path: str | None) -> dict:
    """Every key of the table `name`: its default, or the checked value from
    `config`. Raises ConfigError. A table whose keys do not say all it holds
    ([hooks], with the hook tables of each point) is read by its owner
    (ralph.loop.lifecycle.config.section_values)."""
    table: Table = registry.table(name)
    values = table.defaults()
    values.update(validate_table(section(config, name, path or CONFIG_FILE), table.keys, path, name))
    return values


def load_section(root: str, name: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> dict:
    """section_values() of the project's ralph.toml (defaults when there is none)."""
    path = config_path(root, environ)
    return section_values(load_config(root, environ) if path else {}, name, path)


def section_or_defaults(root: str, name: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> tuple[dict, str | None]:
    """load_section(), and what is wrong with the file, for hooks, which
    must go on and log the problem: the table's defaults when the file or
    the table is broken; an unknown table (a misspelt [gaurd]) is named and
    left out, as every table is that the call does not read."""
    path = config_path(root, environ)
    try:
        config = load_config(root, environ) if path else {}
        values = section_values(config, name, path)
    except ConfigError as e:
        return section_values({}, name, None), f"{e}; the [{name}] section is ignored"
    unknown = [table for table in config if table not in registry.SECTIONS]
    if unknown:
        return values, load(UNKNOWN_TABLES)(unknown, path)  # type: ignore[operator]
    return values, None
