"""What a data program prints, when the guard can know it: `echo`, `cat` of
its stdin, `which`... Their output feeds pipes and `$(..)`, so
`$(echo git) push` is judged as `git push`. Apart from the program models
(ralph.rules.program_models) because every command with such a program needs
it, and most never need those. (`printf` has a model of its own, with
printf_output: ralph.rules.common_programs.) Pure."""
from ralph.rules.shell import decode_ansi_c


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
    if name == "cat" and len(argv) == 1:
        return stdin
    if name in ("which", "type") and len(argv) == 2 and not argv[1].startswith("-"):
        return "/usr/bin/" + argv[1] + "\n"
    if name == "basename" and len(argv) == 2:
        return argv[1].rstrip("/").rsplit("/", 1)[-1] + "\n"
    if name in ("true", "false", ":", "cd", "export", "mkdir", "touch", "rm", "sleep"):
        return ""
    return None
