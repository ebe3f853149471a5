"""BertViz's head view and model view for the model and input of benchmarks/scale.py, in headless Chromium:
time to a painted page, view changes, peak memory of the browser (measured, not asserted).

Needs the bench extra (bertviz, psutil), Debian's Chromium (apt-get install -y chromium) and BertViz's three
scripts, kept in a cache folder outside the repository and filled once from the npm registry (npm pack):

    python benchmarks/bertviz_views.py --fetch-scripts

BertViz's HTML loads require.js, d3 and jQuery from cdnjs, which an offline machine never reaches; the page served
here (from 127.0.0.1) has those three addresses replaced by local copies of the same packages (jQuery 2.1.0 for
2.0.0, which npm never had; require.js unminified, as npm has it). Nothing else in BertViz's page is changed.

"Painted": BertViz draws its SVG in one synchronous call once require.js has loaded d3 and jQuery. A script at
the end of the page looks at every animation frame for the drawn SVG; the time is taken two frames after the
first frame that holds it (by then Chromium has laid out, painted and committed that frame, and the compositor
has taken the next one, which waits for the first to be rasterised). The page time counts from navigation
start (performance.now()); Chromium's own start is apart. View changes (head view only): the layer <select>
changed, and a head square double-clicked (only that head shown), each timed from the event to two frames after
the first frame that holds the new drawing. Memory: the largest sum of proportional set sizes (PSS, shared pages
divided among the processes that share them) over Chromium's processes, sampled every half second.
"""
from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath

