"""`attention-visualizer`: the app, and its subcommands train, evaluate, translate, export, check-translations,
metrics, animate and convert."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from model.command_line import ArgumentParser, CommandError, UsageError, command, model_argument, writable_file

from . import version

SUBCOMMANDS = ("train", "evaluate", "translate", "export", "check-translations", "metrics", "animate", "convert")


def window_size(text: str) -> tuple[int, int]:
    """'1366x768' -> (1366, 768), for --size."""
    import argparse
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give WIDTHxHEIGHT, e.g. 1366x768") from None
    if not (320 <= w <= 10000 and 240 <= h <= 10000):
        raise argparse.ArgumentTypeError(f"{text!r}: width 320-10000 and height 240-10000 pixels")
    return w, h


def app_main(argv: list[str]) -> int:
    p = ArgumentParser(prog="attention-visualizer",
                                description="See inside a transformer translating your sentence, live. "
                                            f"Subcommands: {', '.join(SUBCOMMANDS)} (each with --help).")
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    model_argument(p)
    p.add_argument("--sentence", help="the sentence to start with")
    p.add_argument("--target", help="a translation to force through the decoder")
    p.add_argument("--session", help="open a session file")
    p.add_argument("--screenshot", metavar="FILE", help="save a PNG of the window once the first result shows, then exit")
    p.add_argument("--size", type=window_size, metavar="WIDTHxHEIGHT",
                   help="the window's size (default for --screenshot: 1500x950, the README picture's)")
    p.add_argument("--presentation", action="store_true", help="start full screen with large, high-contrast text")
    p.add_argument("--theme", choices=["light", "dark", "high-contrast"], help="colour theme (remembered)")
    a = p.parse_args(argv)
    given = [f"--{name}" for name in ("model", "sentence", "target") if getattr(a, name) is not None]
    if a.session and given:      # (the session's were shown, and --model's model loaded for nothing: QA)
        raise UsageError(f"--session opens the session's model, sentence and target: give {' and '.join(given)} "
                         "without it, or open the session and change them in the window")
    headless = bool(a.screenshot)
    find_display(headless)
    if a.screenshot:
        writable_file(a.screenshot, "--screenshot")
        if Path(a.screenshot).suffix.lower() != ".png":      # (PNG bytes went into "x.jpg" without a word: QA)
            raise UsageError(f"--screenshot {a.screenshot}: the screenshot is a PNG; give a name ending in .png")
    unread = None                 # a window's --session that cannot be read: the window opens afresh and says so
    session = None                # … else its changes, whose run the window starts on when its model can open
    if a.session:                 # (a launcher shows no terminal); a screenshot's stops here
        try:
            session = read_session_arg(a.session, must_have_model=headless)
        except UsageError as e:
            if headless:
                raise
            unread = str(e)
            print(f"error: {unread}", file=sys.stderr)
    from . import first_run
    from .settings import Settings
    from .state import ViewState

    settings = Settings()
    # a plain start reopens the window as it was closed (sentence, view, heads off); a screenshot never does
    asked = a.model or a.sentence is not None or a.target is not None or a.session or a.screenshot
    last = None if asked else last_session(settings)
    # the window starts on the run it reopens (the last session's, or a --session's whose model can open): the
    # first look had shown the frame of the default sentence, or of the run without its heads off or positions,
    # beside the session's sentence and switches (QA)
    source = last or (session if session is not None and opens(session["model_name"]) else None)
    start = ViewState.at_start(*(source[k] for k in ("model_name", "sentence", "target"))) if source else \
        ViewState.at_start(a.model, a.sentence, a.target)
    run = {k: source[k] for k in start_run_fields() if k in source} if source else {}
    start.update(**run)
    # the model opens in the background (else --model loads it now): a helper process translates the sentence
    # meanwhile, unless a saved frame can be shown (see first_run); not with heads off, which it cannot switch off
    in_background = not a.model and (not a.session or source is not None)
    helper = first_run.start(start) if in_background and not start.ablations and first_run.wanted() else None

    from PySide6 import QtCore, QtWidgets

    from model import ModelLoadError

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
    app.setApplicationName("Attention Visualizer")
    # Python's cyclic garbage collected by the event loop between events, never inside a Qt call: triggered there
    # it destroyed a closed window's QMenu while Qt held the signal-slot mutex its destruction waits for (a hang
    # seen in the tests, in QObject::disconnect); pyqtgraph's collector turns automatic collection off for this
    from pyqtgraph.util.garbage_collector import GarbageCollector
    collector = GarbageCollector(interval=0.5)     # its timer lives as long as it does: the app's run
    app.setOrganizationName("AttentionVisualizer")
    first = first_run.first_frame(start, settings.frame_path(), helper) if in_background else None
    from .theme import apply_theme
    from .window import MainWindow

    if a.theme:
        settings.set("theme", a.theme)
    apply_theme(app, settings.get("theme"), settings.get("font_size"))
    lm = None
    if a.model and headless:                  # a screenshot of another model than the one asked for is no use
        from model import load
        try:
            lm = load(a.model)
        except ModelLoadError as e:
            raise UsageError(str(e)) from None
    elif a.model:                             # the window first, then the model (torch, weights) in the background
        from model.families import check
        try:
            check(a.model)
        except ModelLoadError as e:
            raise UsageError(str(e)) from None
    # a screenshot shows the default layout, not the user's last one, so that README pictures are reproducible
    window = MainWindow(model=a.model or (source and source["model_name"]), sentence=start.sentence,
                        target=start.target, run=run, settings=settings, lm=lm, restore_layout=not a.screenshot,
                        first=first)
    window.keeps_session = not a.screenshot
    for notice in settings.notices:           # bad values read so far, the saved layout's too
        print(f"note: {notice}", file=sys.stderr)
    lost = None if a.screenshot else settings.cannot_keep()
    if lost:
        print(f"note: {lost}", file=sys.stderr)
    # in the window too (a launcher shows no terminal: a session that could not reopen had a word on stderr alone)
    said = "; ".join(n for n in (*settings.notices, lost) if n)
    if said and not a.screenshot:
        window.statusBar().showMessage(said[:1].upper() + said[1:], 30000)
    if a.size:
        window.resize(*a.size)
    elif a.screenshot and not a.presentation:
        window.resize(1500, 950)             # the README picture has one size, whatever the screen
    guard = None
    if headless:
        from .headless import Headless
        guard = Headless(app)
        guard.install(window)
    from .headless import report_unexpected
    excepthook = sys.excepthook
    report_unexpected(window, list(argv), guard)
    try:
        if a.session and not unread:
            window.open_session(a.session)
        elif last:
            window.apply_session({k: v for k, v in last.items() if k not in ("model_name", "sentence", "target")})
        exit_code = {"code": 0}
        if a.screenshot:
            def save():
                from pathlib import Path

                from .export import ExportError, write_bytes
                from .plotting.render import encode_png
                try:
                    write_bytes(Path(a.screenshot), encode_png(window.grab().toImage()))
                    print(f"saved {a.screenshot}")
                except ExportError as e:
                    print(f"error: {e}", file=sys.stderr)
                    exit_code["code"] = 1
                app.quit()

            def failed(message: str) -> None:
                print(f"error: no screenshot, the model could not run ({message})", file=sys.stderr)
                exit_code["code"] = 1
                app.quit()

            window.trace_shown.connect(lambda: QtCore.QTimer.singleShot(300, save) if screenshot_ready(window)
                                       else None)
            window.run_failed.connect(failed)
        if a.presentation:
            if a.screenshot and a.size:       # the picture's size is the screen's (offscreen's is 800 × 800)
                window.presentation.screen_size = a.size
            window.toggle_presentation(a.theme)           # the theme asked for, or presentation's own
        else:
            window.show()
            QtCore.QTimer.singleShot(0, window, lambda: window.presentation.fit_screen())
        if unread:
            QtCore.QTimer.singleShot(0, lambda: window.error("Cannot open the session", unread))
        from .stop_signals import close_on_stop_signals
        with close_on_stop_signals(window):      # a kill, a closed terminal, Ctrl+C: closed as Quit does
            code = 0 if guard is not None and guard.code else app.exec()
        window.wait_for_threads()            # quit() (the screenshot's) leaves them running, unlike a close
        collector.timer.stop()
        release(window)
        return exit_code["code"] or (guard.code if guard else 0) or code
    finally:
        sys.excepthook = excepthook    # (a test calling this keeps pytest-qt's)


def release(window) -> None:
    """Delete the window's Qt objects now, while Python still runs. Left to the end, a window still shown (the one
    --screenshot quits from) was destroyed by PySide's exit handler after Python had begun to finalise: its plots'
    QGraphicsWidgets called their Python event() on the way, and the process died of SIGSEGV after saving its
    picture (DistilBERT at 1600 × 1000: 4 runs in 4, QA; gdb: ~QGraphicsWidget ← destroyQCoreApplication ←
    Py_FinalizeEx)."""
    import shiboken6
    from PySide6 import QtCore
    window.hide()
    QtCore.QCoreApplication.sendPostedEvents()
    if shiboken6.isValid(window):
        shiboken6.delete(window)


def find_display(headless: bool) -> None:
    """Without a display (an ssh session, a server, CI) Qt aborts with a core dump and a hint about a library:
    --screenshot draws offscreen instead (as `export` and `animate` need no display), the window says so in one
    line (exit code 1)."""
    from .headless import draw_offscreen, has_display
    if headless:
        draw_offscreen()
    elif sys.platform.startswith("linux") and not has_display():
        import os
        why = f"DISPLAY={os.environ['DISPLAY']} cannot be reached" if os.environ.get("DISPLAY") else "DISPLAY is not set"
        raise CommandError(f"no display to open the window on ({why}): run it in a desktop session, or "
                           "`xvfb-run attention-visualizer …`; --screenshot, export and animate need none")


def screenshot_ready(window) -> bool:
    """The window shows the model's complete run: a large model's first look (its input, while it generates) is not
    the picture, nor a frame shown while the model loads (the status bar said "First look …; the model is loading…":
    QA)."""
    return window.trace is not None and not window.trace.meta.get("partial") and window.startup.frame is None


def start_run_fields() -> tuple[str, ...]:
    """A session's run fields besides its model, sentence and target (state.RUN_FIELDS' others)."""
    from .state import RUN_FIELDS
    return tuple(sorted(RUN_FIELDS - {"model_name", "sentence", "target"}))


def opens(model: str) -> bool:
    """Whether a model passes the checks made before opening it (model.families.check)."""
    from model.assets import ModelLoadError
    from model.families import check
    try:
        check(model)
    except ModelLoadError:
        return False
    return True


UNOPENED = "last-session-unopened.json"       # beside Settings.session_path(): a last session that could not reopen


def last_session(settings) -> dict | None:
    """The session the window was closed on (Settings.session_path), as read_session's changes; None when there is
    none, or it cannot be used (a damaged file, a model folder gone: said in settings.notices)."""
    path = settings.session_path()
    if not path.is_file():
        return None
    from model.assets import ModelLoadError
    from model.families import check

    from .session import SessionError, read_session
    try:
        changes = read_session(path)
        check(changes["model_name"])
    except (SessionError, ModelLoadError) as e:
        # set aside, so that closing the fresh window does not write over it: a researcher's sentence and view were
        # gone after a model folder had been renamed (QA)
        aside = path.with_name(UNOPENED)
        try:
            os.replace(path, aside)
            kept = f"; it is kept as {aside} (File ▸ Open session, once its model is back)"
        except OSError:
            kept = ""
        settings.notices.append(f"the window as it was last closed could not be reopened ({e}); it starts "
                                f"afresh{kept}")
        return None
    return changes


def read_session_arg(path: str, must_have_model: bool) -> dict:
    """--session checked before the window opens: UsageError when the file is not a valid session; with
    must_have_model (a headless run), UsageError too when its model folder is missing or cannot be opened, as for
    --model (exit 2: it had been 1, QA)."""
    from model.assets import bundled_models, model_folder

    from .session import SessionError, read_session
    try:
        changes = read_session(path)
    except SessionError as e:
        raise UsageError(str(e)) from None
    folder = model_folder(changes["model_name"])
    if must_have_model and folder is not None and not folder.is_dir():
        raise UsageError(f"{path}: the session's model {changes['model_name']!r} is neither a bundled model "
                           f"({', '.join(bundled_models())}) nor a model folder")
    if must_have_model and folder is not None:
        from model.assets import ModelLoadError
        from model.families import check
        try:
            check(folder)
        except ModelLoadError as e:
            raise UsageError(f"{path}: the session's model cannot be opened ({e})") from None
    return changes


def entry() -> None:
    """The console script `attention-visualizer`: main, and the process's exit (see process_exit)."""
    from model.command_line import process_exit
    process_exit(main)


