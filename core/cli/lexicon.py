"""chattts-studio-cli lexicon list | add | remove | preview: the pronunciation dictionary."""

import argparse
from typing import Any

from chattts_studio.core.errors import StudioError


def add_parser(sub: Any) -> None:
    lexicon = sub.add_parser("lexicon")
    lsub = lexicon.add_subparsers(dest="action", required=True)
    lsub.add_parser("list")
    add = lsub.add_parser("add", help="read WORD as REPLACEMENT (a new entry or a change)")
    add.add_argument("word")
    add.add_argument("replacement")
    remove = lsub.add_parser("remove")
    remove.add_argument("word")
    preview = lsub.add_parser("preview", help="print what the model will read for TEXT")
    preview.add_argument("text")
    preview.add_argument("--no-lexicon", action="store_true")
    preview.add_argument("--segment-size", type=int, default=50)


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.engine.text_preview import preview
    from chattts_studio.core.text.lexicon import Lexicon, LexiconStore

    store = LexiconStore()
    if args.action == "list":
        for word, replacement in sorted(store.entries.items()):
            print(f"{word}\t{replacement}")
        return 0
    if args.action == "add":
        word, new = store.add(args.word, args.replacement)
        print(f"{'added' if new else 'changed'} '{word}' -> '{store.entries[word]}'")
        return 0
    if args.action == "remove":
        store.remove(args.word)
        print(f"removed '{args.word.strip()}'")
        return 0
    if not 5 <= args.segment_size <= 500:
        raise StudioError("The segment size must be between 5 and 500.")
    lexicon = Lexicon() if args.no_lexicon else store.lexicon()
    for line in preview(args.text, lexicon, args.segment_size):
        print(line.model_text.strip())
    return 0