SCRIPTS = {   # BertViz's CDN address -> (npm package, file in its tarball)
    "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js": ("requirejs@2.3.6", "package/require.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min": ("d3@5.7.0", "package/dist/d3.min.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/jquery/2.0.0/jquery.min": ("jquery@2.1.0", "package/dist/jquery.min.js"),
}
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attention-visualizer" / "bertviz-js"
INSTALL = ("apt-get install -y chromium; pip install -e '.[bench]'; "
           "python benchmarks/bertviz_views.py --fetch-scripts")
GIB = 2**30

HARNESS = """<script>
(function () {
  const CHANGES = %(changes)s, REPEATS = %(repeats)d;
  const send = (what, value) => fetch('/report', {method: 'POST', body: JSON.stringify([what, value])});
  const frames = (n, then) => requestAnimationFrame(() => n > 1 ? frames(n - 1, then) : then());
  const svg = () => document.querySelector('#vis svg');
  const changes = [];
  if (CHANGES) {
    for (let i = 1; i <= REPEATS; i++) changes.push(['layer', i]);
    for (let i = 1; i <= REPEATS; i++) changes.push(['head', i]);
  }
  function change([what, i]) {
    if (what === 'layer') {
      const select = document.querySelector('#layer');
      select.value = select.options[i %% select.options.length].value;
      select.dispatchEvent(new Event('change', {bubbles: true}));
    } else {                                  // the head squares: the last group BertViz draws in its SVG
      const squares = svg().lastElementChild.children;
      squares[i %% squares.length].dispatchEvent(new MouseEvent('dblclick', {bubbles: true}));
    }
  }
  function next() {                           // from a task, so the next frame is the first to hold the change
    const c = changes.shift();
    if (c === undefined) { send('done', null); return; }
    const t = performance.now();
    change(c);
    frames(3, () => { send(c[0], performance.now() - t).then(() => setTimeout(next, 0)); });
  }
  function look() {                           // at each frame: is BertViz's drawing in it?
    if (svg() === null) { requestAnimationFrame(look); return; }
    frames(2, () => { send('painted', performance.now()).then(() => setTimeout(next, 0)); });
  }
  requestAnimationFrame(look);
})();
</script>"""


def local_address(cdn: str, file: str) -> str:
    """Where the page finds a script here: require.config's paths name files without '.js', script tags with."""
    name = PurePosixPath(file).name
    return "/js/" + (name if cdn.endswith(".js") else name.removesuffix(".js"))


def localize(fragment: str, changes: bool, repeats: int) -> str:
    """BertViz's HTML as a page that loads its scripts from here and reports when it is painted."""
    for cdn, (_, file) in SCRIPTS.items():
        if cdn not in fragment:
            raise ValueError(f"BertViz's page does not load {cdn} (another BertViz version?): update SCRIPTS")
        fragment = fragment.replace(cdn, local_address(cdn, file))
    harness = HARNESS % {"changes": "true" if changes else "false", "repeats": repeats}
    return f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'></head><body>\n{fragment}\n{harness}\n</body></html>\n"


def missing() -> str | None:
    """What the BertViz column lacks here, with how to install it; None when nothing."""
    import importlib.util
    lacks = [m for m in ("bertviz", "psutil") if importlib.util.find_spec(m) is None]
    if chromium() is None:
        lacks.append("Chromium")
    if any(not (CACHE / PurePosixPath(f).name).is_file() for _, f in SCRIPTS.values()):
        lacks.append(f"BertViz's scripts in {CACHE}")
    return f"BertViz column skipped ({', '.join(lacks)} missing); install: {INSTALL}" if lacks else None


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def fetch_scripts() -> int:
    """Fill the cache from the npm registry (an install step: the benchmark itself never downloads)."""
    npm = shutil.which("npm")
    if npm is None:
        print("npm is needed once to fetch BertViz's scripts (apt-get install -y npm)", file=sys.stderr)
        return 1
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for spec, file in SCRIPTS.values():
            out = subprocess.run([npm, "pack", spec, "--pack-destination", tmp, "--silent"],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(f"npm pack {spec} failed: {out.stderr.strip()}", file=sys.stderr)
                return 1
            with tarfile.open(Path(tmp) / out.stdout.strip().splitlines()[-1]) as tar:
                data = tar.extractfile(file).read()
            part = CACHE / (PurePosixPath(file).name + ".part")                 # no half-written script left
            part.write_bytes(data)
            part.replace(CACHE / PurePosixPath(file).name)
            print(f"{spec}: {file} -> {CACHE / PurePosixPath(file).name}")
    return 0


def attentions(folder: Path, sentence: str, new_tokens: int) -> dict:
    """What a BertViz user runs: the model from the folder, greedy generation as the window's default, one
    forward pass over the tokens the window shows with output_attentions; timed from importing transformers on."""
    import torch
    t0 = time.perf_counter()
    import transformers as tf                   # within the time, as in the window (it imports it on opening)
    config = json.loads((folder / "config.json").read_text())
    encoder_decoder = config.get("is_encoder_decoder", False)
    cls = getattr(tf, config["architectures"][0])
    imported = time.perf_counter() - t0
    tok = tf.AutoTokenizer.from_pretrained(folder)
    model = cls.from_pretrained(folder, attn_implementation="eager").eval()
    ids = torch.tensor([tok(sentence)["input_ids"]])
    greedy = dict(num_beams=1, do_sample=False,
                  pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)
    with torch.no_grad():
        if encoder_decoder:
            out = model.generate(ids, max_new_tokens=2 * ids.shape[1] + 10, **greedy)[0].tolist()
            eos = tok.eos_token_id
            new = out[1:out.index(eos, 1) + 1] if eos in out[1:] else out[1:]
            dec = torch.tensor([[model.config.decoder_start_token_id] + new[:-1]])
            o = model(input_ids=ids, decoder_input_ids=dec, output_attentions=True)
            views = dict(encoder_attention=o.encoder_attentions, decoder_attention=o.decoder_attentions,
                         cross_attention=o.cross_attentions, encoder_tokens=tok.convert_ids_to_tokens(ids[0]),
                         decoder_tokens=tok.convert_ids_to_tokens(dec[0]))
            rows = (ids.shape[1], dec.shape[1])
        else:
            seq = model.generate(ids, max_new_tokens=new_tokens, **greedy)[0].tolist()
            eos = tok.eos_token_id
            n = ids.shape[1]
            seq = seq[:n] + (seq[n:seq.index(eos, n) + 1] if eos in seq[n:] else seq[n:])
            fed = torch.tensor([seq[:-1]])
            o = model(input_ids=fed, output_attentions=True)
            views = dict(attention=o.attentions, tokens=tok.convert_ids_to_tokens(fed[0]))
            rows = (0, fed.shape[1])
    return {"views": views, "rows": rows, "prep_s": time.perf_counter() - t0, "import_s": imported}


class Pages(ThreadingHTTPServer):
    """Serves one page and BertViz's scripts on 127.0.0.1; the page's reports arrive in `reports`."""
    daemon_threads = True

    def __init__(self, page: bytes):
        self.files = {"/page.html": page} | {local_address(c, f) + ("" if c.endswith(".js") else ".js"):
                                             (CACHE / PurePosixPath(f).name).read_bytes()
                                             for c, (_, f) in SCRIPTS.items()}
        self.reports: queue.Queue = queue.Queue()
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = self.server.files.get(self.path.split("?")[0])
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if self.path.endswith(".html") else "text/javascript")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        self.server.reports.put((time.perf_counter(), json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def browser_pss(pid: int) -> int:
    """Bytes: the PSS of a process and all its descendants (those that vanish meanwhile count nothing)."""
    import psutil
    try:
        procs = [psutil.Process(pid)]
        procs += procs[0].children(recursive=True)
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_full_info().pss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total


def show(fragment: str, changes: bool, repeats: int, limit: float, memory_gib: float) -> dict:
    """One page in a fresh headless Chromium: painted time (s, from navigation start), change times (ms), peak
    browser memory (GiB), why it stopped early if it did ('time', 'memory' or Chromium's exit status), and the
    seconds from Chromium's start to the end."""
    page = localize(fragment, changes, repeats).encode()
    result = {"painted_s": None, "layer_ms": [], "head_ms": [], "peak_gib": 0.0, "stopped": None, "elapsed_s": 0.0}
    peak, done = [0], threading.Event()
    with Pages(page) as server, tempfile.TemporaryDirectory(prefix="bertviz-chromium-") as profile:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        flags = ["--headless", f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
                 "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                 "--window-size=1280,900"] + (["--no-sandbox"] if os.geteuid() == 0 else [])
        url = f"http://127.0.0.1:{server.server_address[1]}/page.html"
        start = time.perf_counter()
        proc = subprocess.Popen([chromium(), *flags, url], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)

        def sample():
            while not done.wait(0.5):
                peak[0] = max(peak[0], browser_pss(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            deadline = start + limit
            while True:
                if peak[0] > memory_gib * GIB:
                    result["stopped"] = "memory"
                    break
                if proc.poll() is not None:
                    result["stopped"] = f"Chromium exited with {proc.returncode}"
                    break
                if time.perf_counter() > deadline:
                    result["stopped"] = "time"
                    break
                try:
                    at, (what, value) = server.reports.get(timeout=0.25)
                except queue.Empty:
                    continue
                if what == "done":
                    break
                if what == "painted":
                    result["painted_s"] = value / 1000
                    deadline = at + limit                               # the changes get their own limit
                else:
                    result[f"{what}_ms"].append(value)
        finally:
            result["elapsed_s"] = time.perf_counter() - start
            done.set()
            sampler.join()
            try:
                os.killpg(proc.pid, signal.SIGKILL)                      # the browser and every process it started
            except ProcessLookupError:
                pass
            proc.wait()
            server.shutdown()
    result["peak_gib"] = peak[0] / GIB
    return result


def measure(folder: Path, sentence: str, new_tokens: int, repeats: int, limit: float, memory_gib: float) -> dict:
    """Both views for one input: the Python side's time (model, generation, attentions), then each page."""
    import gc
    from bertviz import head_view, model_view
    prep = attentions(folder, sentence, new_tokens)
    gc.collect()
    out = {"rows": prep["rows"], "prep_s": prep["prep_s"], "import_s": prep["import_s"]}
    for name, view in (("head", head_view), ("model", model_view)):
        t = time.perf_counter()
        fragment = view(**prep["views"], html_action="return").data
        out[f"{name}_html_s"] = time.perf_counter() - t
        out[name] = show(fragment, name == "head", repeats, limit, memory_gib)
        del fragment
    return out


def version() -> str:
    from importlib.metadata import version
    return version("bertviz")


def browser_version() -> str:
    out = subprocess.run([chromium(), "--version"], capture_output=True, text=True)
    return out.stdout.strip() or "Chromium"


HEADER = ("| tokens (source, decoder rows) | Python side: import, load, generate, attentions "
          "| head view painted (in the browser) | layer change median / p95 | head change median / p95 "
          "| browser memory | model view painted (in the browser) | browser memory |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- |")
RATIO_HEADER = ("| tokens | to a painted view: head view / ours | model view / ours | layer change p95 "
                "| head change p95 |\n| --- | --- | --- | --- | --- |")


def table_rows(n: int, r: dict, ours: dict | None, limit: float, memory_gib: float) -> tuple[str, str]:
    """One length's row of BertViz figures and its row of ratios BertViz / ours (`ours`: scale.measure's dict;
    None when our side failed). A page not painted within the limits counts as the limit: a lower bound."""
    from scale import pct

    def before(view):               # seconds from importing transformers to the painted page, or a lower bound
        page, spent = r[view], r["prep_s"] + r[f"{view}_html_s"]
        if page["painted_s"] is None:
            return spent + page["elapsed_s"], True
        return spent + page["painted_s"], False

    def painted(view):
        page = r[view]
        if page["painted_s"] is not None:
            return f"{before(view)[0]:.1f} s ({page['painted_s']:.1f} s)"
        if page["stopped"] == "time":
            return f"> {limit:.0f} s in the browser, not painted"
        if page["stopped"] == "memory":
            return f"not painted: stopped at {memory_gib:g} GiB"
        return f"not painted: {page['stopped']}"

    def changes(kind):
        xs = r["head"][f"{kind}_ms"]
        if not xs:
            return "—"
        return f"{statistics.median(xs):.0f} / {pct(xs, 95):.0f} ms" + ("" if r["head"]["stopped"] is None
                                                                        else f" ({len(xs)}, then stopped)")

    def memory(view):
        return f"{r[view]['peak_gib']:.2f} GiB" + (" (stopped)" if r[view]["stopped"] == "memory" else "")

    def ratio(mine, theirs, bound):
        return "—" if mine is None or theirs is None else f"{'> ' if bound else ''}{theirs / mine:.1f}×"

    figures = (f"| {n} ({r['rows'][0]}, {r['rows'][1]}) | {r['prep_s']:.1f} s (import {r['import_s']:.1f} s) "
               f"| {painted('head')} | {changes('layer')} | {changes('head')} | {memory('head')} | {painted('model')} "
               f"| {memory('model')} |")
    first = None if ours is None else ours["first_s"]
    p95 = lambda kind: (pct(r["head"][f"{kind}_ms"], 95) if r["head"][f"{kind}_ms"] else None)    # noqa: E731
    mine = lambda kind: None if ours is None or kind not in ours else ours[kind][1]                # noqa: E731
    ratios = (f"| {n} | {ratio(first, *before('head'))} | {ratio(first, *before('model'))} | "
              f"{ratio(mine('layer'), p95('layer'), False)} | {ratio(mine('head'), p95('head'), False)} |")
    return figures, ratios


if __name__ == "__main__":
    if sys.argv[1:] == ["--fetch-scripts"]:
        sys.exit(fetch_scripts())
    print(__doc__)
    sys.exit(2)