@command(signals=False)       # the window's start; each subcommand's own wrapper stops on SIGTERM and SIGHUP
def main(argv: list[str] | None = None) -> int:
    if argv and argv[0] in SUBCOMMANDS:
        cmd, rest = argv[0], argv[1:]
        if cmd == "train":
            from model.train import main as train
            return train(rest)
        if cmd == "evaluate":
            from model.evaluate import main as evaluate
            return evaluate(rest)
        if cmd == "translate":
            from .translate_command import main as translate
            return translate(rest)
        if cmd == "animate":
            from .animate_command import main as animate
            return animate(rest)
        if cmd == "metrics":
            from .metrics_command import main as metrics
            return metrics(rest)
        if cmd == "convert":
            from .convert_command import main as convert
            return convert(rest)
        if cmd == "check-translations":
            from .check_translations_command import main as check
            return check(rest)
        from .export_command import main as export
        return export(rest)
    if argv and not argv[0].startswith("-"):          # the window takes options only: a mistyped subcommand
        import difflib                                  # ("unrecognized arguments: translat I have a car.", QA)
        near = difflib.get_close_matches(argv[0], SUBCOMMANDS, n=1)
        raise UsageError(f"{argv[0]!r} is no subcommand{f' (did you mean {near[0]}?)' if near else ''}: the "
                         f"subcommands are {', '.join(SUBCOMMANDS)}, and the window takes options only (see "
                         "attention-visualizer --help)")
    return app_main(argv)
