"""The text gates' questions about a file's text, each answered once per text: which tokens it contains, which
words it spells (`stabfix.checker` asks them for every rule, `stabfix.shape` for structural gates)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional


_WORD = re.compile(r"\w+")


@lru_cache(maxsize=None)
def compiled_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class _TokensIn:
    """Whether each token asked about is a substring of one text (`token in text`), each answered once: the
    rules' gates ask the same tokens of every file (`torch`, `backward`). A token of word characters only
    is looked up in the text's distinct words, one line each (a shorter haystack; a match can neither
    cross a line nor miss a word), any other in the text itself."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.answers: dict[str, bool] = {}
        self._words: Optional[str] = None

    def __contains__(self, token: str) -> bool:
        answer = self.answers.get(token)
        if answer is None:
            if _WORD_ONLY.fullmatch(token):
                if self._words is None:
                    self._words = "\n".join(words_of(self.text))
                answer = token in self._words
            else:
                answer = token in self.text
            self.answers[token] = answer
        return answer


_WORD_ONLY = re.compile(r"\w+")
_LAST_TOKENS: list[_TokensIn] = []  # the last text's answers (a scan gates every rule on one file, then the next)


def tokens_in(text: str) -> _TokensIn:
    """The token answers of `text` (the same object, its answers kept, while the same text is asked about)."""
    if _LAST_TOKENS and _LAST_TOKENS[0].text is text:
        return _LAST_TOKENS[0]
    found = _TokensIn(text)
    _LAST_TOKENS[:] = [found]
    return found


@lru_cache(maxsize=4)
def words_of(text: str) -> frozenset[str]:
    """Every word of the text (identifiers, keywords, and words inside strings and comments: a superset of
    the names its code spells), shared by the rules' gates of one file."""
    return frozenset(_WORD.findall(text))
