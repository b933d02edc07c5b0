"""Training pairs for the answerability reader, mined from the structure of installed documentation.

Debian's manual pages (roff: NAME, OPTIONS, FILES, ENVIRONMENT, EXIT STATUS) and the HTML manuals
under /usr/share/doc (definition lists, tables with header cells) give (question, passage, answer
span) records and hard negatives from the same structure (`mine`). Packages named in
../shared/data/books/EXCLUDE, and the dev pool's books and corpus/, are never read (`sources`).
Run `python -m training.docmining` (or `make pairs`); it is outside the runtime's import path.
"""
