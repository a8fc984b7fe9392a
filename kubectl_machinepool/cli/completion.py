"""`kubectl_complete-machinepool`: what kubectl (1.26+) runs for `kubectl machinepool <TAB>`.

kubectl calls it with the words typed after `machinepool`, the last one being the word to
complete ("" for a new word), and reads one `value<TAB>description` per line, then a cobra
directive `:<n>`: 4 = no file names, 0 = let the shell complete file names, 16 = directories,
plus 2 = no space after the word (a value such as `jsonpath=` goes on).
The same click completion functions serve bash, zsh and fish when kubectl-machinepool is run
directly; here they are only formatted for kubectl.
"""

from __future__ import annotations

import sys

from click.shell_completion import CompletionItem, ShellComplete

DEFAULT, NO_SPACE, NO_FILE_COMPLETION, FILTER_DIRS = 0, 2, 4, 16


class KubectlComplete(ShellComplete):
    name = "kubectl"
    source_template = ""  # kubectl is the shell: there is no script to source

    def __init__(self, words: list[str]) -> None:
        from kubectl_machinepool.cli.main import COMPLETE_VAR, cli

        super().__init__(cli, {}, "kubectl-machinepool", COMPLETE_VAR)
        self.words = words

    def get_completion_args(self) -> tuple[list[str], str]:
        if not self.words:
            return [], ""
        return self.words[:-1], self.words[-1]

    def format_completion(self, item: CompletionItem) -> str:
        return f"{item.value}\t{item.help}" if item.help else str(item.value)

    def complete(self) -> str:
        args, incomplete = self.get_completion_args()
        found = self.get_completions(args, incomplete)
        kinds = {item.type for item in found}
        directive = (
            DEFAULT if "file" in kinds else FILTER_DIRS if "dir" in kinds else NO_FILE_COMPLETION
        )
        plain = [i for i in found if i.type == "plain"]
        if plain and all(str(i.value).endswith("=") for i in plain):
            directive |= NO_SPACE
        lines = [self.format_completion(i) for i in plain]
        return "\n".join([*lines, f":{directive}"])


def main(argv: list[str] | None = None) -> None:
    words = sys.argv[1:] if argv is None else argv
    try:
        answer = KubectlComplete(words).complete()
    except Exception:  # whatever breaks, the shell gets no candidates, not a traceback
        answer = f":{NO_FILE_COMPLETION}"
    print(answer)
