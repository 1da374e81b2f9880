"""The files a plugin's hook command names, read the way the shell the CLI hands it to would read it (seed 001
skill_dir_tree_sha: the closure covers "every ``${CLAUDE_PLUGIN_ROOT}/<path>`` a hook command names").

The CLI runs a hook's ``command`` with a shell, ``${CLAUDE_PLUGIN_ROOT}`` set to the plugin's folder. The usual form
quotes the path (``sh "${CLAUDE_PLUGIN_ROOT}/hooks/stop-once.sh"``), which a pattern over the raw text misreads (the
quote and JSON's backslash became part of the path). :func:`read_hook_command` splits the command with :mod:`shlex`
(quotes as the shell reads them), expands ``${CLAUDE_PLUGIN_ROOT}`` and ``$CLAUDE_PLUGIN_ROOT`` wherever they stand
(also inside single quotes, where a shell would not: the stricter reading, since the file is then named anyway), and
understands ``bash``/``sh``/``node``/``python3``/``python`` followed by options, a script and its arguments, or a script
run by itself. The script must exist (a missing one is refused); plugin files among the arguments are digested when they
exist (a hook may name a file it writes). Where it cannot tell what runs (a pipe or a list of commands, command
substitution, another variable, ``bash -c``, an unbalanced quote) it says why (:attr:`HookCommand.unsure`): the closure
then keeps the plugin's whole ``hooks/`` folder and every plugin file the text mentions that exists, and the verdict
says so in a note; it never refuses a plugin for a command it could not read. :func:`hook_commands` finds the commands
in a hooks document (``hooks/hooks.json``, plugin.json's inline ``hooks``, a skill's frontmatter ``hooks``).

Pure: no file is opened here; the closure walk (:mod:`live_trial.closure.walk`) checks and digests the paths.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any, Iterator

#: Interpreters whose first operand is the script they run.
INTERPRETERS = frozenset({"bash", "sh", "node", "python3", "python"})

#: Options of an interpreter that take a value (the value is not the script).
_VALUED_OPTIONS = frozenset({"-o", "-O", "--require", "-r", "-W", "-X", "--import", "--loader"})

#: Options after which there is no script file: the program is given inline (or read from stdin).
_INLINE_OPTIONS = frozenset({"-c", "-e", "--eval", "-p", "--print", "-m", "-s", "-"})

_ROOT_FORMS = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}|\$CLAUDE_PLUGIN_ROOT(?![A-Za-z0-9_])")
_ROOT = "\x00PLUGIN_ROOT\x00"     # what the variable stands for while the command is split
_OPERATORS = frozenset("|&;()<>")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: ``${CLAUDE_PLUGIN_ROOT}/<path>`` in text that could not be read as a command (quotes, backslashes end it).
_MENTIONED = re.compile(r"\$\{?CLAUDE_PLUGIN_ROOT\}?/([^\s\"'`;|&)<>\\]+)")


@dataclass(frozen=True)
class HookCommand:
    """What one hook command names."""

    script: str | None
    """The plugin-relative path (posix) of the file the command runs, None when it runs no plugin file."""
    arguments: tuple[str, ...]
    """Plugin-relative paths among its arguments (files it reads or writes)."""
    unsure: str | None
    """Why the command could not be read as a shell would read it (then ``mentioned`` is all that is known)."""
    mentioned: tuple[str, ...] = ()
    """For an unsure command: the plugin-relative paths its text mentions."""

    @property
    def paths(self) -> tuple[str, ...]:
        """Every plugin-relative path the command names or mentions, script first."""
        return ((self.script,) if self.script else ()) + self.arguments + self.mentioned


def read_hook_command(command: str) -> HookCommand:
    """Read ``command`` (a hook's ``command`` string) as a shell would: see the module docstring. Returns a
    :class:`HookCommand`; never raises for what the text says."""
    mentioned = tuple(dict.fromkeys(_MENTIONED.findall(command)))

    def unsure(why: str) -> HookCommand:
        return HookCommand(None, (), why, mentioned)

    marked = _ROOT_FORMS.sub(_ROOT, command)
    if "`" in marked or "$(" in marked:
        return unsure("command substitution")
    if "$" in marked:
        return unsure("a variable other than CLAUDE_PLUGIN_ROOT")
    try:
        lexer = shlex.shlex(marked, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError as exc:
        return unsure(f"it cannot be split ({exc})")
    if any(w and set(w) <= _OPERATORS for w in words):
        return unsure("a pipe, list or redirection of commands")
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return HookCommand(None, (), None)
    head, rest = words[0], words[1:]
    if head.rsplit("/", 1)[-1] in INTERPRETERS:
        while rest and rest[0].startswith("-") and rest[0] not in _INLINE_OPTIONS:
            rest = rest[2:] if rest[0] in _VALUED_OPTIONS else rest[1:]
        if rest and rest[0] in _INLINE_OPTIONS:
            return unsure(f"the program is given inline ({head} {rest[0]})")
        if not rest:
            return HookCommand(None, (), None)
        head, rest = rest[0], rest[1:]
    script = _plugin_path(head) if head.startswith(_ROOT) else None
    arguments = tuple(p for w in rest if _ROOT in w and (p := _plugin_path(w[w.index(_ROOT):])) is not None)
    if _ROOT in head and script is None:
        return unsure("the plugin folder is part of a longer word")
    return HookCommand(script, arguments, None)


def _plugin_path(word: str) -> str | None:
    """The plugin-relative path of a word that starts with the plugin folder, None for the folder itself."""
    rel = word[len(_ROOT):]
    if not rel.startswith("/") or _ROOT in rel:
        return None
    rel = rel.lstrip("/")
    return rel or None


def hook_commands(doc: Any) -> Iterator[str]:
    """Every hook ``command`` string in a hooks document (``{"hooks": {Event: [{"matcher", "hooks": [{"type":
    "command", "command": ...}]}]}}``, the inline form without the outer ``hooks``, or a skill's frontmatter
    ``hooks``), in document order. Other values are skipped."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "command" and isinstance(value, str):
                yield value
            else:
                yield from hook_commands(value)
    elif isinstance(doc, list):
        for item in doc:
            yield from hook_commands(item)


@dataclass(frozen=True)
class DeclaredHook:
    """One command hook as a hooks document declares it (references/transcript-jsonl.md "What a plugin's hooks and
    MCP servers leave behind")."""

    event: str
    """The hook event (``PreToolUse``, ``PostToolUse``, ``Stop``, ``SessionStart`` ...)."""
    matcher: str | None
    """The matcher the command's group gives (a tool name or a pattern), None when it gives none."""
    command: str
    """The command as written (``${CLAUDE_PLUGIN_ROOT}`` not expanded)."""
    timeout_s: float | None = None
    """The hook's own ``timeout`` in seconds, None when it sets none."""


def declared_hooks(doc: Any) -> Iterator[DeclaredHook]:
    """Every command hook a hooks document declares, in document order: ``{"hooks": {Event: [{"matcher", "hooks":
    [{"type": "command", "command", "timeout"}]}]}}`` (``hooks/hooks.json``), the same without the outer ``hooks``
    (plugin.json's inline ``hooks``, a skill's frontmatter ``hooks``). Entries that are not of that shape (another
    ``type``, a missing command) are skipped: the CLI would not run them as commands either."""
    if not isinstance(doc, dict):
        return
    events = doc["hooks"] if isinstance(doc.get("hooks"), dict) else doc
    for event, groups in events.items():
        if not isinstance(event, str) or not isinstance(groups, list):
            continue
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            matcher = group.get("matcher")
            for hook in group["hooks"]:
                if not isinstance(hook, dict) or hook.get("type", "command") != "command" \
                        or not isinstance(hook.get("command"), str):
                    continue
                timeout = hook.get("timeout")
                yield DeclaredHook(event, matcher if isinstance(matcher, str) and matcher else None, hook["command"],
                                   float(timeout) if isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
                                   else None)
