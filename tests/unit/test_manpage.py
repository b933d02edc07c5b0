"""Manual pages set as text (in HTML `<pre>`, or a `.txt` file) read as the blocks they print."""

from __future__ import annotations

from pathlib import Path

from textbound.documents.ingest import chunk_document, load_file
from textbound.documents.ingest.manpage import is_manual_page, manual_blocks
from textbound.text.units import answer_units

# as postfix's HTML manual holds its manual pages: the whole page in one <pre>, as man printed it
POSTKICK = """<html><head><title>Postfix manual - postkick(1)</title></head><body><pre>
POSTKICK(1)                                                        POSTKICK(1)

<b>NAME</b>
       postkick - kick a Postfix service

<b>SYNOPSIS</b>
       <b>postkick</b> [<b>-c</b> <i>config_dir</i>] [<b>-v</b>] <i>class service request</i>

<b>DESCRIPTION</b>
       The  <b>postkick</b>(1)  command sends <i>request</i> to the specified <i>service</i> over a
       local transport channel.  This command makes Postfix private IPC acces-
       sible for use in, for example, shell scripts.

       Options:

       <b>-c</b> <i>config_dir</i>
              Read  the  <b>main.cf</b>  configuration  file  in  the named directory
              instead of the default configuration directory.

       <b>-v</b>     Enable verbose  logging  for  debugging  purposes.  Multiple  <b>-v</b>
              options make the software increasingly verbose.

       net.work.addr

       net    Matches  a  remote  IPv4  host address or network address range.
              Specify one to four decimal octets.

       pie=no Enable (disable) builds with position-independent executables,
              on platforms where this is supported.

<b>EXAMPLE</b>
       Wake up the pickup daemon like this:

           /usr/sbin/postkick public pickup W

<b>FILES</b>
       /var/spool/postfix/private, private class endpoints
       /var/spool/postfix/public, public class endpoints

                                                                   POSTKICK(1)
</pre></body></html>
"""

