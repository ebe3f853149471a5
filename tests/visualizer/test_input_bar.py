"""The input bar at a projector's text size: the sentence the class reads keeps its room, and no row is added."""
from __future__ import annotations

from PySide6 import QtCore, QtGui

from visualizer.controls import SENTENCE_CHARS, InputBar, show_from_start

SENTENCE = "Two dogs are playing in the snow."


def bar_at(qtbot, points: float, width: int) -> InputBar:
    bar = InputBar()
    qtbot.addWidget(bar)
    font = QtGui.QFont(bar.font())
    font.setPointSizeF(points)
    bar.setFont(font)
    bar.model.addItems(["en-fr", "en-de"])
    bar.model.setCurrentText("en-de")
    bar.sentence.setText(SENTENCE)
    bar.resize(width, 300)
    bar.show()
    qtbot.waitExposed(bar)
    return bar


def test_a_wide_bar_shows_the_model_picker_with_its_label_beside_the_sentence(qtbot):
    bar = bar_at(qtbot, 10, 1400)
    qtbot.waitUntil(lambda: bar.sentence.width() > 0)
    assert not bar.compact_model() and bar.model_label.isVisible()
    assert abs(bar.model.geometry().center().y() - bar.sentence.geometry().center().y()) <= 2
    assert bar.model_label.geometry().left() > bar.sentence.geometry().right()


def test_a_narrow_bar_at_presentation_size_shows_the_whole_sentence_beside_a_compact_picker(qtbot):
    """A 720-line projector: 14-point text, the centre column about 640 pixels wide."""
    wide = bar_at(qtbot, 14, 2400)
    qtbot.waitUntil(lambda: wide.sentence.width() > 0)
    bar = bar_at(qtbot, 14, 640)
    qtbot.waitUntil(bar.compact_model)
    qtbot.waitUntil(lambda: bar.model.width() < wide.model.width())
    assert not bar.model_label.isVisible() and bar.model.isVisible()
    # still one row: the picker beside the sentence, not under it
    assert abs(bar.model.geometry().center().y() - bar.sentence.geometry().center().y()) <= 2
    # the sentence fits its field, and the picker's text (the model's name) fits its box
    fm = QtGui.QFontMetrics(bar.sentence.font())
    qtbot.waitUntil(lambda: bar.sentence.width() >= SENTENCE_CHARS * fm.averageCharWidth())
    assert bar.sentence.width() > fm.horizontalAdvance(SENTENCE) + 20
    assert bar.model.width() > QtGui.QFontMetrics(bar.model.font()).horizontalAdvance("en-de") + 20


def test_the_label_comes_back_when_the_bar_widens_and_hiding_the_details_keeps_the_picker(qtbot):
    bar = bar_at(qtbot, 14, 640)
    qtbot.waitUntil(bar.compact_model)
    bar.set_details_visible(False)            # presentation mode hides the target and decoding rows ...
    assert bar.model.isVisible()               # ... never the model picker
    bar.resize(2400, 300)
    qtbot.waitUntil(lambda: not bar.compact_model())
    assert bar.model_label.isVisible() and bar.model.isVisible()


