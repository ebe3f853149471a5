"""ViewState without Qt: stepping through the pipeline, clamping to the trace's shape, change events."""
from __future__ import annotations

from model.families.shapes import encoder_decoder
from visualizer.state import Stage, ViewState


def seed_like(n_enc, n_dec, heads=4):
    return encoder_decoder("seed", n_enc, n_dec, 8 * heads, heads, 16 * heads)


def test_walking_the_pipeline_visits_every_stage_once_in_order():
    s = ViewState(schema=seed_like(2, 2), n_steps=5)
    s.first()
    seen = [s.stage]
    while s.next_sublayer():
        seen.append(s.stage)
    assert seen == s.stages() and seen[0] == Stage("src_embed") and seen[-1] == Stage("output")
    assert len(seen) == 1 + 2 * 2 + 1 + 2 * 3 + 1
    assert s.next_sublayer() == set()                       # at the end: nothing changes, nobody is told
    while s.prev_sublayer():
        pass
    assert s.stage == Stage("src_embed")


def test_the_remotes_walk_goes_on_through_every_generation_step_and_back():
    """PageDown past linear + softmax: the next step from the decoder's embedding (the encoder is the same at every
    step); PageUp undoes each press; at the last step's output nothing changes."""
    s = ViewState(schema=seed_like(2, 2), n_steps=3)
    s.first()
    walk = [(s.stage, s.step)]
    while s.next_in_talk():
        walk.append((s.stage, s.step))
    stages = s.stages()
    decoder = stages[stages.index(Stage("tgt_embed")):]
    assert walk == [(x, 0) for x in stages] + [(x, 1) for x in decoder] + [(x, 2) for x in decoder]
    assert s.next_in_talk() == set()
    back = [(s.stage, s.step)]
    while s.prev_in_talk():
        back.append((s.stage, s.step))
    assert back == walk[::-1]


def test_the_remote_walks_stages_alone_where_nothing_is_generated():
    from model.families.shapes import encoder_only
    s = ViewState(schema=encoder_only("bert", 2, 32, 4, 64), n_steps=5)
    s.first()
    seen = [s.stage]
    while s.next_in_talk():
        seen.append(s.stage)
    assert seen == s.stages()


def test_layer_up_and_down_keep_the_sublayer_and_go_on_past_a_stacks_ends():
    """QA: Layer ▼ (Alt+Down) at the embedding did nothing. Within a stack it keeps the sublayer; past the stack's
    first or last layer, and from an embedding or the output, it goes to the nearest stage outside the layer."""
    s = ViewState(schema=seed_like(2, 2), n_steps=5)
    s.first()
    down = []
    while s.next_layer():
        down.append(s.stage)
    assert down == [Stage("enc", 0, "self"), Stage("enc", 1, "self"), Stage("tgt_embed"), Stage("dec", 0, "self"),
                    Stage("dec", 1, "self"), Stage("output")]
    s.go_to(Stage("dec", 1, "cross"))
    assert s.prev_layer() and s.stage == Stage("dec", 0, "cross")
    up = []
    while s.prev_layer():
        up.append(s.stage)
    assert up == [Stage("tgt_embed"), Stage("enc", 1, "ffn"), Stage("enc", 0, "ffn"), Stage("src_embed")]
    assert s.prev_layer() == set()                          # at the start: nothing changes, nobody is told


def test_the_attention_kind_follows_the_stack_in_view():
    s = ViewState(schema=seed_like(2, 2), n_steps=5)
    s.go_to(Stage("dec", 1, "self"))
    assert s.kind == "dec_self"
    s.go_to(Stage("src_embed"))
    assert s.kind == "enc_self"
    s.go_to(Stage("enc", 1, "ffn"))
    assert s.kind == "enc_self"
    s.go_to(Stage("output"))
    assert s.kind == "cross"
    s.go_to(Stage("dec", 0, "self"))
    s.go_to(Stage("dec", 0, "ffn"))
    assert s.kind == "dec_self"                              # a decoder kind in view stays
    s.go_to(Stage("src_embed"))
    s.go_to(Stage("tgt_embed"))
    assert s.kind == "dec_self"
    s.update(kind="cross")
    assert s.stage == Stage("dec", 0, "cross")               # choosing a kind moves to its sublayer


def test_view_fields_clamp_to_the_trace_and_listeners_hear_what_changed():
    s = ViewState(schema=seed_like(2, 3), n_steps=5)
    heard = []
    s.subscribe(heard.append)
    s.update(head=10, step=-3)
    assert (s.head, s.step) == (3, 0) and heard == [{"head"}]
    s.go_to(Stage("dec", 2, "cross"))
    s.set_shape(seed_like(1, 1, heads=2), n_steps=2)      # a smaller model's trace arrives
    assert (s.layer, s.head) == (0, 1) and s.stage == Stage("dec", 0, "cross")
    assert "sentence" in s.update(sentence="new") and s.run_key()[1] == "new"


def test_a_window_started_with_an_empty_sentence_opens_with_an_empty_box():
    """`--sentence ""` opened on the example sentence "I have a red car." (QA); no sentence at all does."""
    assert ViewState.at_start("en-fr", "").sentence == ""
    assert ViewState.at_start("en-fr").sentence == ViewState().sentence != ""
    assert ViewState.at_start("en-fr", "the cat").sentence == "the cat"


def test_a_text_long_enough_for_a_1024_position_model_is_read_whole_in_the_window():
    """The window cut every text at 2,000 characters, about 400 tokens: a 1024-position model's last positions
    were out of reach there while `translate` read 896 tokens of the same text (QA). It reads 8,000 now."""
    from visualizer.state import MAX_CHARS
    text = "The old library in the centre of our town was built more than a hundred years ago. " * 60   # 5,100
    s = ViewState(sentence=text)
    assert MAX_CHARS == 8000 and s.run_fields()[0] == text and not s.cut_chars
    s.sentence = text * 2
    assert len(s.run_fields()[0]) == MAX_CHARS and s.cut_chars