# as ncurses' HTML manual holds them: each section an <h2> and a <pre>
CLEAR = """<html><head><title>clear 1</title></head><body><h1>clear 1</h1>
<pre>
<strong>clear(1)</strong>             General Commands Manual             <strong>clear(1)</strong>
</pre><h2>NAME</h2><pre>
       <strong>clear</strong> - clear the terminal screen
</pre><h2>SYNOPSIS</h2><pre>
       <strong>clear</strong> [<strong>-T</strong><em>type</em>] [<strong>-x</strong>]
</pre><h2>OPTIONS</h2><pre>
       <strong>-x</strong>   do not attempt to clear the terminal's scrollback buffer using the
            extended "E3" capability.

       <strong>TYPE_ENUM</strong>
            Accept one of a specified set of strings.  Required parameters:

            o   a third (char **) argument pointing to a string list;

            o   a fourth int flag argument to enable case-sensitivity.

            The library copies the string list.
</pre></body></html>
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _read(tmp_path: Path, name: str, text: str) -> str:
    return load_file(_write(tmp_path, name, text), name).text


def test_a_page_in_one_pre_reads_as_headings_paragraphs_entries_and_code(tmp_path):
    text = _read(tmp_path, "postkick.1.html", POSTKICK)
    assert "POSTKICK(1)" not in text  # the running header and footer
    assert "## NAME\n\npostkick - kick a Postfix service\n\n## SYNOPSIS" in text
    # how the program is invoked is code, as printed
    assert "## SYNOPSIS\n\n```\npostkick [-c config_dir] [-v] class service request\n```" in text
    # the paragraph's lines joined, justification's spaces gone, the broken word mended
    assert ("The postkick(1) command sends request to the specified service over a local "
            "transport channel. This command makes Postfix private IPC accessible for use in, "
            "for example, shell scripts.") in text
    assert ("- **-c config_dir**: Read the main.cf configuration file in the named directory "
            "instead of the default configuration directory.") in text
    assert ("- **-v**: Enable verbose logging for debugging purposes. Multiple -v options make "
            "the software increasingly verbose.") in text
    # several tags of one entry, and a tag as wide as its indent (one space before the text)
    assert "- **net.work.addr, net**: Matches a remote IPv4 host address" in text
    assert "- **pie=no**: Enable (disable) builds with position-independent executables" in text
    assert ("Wake up the pickup daemon like this:\n\n```\n/usr/sbin/postkick public pickup W\n"
            "```") in text
    assert ("- /var/spool/postfix/private, private class endpoints\n\n"
            "- /var/spool/postfix/public, public class endpoints") in text


def test_a_page_of_sections_in_pres_reads_its_lists_inside_descriptions(tmp_path):
    text = _read(tmp_path, "clear.1.html", CLEAR)
    assert "## NAME\n\nclear - clear the terminal screen" in text
    assert "## SYNOPSIS\n\n```\nclear [-Ttype] [-x]\n```" in text  # under an <h2> of its own
    assert ("- **-x**: do not attempt to clear the terminal's scrollback buffer using the "
            'extended "E3" capability.') in text
    assert ("- **TYPE_ENUM**: Accept one of a specified set of strings. Required parameters:\n\n"
            "- a third (char **) argument pointing to a string list;\n\n"
            "- a fourth int flag argument to enable case-sensitivity.\n\n"
            "The library copies the string list.") in text
    assert text.count("```") == 2 and "clear(1)" not in text


def test_an_option_entry_is_an_answer_unit_of_its_own(tmp_path):
    doc = load_file(_write(tmp_path, "postkick.1.html", POSTKICK), "postkick.1.html")
    units = [u for c in chunk_document(doc) for u in answer_units(c.text)]
    assert any(u.kind == "item" and u.text.startswith("-v: Enable verbose logging")
               for u in units)


def test_a_text_file_man_wrote_reads_the_same_way(tmp_path):
    page = ("LS(1)                        User Commands                        LS(1)\n\n"
            "NAME\n       ls - list directory contents\n\n"
            "OPTIONS\n       -a, --all\n              do not ignore entries starting with .\n")
    doc = load_file(_write(tmp_path, "ls.txt", page), "ls.txt")
    assert doc.kind == "markdown" and doc.title == "ls"
    assert doc.text == ("## NAME\n\nls - list directory contents\n\n## OPTIONS\n\n"
                        "- **-a, --all**: do not ignore entries starting with .\n")


def test_code_in_a_page_that_is_no_manual_page_stays_code(tmp_path):
    """A DocBook reference page names itself under a "Name" heading too, but its <pre> is an
    example: only text set as man sets it (NAME, then an indented "name - what it does", or
    its running header) is read as a manual page."""
    page = ("<html><body><h2>Name</h2><p>valgrind - a suite of tools</p>"
            "<pre>   valgrind  --tool=memcheck   ls -l\n   echo done</pre></body></html>")
    assert ("```\n   valgrind  --tool=memcheck   ls -l\n   echo done\n```"
            in _read(tmp_path, "valgrind.html", page))
    assert not is_manual_page("Name\nvalgrind - a suite of tools\n")
    assert is_manual_page("NAME\n       valgrind - a suite of tools\n")


def test_prose_with_a_double_space_is_no_entry():
    """Justified text doubles its spaces: "The  postkick(1)  command" is no term "The"."""
    blocks = manual_blocks("NAME\n       x - y\n\nDESCRIPTION\n"
                           "       The  postkick(1)  command sends request to the specified\n"
                           "       service over a local transport channel.\n")
    assert blocks[-1] == ("The postkick(1) command sends request to the specified service over "
                          "a local transport channel.")


def test_commands_inside_a_description_stay_lines_and_a_hash_opens_no_heading():
    """postsuper(1): a bulleted step whose procedure is three root commands. The commands keep
    their lines as code; running text that opens with "#" stays text, not a heading."""
    page = ("NAME\n       postsuper - Postfix superintendent\n\nDESCRIPTION\n"
            "       -s     Structure check and structure repair.  This should be done once\n"
            "              before Postfix startup.\n\n"
            "              o      Rename  queue  files created with long queue ids to short\n"
            "                     names.  The procedure is as follows:\n\n"
            "                     # postfix stop\n"
            "                     # postsuper\n\n"
            "       # is how a root shell prompts, and the examples on this page show it\n"
            "       before each command that the superuser types at that prompt.\n")
    blocks = manual_blocks(page)
    assert blocks[3:6] == [
        "- **-s**: Structure check and structure repair. This should be done once before "
        "Postfix startup.",
        "- Rename queue files created with long queue ids to short names. The procedure is as "
        "follows:",
        "```\n# postfix stop\n# postsuper\n```"]
    assert blocks[6].startswith("\\# is how a root shell prompts")


def test_an_indented_line_ending_in_a_page_name_is_text_not_a_running_footer():
    """ncurses(3x)'s routine index ends its rows in the page that describes each routine; only
    a line at the margin (or the name alone, set right) is the running header or footer."""
    blocks = manual_blocks(
        "ncurses(3x)            Library calls            ncurses(3x)\n\nNAME\n"
        "       ncurses - CRT screen handling\n\nDESCRIPTION\n"
        "       curses Routine Name      Manual Page Name\n"
        "       add_wch                  curs_add_wch(3x)\n"
        "       addch                    curs_addch(3x)\n\n"
        "ncurses 6.4                2023-08-19                 ncurses(3x)\n")
    assert "curs_add_wch(3x)" in "\n".join(blocks) and "curs_addch(3x)" in "\n".join(blocks)
    assert not any("Library calls" in b or "2023-08-19" in b for b in blocks)


# as tmux(1) prints its key table: indented further than the text, a key and its description
# beside it, keys on lines of their own above a shared description, later lines in its column
KEYS = ("NAME\n     tmux - terminal multiplexer\n\nDEFAULT KEY BINDINGS\n"
        "     The default command key bindings are:\n\n"
        "           C-b         Send the prefix key (C-b) through to the application.\n"
        "           %           Split the current pane into two, left and right.\n"
        "           Up, Down\n"
        "           Left, Right\n"
        "                       Change to the pane above, below, to the left, or to the\n"
        "                       right of the current pane.\n"
        "           M-o         Rotate the panes in the current window backwards.\n\n"
        "     Key bindings may be changed with the bind-key and unbind-key commands.\n")


def test_a_key_table_set_deeper_than_the_text_reads_as_an_entry_per_key():
    blocks = manual_blocks(KEYS)
    assert blocks[3:8] == [
        "The default command key bindings are:",
        "- **C-b**: Send the prefix key (C-b) through to the application.",
        "- **%**: Split the current pane into two, left and right.",
        "- **Up, Down, Left, Right**: Change to the pane above, below, to the left, or to the "
        "right of the current pane.",
        "- **M-o**: Rotate the panes in the current window backwards."]
    units = answer_units("\n\n".join(blocks))
    assert any(u.kind == "item" and u.text == "M-o: Rotate the panes in the current window "
               "backwards." for u in units)


def test_a_listing_of_values_and_comments_stays_an_example():
    """top(1)'s restrictions file: "s" and "5.0" beside comments, not terms beside descriptions;
    a key that is a markup character is a code span, so it stays the key."""
    page = ("NAME\n       top - display Linux processes\n\nFILES\n"
            "       It should have exactly two lines, as shown in this example:\n\n"
            "           s        # line 1: secure mode switch\n"
            "           5.0      # line 2: delay interval in seconds\n"
            "           x        # line 3: none\n")
    assert manual_blocks(page)[-1] == ("```\ns        # line 1: secure mode switch\n"
                                       "5.0      # line 2: delay interval in seconds\n"
                                       "x        # line 3: none\n```")
    stars = manual_blocks(KEYS.replace("           %  ", "           *  "))
    assert "- `*`: Split the current pane into two, left and right." in stars


def test_one_wide_example_line_does_not_make_running_text_a_list():
    """tmux(1) prints a key table at column 81 and its text fills 78 columns: the page's width
    is the one its running text is filled to, so a paragraph still joins into one block."""
    lines = ["     tmux supports a large number of commands which can be used to control its",
             "     behaviour.  Each command is named and can accept zero or more flags and",
             "     arguments.  They may be bound to a key with the bind-key command or run",
             "     from the shell prompt, a shell script, a configuration file or the command"]
    wide = " " * 81 + "[<prefix>]      D        C-k"
    page = ("NAME\n     tmux - terminal multiplexer\n\nCOMMANDS\n" + "\n".join(lines)
            + "\n     prompt.\n\n" + wide + "\n")
    blocks = manual_blocks(page)
    assert blocks[3].startswith("tmux supports a large number of commands which can be used "
                                "to control its behaviour. Each command")
    assert blocks[3].endswith("a configuration file or the command prompt.")