def test_alt_m_reaches_the_compact_picker_and_types_nothing(qtbot):
    """The compact picker has no label, and a hidden label's Alt+M did nothing: the key typed "m" into the sentence
    (the help lists Alt+M for the model; QA). Wide again, the label's own letter does it, once."""
    bar = bar_at(qtbot, 14, 640)
    qtbot.waitUntil(bar.compact_model)
    bar.sentence.setText("My sister")
    bar.sentence.setFocus()
    qtbot.waitUntil(bar.sentence.hasFocus)
    qtbot.keyClick(bar.sentence, QtCore.Qt.Key.Key_M, QtCore.Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(bar.model.hasFocus)
    assert bar.sentence.text() == "My sister"
    bar.resize(2400, 300)
    qtbot.waitUntil(lambda: not bar.compact_model())
    assert not bar.model_key.isEnabled() and bar.model_label.buddy() is bar.model


def test_larger_text_while_compact_gets_a_picker_box_of_the_new_size(qtbot):
    bar = bar_at(qtbot, 14, 640)
    qtbot.waitUntil(bar.compact_model)
    before = bar.model.maximumWidth()
    font = QtGui.QFont(bar.font())
    font.setPointSizeF(18)                    # Ctrl+= in class
    bar.setFont(font)
    qtbot.waitUntil(lambda: bar.model.maximumWidth() > before)
    assert bar.compact_model() and bar.model.maximumWidth() == bar.model.sizeHint().width()


def test_a_sentence_the_program_sets_shows_from_its_first_letter(qtbot):
    """QLineEdit shows the end of a text wider than it ("…dogs are playing in the snow."); a sentence from an
    example, a session or the start shows its beginning instead."""
    bar = bar_at(qtbot, 14, 640)
    long = "The little girl in the red coat is feeding the ducks by the pond in the park."
    bar.sentence.setText(long)
    assert bar.sentence.cursorPosition() == len(long)          # what QLineEdit does by itself
    show_from_start(bar.sentence, long)
    assert bar.sentence.text() == long and bar.sentence.cursorPosition() == 0
    qtbot.waitUntil(lambda: bar.sentence.cursorRect().left() < 20)         # the view is at the start


def test_word_pieces_are_explained_where_the_tokens_have_them():
    from visualizer.controls import pieces_note
    assert "“##” marks a piece that continues the word before it" in pieces_note(["Le", "chat", "s", "##assit"])
    assert pieces_note(["Le", "chat", "##", "."]) == "" and pieces_note(["the", "cat"]) == ""
    lone = pieces_note(["Où", "est", "la", "bibliothèque", "␣", "?"])     # a space alone, as en-fr writes before "?"
    assert lone.startswith("“␣” is a piece that is a space alone") and "##" not in lone
    both = pieces_note(["tap", "##is", "␣", "?"])
    assert "“##” marks" in both and "“␣” is a piece" in both


def test_the_beam_width_box_takes_what_the_command_and_session_files_take(qtbot):
    """Typing 64 in the width box left 6 (it stopped at 16) while `translate --beam 64` and session files took 64."""
    from model.command_line import MAX_BEAM
    bar = InputBar()
    qtbot.addWidget(bar)
    bar.beam.setValue(MAX_BEAM)
    assert bar.beam.value() == MAX_BEAM == 64 and str(MAX_BEAM) in bar.beam.toolTip()


def test_where_the_decoding_row_is_short_of_room_the_boxes_a_method_does_not_read_wait_for_it(qtbot):
    """At 1280 × 720 the decoding controls took two rows, the second two greyed boxes that only sampling reads:
    in a bar too narrow for all six, the beam width shows for beam search only, top-k and seed for sampling only,
    and the rest is one row; a wide bar shows all six on one row, and hiding the controls and showing them again
    keeps the rule. Its least width stays as it was whatever shows (the docks are laid out against it)."""
    from PySide6 import QtCore, QtWidgets
    one_row = QtWidgets.QBoxLayout.Direction.LeftToRight
    wide = bar_at(qtbot, 10, 1400)
    qtbot.waitUntil(lambda: wide.decoding.direction() == one_row)
    every = (wide.method, wide.beam, wide.temperature, wide.top_k, wide.seed, wide.positional)
    assert not any(w.isHidden() for w in every)
    needed = wide.decoding_label.sizeHint().width() + sum(w.sizeHint().width() for w in every)
    bar = bar_at(qtbot, 10, needed + 20)        # short of room for all six (and their gaps), room for what a method reads
    least = bar.minimumSizeHint().width()
    shown = lambda: {name for name in ("beam", "top_k", "seed") if not getattr(bar, name).isHidden()}  # noqa: E731
    places = None                               # what every method reads stays put as the method changes (QA)
    for method, boxes in (("greedy", set()), ("sample", {"top_k", "seed"}), ("beam", {"beam"}), ("greedy", set())):
        bar.method.setCurrentIndex(bar.method.findData(method))
        qtbot.waitUntil(lambda: bar.decoding.direction() == one_row)
        assert shown() == boxes, method
        assert bar.minimumSizeHint().width() == least
        qtbot.wait(50)
        now = [w.geometry().topLeft() for w in (bar.method, bar.temperature, bar.positional)]
        assert places in (None, now), method
        places = now
    assert bar.method.itemData(bar.method.findData("sample"), QtCore.Qt.ItemDataRole.ToolTipRole).count("top-k")
    bar.set_details_visible(False)
    assert bar.method.isHidden() and bar.top_k.isHidden() and bar.beam.isHidden()
    bar.set_details_visible(True)               # back as the room says, not all six
    assert not bar.method.isHidden() and shown() == set() and bar.decoding.direction() == one_row


def test_an_encoder_decoders_rows_say_what_its_family_and_name_say_it_reads_and_writes(qtbot):
    """QA: a BART and a T5 read "English:" and "Translation:" whatever they were trained to do."""
    from visualizer.controls import InputBar
    bar = InputBar()
    qtbot.addWidget(bar)

    def rows(family, name):
        bar.show_layout("encoder-decoder", True, family, name)
        return bar.sentence_label.text().replace("&", ""), bar.translation_label.text()
    assert rows("seed", "en-fr") == rows("seed", "runs/mine") == ("English:", "Translation:")
    assert rows("marian", "Helsinki-NLP/opus-mt-en-de") == ("English:", "Translation:")
    assert rows("marian", "Helsinki-NLP/opus-mt-de-en") == ("Source:", "Translation:")
    assert rows("bart", "facebook/bart-large-cnn") == rows("t5", "t5-small") == ("Source:", "Output:")
    assert bar.target.isEnabled() and "output to force" in bar.target.placeholderText()
    bar.show_layout("decoder-only", True, "gpt2", "gpt2")
    assert bar.sentence_label.text() == "&Prompt:"
