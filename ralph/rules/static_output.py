"""What a data program prints, when the guard can know it: `echo`, `printf`,
`cat` of its stdin, `which`... Their output feeds pipes and `$(..)`, so
`$(echo git) push` is judged as `git push`. Apart from the program models
(ralph.rules.program_models) because every command with such a program needs
it, and most never need those. Pure."""
from ralph.rules.guard_state import UNKNOWN
from ralph.rules.shell import decode_ansi_c


def printf_output(args: list[str]) -> str | None:
    """printf's output for %s/%b/%d-only formats, else None."""
    if not args:
        return ""
    fmt, values = args[0], list(args[1:])
    if UNKNOWN in fmt:
        return None
    out = []
    i = 0
    n = len(fmt)
    used_any = True
    first = True
    while first or (values and used_any):
        first = False
        used_any = False
        i = 0
        while i < n:
            c = fmt[i]
            if c == "\\" and i + 1 < n:
                out.append(decode_ansi_c(fmt[i:i + 2]) if fmt[i + 1] not in "01234567xuU" else "")
                if fmt[i + 1] in "01234567xuU":
                    j = i + 2
                    while j < n and j < i + 5 and fmt[j] in "0123456789abcdefABCDEF":
                        j += 1
                    out.append(decode_ansi_c(fmt[i:j]))
                    i = j
                    continue
                i += 2
            elif c == "%" and i + 1 < n:
                spec = fmt[i + 1]
                if spec == "%":
                    out.append("%")
                elif spec in "sbdqc":
                    value = values.pop(0) if values else ""
                    used_any = True
                    if spec == "b":
                        value = decode_ansi_c(value)
                    elif spec == "c":
                        value = value[:1]
                    out.append(value)
                else:
                    return None
                i += 2
            else:
                out.append(c)
                i += 1
    return "".join(out)


def static_output(name: str, argv: list[str], stdin: str | None) -> str | None:
    """What a data program prints, when the guard can know it."""
    if name == "echo":
        args = argv[1:]
        newline = True
        escapes = False
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            newline = newline and "n" not in args[0]
            escapes = "e" in args[0]
            args = args[1:]
        text = " ".join(args)
        if escapes:
            text = decode_ansi_c(text)
        return text + ("\n" if newline else "")
    if name == "printf":
        return printf_output(argv[1:])
    if name == "cat" and len(argv) == 1:
        return stdin
    if name in ("which", "type") and len(argv) == 2 and not argv[1].startswith("-"):
        return "/usr/bin/" + argv[1] + "\n"
    if name == "basename" and len(argv) == 2:
        return argv[1].rstrip("/").rsplit("/", 1)[-1] + "\n"
    if name in ("true", "false", ":", "cd", "export", "mkdir", "touch", "rm", "sleep"):
        return ""
    return None
