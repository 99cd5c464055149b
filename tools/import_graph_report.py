"""The import graph of a checkout, as a report: ``python -m tools.import_graph_report [ROOT]``.

ROOT is a checkout (default: this one); run it on an older tree too (``git worktree add
/tmp/old COMMIT``) to compare. It reuses the test suite's walk (``tests/import_graph.py``,
loaded from ROOT's own file when it has one, else from this checkout's, with its package
folder pointed at ROOT): every import counts, also inside functions and under
``TYPE_CHECKING``. It prints

- the modules and lines per room (the layers of ``docs/design.md``, top first),
- the arrows between rooms,
- the imports that run back up (a module importing one of a higher room),
- the import cycles (of modules, and of rooms),
- the modules over 400 lines,
- the rooms a Wyoming one-shot and an OpenAI ``/v1/audio/speech`` request pass through,
  in order (written down per layout, each module checked to exist in ROOT), also with the
  engine's rooms counted as one (to compare with a layout that lists the engine as one
  step).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parents[1]
P = "wyoming_omnivoice"

#: Rooms, top first: (room, its layer; a higher layer sits above).
ROOMS: list[tuple[str, int]] = [
    ("entry points", 7), ("app", 6), ("wyoming_protocol", 5), ("web", 5), ("speech", 4),
    ("voices", 3), ("anchors", 3), ("text", 2), ("model", 2),
    # the engine's rooms (tests/engine/test_engine_rooms.py), its top first
    ("engine", 0.6), ("engine.decoding", 0.5), ("engine.offline", 0.5), ("engine.forward", 0.4),
    ("engine.audio", 0.4), ("engine.runtime", 0.3), ("engine.prompt", 0.2),
    ("engine.graphs", 0.2), ("engine.store", 0.1), ("engine.constants", 0.0),
    ("utilities", -1),
]
LAYER = dict(ROOMS)
ENGINE_FOLDERS = {room.removeprefix("engine.") for room, _ in ROOMS if room.startswith("engine.")}
ENTRY_POINTS = {"__main__", "synthesize", "convert", "convert_anchors", "convert_prepare",
                "health_check", "_moved"}
UTILITIES = {"errors", "atomic", "user_files", "lazy_exports", "progress"}
#: A layout with ``server/`` held two rooms in one folder: these were the shell's.
OLD_SERVER_SHELL = {"cli", "config", "flags", "startup", "startup_timing", "serve",
                    "listen_address", "memory_room", "metrics", "__init__"}
#: ... and these the anchors' (voices/ held the other anchor modules then).
OLD_ANCHOR_MODULES = {"server.anchor_plan", "voices.anchors", "voices.lazy_anchors",
                      "voices.anchor_maker", "voices.anchor_texts", "voices.pinned"}

#: A request's trip through the engine's rooms, the same from either protocol.
_ENGINE_TRIP: list[tuple[str, str]] = [
    ("engine.session", "SynthesisSession.add, then step after step"),
    ("engine.planning", "Planner: plan, chunks, each chunk's prompt"),
    ("engine.prompt.builder", "the prompt's rows"),
    ("engine.decoding.stepping", "Stepper: one step of every request decoding"),
    ("engine.decoding.decoder", "the step's forward made ready"),
    ("engine.forward.layouts", "the batch's rows (IO binding on CUDA)"),
    ("engine.runtime.onnx_sessions", "embeddings, backbone, scoring run"),
    ("engine.decoding.selection", "the cells unmasked"),
    ("engine.rendering", "its last step done: codes to audio"),
    ("engine.audio.vocoder", "the vocoder"),
    ("engine.audio.postprocess", "silence, loudness, fades"),
]

#: The trips, per layout (a layout is told by the folder the Wyoming protocol lives in):
#: (module, what happens there), in order.
TRIPS: dict[str, dict[str, list[tuple[str, str]]]] = {
    "server": {
        "Wyoming one-shot": [
            ("server.connection", "a bounded frame read (wire)"),
            ("server.wire", "frame checked"),
            ("server.handler", "event dispatched"),
            ("server.request_input", "parsed once: OneShot"),
            ("speech.service", "check_open, check_length, route"),
            ("voices.catalog", "the voice routed"),
            ("speech.service", "prepare_one_shot"),
            ("speech.text_thread", "on the text thread when long"),
            ("text.prepare", "cleanup, sentences, first clause"),
            ("speech.service", "admit: a Speech"),
            ("speech.admission", "a slot"),
            ("speech.pieces", "say_sentence: one AudioPiece per clause"),
            ("speech.service", "produce (called back from the Speech)"),
            ("speech.pieces", "plan (the service calls back into the Speech)"),
            ("speech.pacing", "how much text the piece speaks"),
            ("speech.request_builder", "the engine request (closure)"),
            ("speech.request_language", "language, reading"),
            ("text.normalize", "normalisation"),
            ("voices.assets", "anchor or clone prompt (VoiceAssets)"),
            ("speech.determinism", "the seed (a wrapping closure)"),
            ("speech.worker", "batched on the worker thread"),
            ("engine", "Engine.synthesize_batch"),
            ("server.output", "audio-start/-chunk/-stop in order"),
            ("speech.pcm", "float32 -> 16-bit PCM"),
            ("server.gap_guard", "silence while a piece decodes"),
        ],
        "OpenAI /v1/audio/speech": [
            ("web.security", "the gate (token, Host, Origin)"),
            ("web.routes", "openai_speech: the body checked"),
            ("web.speech", "StudioSpeech.route"),
            ("speech.service", "route"),
            ("voices.catalog", "the voice routed"),
            ("web.studio", "speak: an HTTP synthesis slot"),
            ("web.speech", "StudioSpeech.synthesize"),
            ("speech.service", "synthesize: check_open, check_length, prepare, admit"),
            ("text.prepare", "cleanup, sentences"),
            ("speech.pieces", "say_sentence"),
            ("speech.service", "produce"),
            ("speech.pieces", "plan"),
            ("speech.request_builder", "the engine request"),
            ("voices.assets", "anchor or clone prompt"),
            ("speech.worker", "batched on the worker thread"),
            ("engine", "Engine.synthesize_batch"),
            ("speech.service", "the pieces' audio joined"),
            ("web.audio_files", "WAV/FLAC/PCM"),
        ],
    },
    "wyoming_protocol": {
        "Wyoming one-shot": [
            ("wyoming_protocol.connection", "a bounded frame read"),
            ("wyoming_protocol.wire", "frame checked"),
            ("wyoming_protocol.handler", "event dispatched"),
            ("wyoming_protocol.request_input", "parsed once: OneShot"),
            ("speech.service", "one_shot: refuse early, route, prepare, admit"),
            ("voices.library", "route (the one owner of the voices)"),
            ("voices.catalog", "the voice routed"),
            ("speech.text_thread", "on the text thread when long"),
            ("text.prepare", "cleanup, sentences, first clause"),
            ("speech.admission", "a slot"),
            ("speech.pieces", "the Speech makes its pieces: plan, request, submit"),
            ("speech.pacing", "how much text the piece speaks"),
            ("speech.request_builder", "the engine request"),
            ("speech.request_language", "language, reading"),
            ("text.normalize", "normalisation"),
            ("speech.determinism", "the seed"),
            ("voices.library", "voice_part: design and reference"),
            ("voices.assets", "anchor or clone prompt (the library's store)"),
            ("speech.worker", "queued for the worker thread"),
            ("speech.step_scheduler", "decoded in a session: joins at the next step"),
            ("engine", "SynthesisSession: add, step, audio"),
            ("wyoming_protocol.output", "audio-start/-chunk/-stop in order"),
            ("speech.pcm", "float32 -> 16-bit PCM"),
            ("wyoming_protocol.gap_guard", "silence while a piece decodes"),
        ],
        "OpenAI /v1/audio/speech": [
            ("web.security", "the gate (token, Host, Origin)"),
            ("web.routes", "openai_speech: the body checked"),
            ("web.speech", "StudioSpeech.route"),
            ("speech.service", "route"),
            ("voices.library", "route"),
            ("voices.catalog", "the voice routed"),
            ("web.studio", "speak: an HTTP synthesis slot"),
            ("web.speech", "StudioSpeech.synthesize"),
            ("speech.service", "one_shot: the entry a Wyoming one-shot takes"),
            ("text.prepare", "cleanup, sentences"),
            ("speech.pieces", "the Speech makes its pieces"),
            ("speech.request_builder", "the engine request"),
            ("voices.library", "voice_part"),
            ("speech.worker", "queued for the worker thread"),
            ("speech.step_scheduler", "decoded in a session: joins at the next step"),
            ("engine", "SynthesisSession: add, step, audio"),
            ("web.speech", "the pieces' audio joined"),
            ("web.audio_files", "WAV/FLAC/PCM"),
        ],
    },
    # the engine in rooms, the worker's queue its own: the engine's rooms on the way too
    "job_queue": {
        "Wyoming one-shot": [
            ("wyoming_protocol.connection", "a bounded frame read"),
            ("wyoming_protocol.wire", "frame checked"),
            ("wyoming_protocol.handler", "event dispatched"),
            ("wyoming_protocol.request_input", "parsed once: OneShot"),
            ("speech.service", "one_shot: refuse early, route, prepare, admit"),
            ("voices.library", "route (the one owner of the voices)"),
            ("voices.catalog", "the voice routed"),
            ("speech.text_thread", "on the text thread when long"),
            ("text.prepare", "cleanup, sentences, first clause"),
            ("speech.admission", "a slot"),
            ("speech.pieces", "the Speech makes its pieces: plan, request, submit once"),
            ("speech.pacing", "how much text the piece speaks"),
            ("speech.request_builder", "the engine request"),
            ("speech.request_language", "language, reading"),
            ("text.normalize", "normalisation"),
            ("speech.determinism", "the seed"),
            ("voices.library", "voice_part: design and reference"),
            ("voices.assets", "anchor or clone prompt (one still to build: left to the job)"),
            ("speech.worker", "submit: the one trip down"),
            ("speech.job_queue", "queued (a missing anchor built in the job first)"),
            ("speech.step_scheduler", "taken: joins the session at the next step"),
            *_ENGINE_TRIP,
            ("wyoming_protocol.output", "audio-start/-chunk/-stop in order"),
            ("speech.pcm", "float32 -> 16-bit PCM"),
            ("wyoming_protocol.gap_guard", "silence while a piece decodes"),
        ],
        "OpenAI /v1/audio/speech": [
            ("web.security", "the gate (token, Host, Origin)"),
            ("web.routes", "openai_speech: the body checked, handed on once"),
            ("web.studio", "speak: refusals as API errors"),
            ("web.speech", "StudioSpeech.speak: the voice routed, speed scaled"),
            ("speech.service", "route"),
            ("voices.library", "route"),
            ("voices.catalog", "the voice routed"),
            ("speech.service", "one_shot: the entry a Wyoming one-shot takes"),
            ("speech.admission", "the HTTP side's line, then a slot: one layer"),
            ("text.prepare", "cleanup, sentences"),
            ("speech.pieces", "the Speech makes its pieces"),
            ("speech.request_builder", "the engine request"),
            ("voices.library", "voice_part"),
            ("speech.worker", "submit: the one trip down"),
            ("speech.job_queue", "queued"),
            ("speech.step_scheduler", "taken: joins the session at the next step"),
            *_ENGINE_TRIP,
            ("web.speech", "the pieces' audio joined"),
            ("web.audio_files", "WAV/FLAC/PCM"),
        ],
    },
}


def load_walk(root: Path) -> ModuleType:
    """``tests/import_graph.py`` (ROOT's, else this checkout's), pointed at ROOT."""
    path = root / "tests" / "import_graph.py"
    if not path.is_file():
        path = HERE / "tests" / "import_graph.py"
    spec = importlib.util.spec_from_file_location(f"import_graph_{abs(hash(root))}", path)
    assert spec is not None and spec.loader is not None
    walk = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = walk  # its dataclasses look their module up there
    spec.loader.exec_module(walk)
    walk.PACKAGE_DIR = root / P  # type: ignore[attr-defined]
    return walk


def room_of(module: str) -> str:
    """The room of a module (its name without the package prefix)."""
    name = module.removeprefix(P).removeprefix(".")
    if name == "":  # the package's own API: the engine's names, re-exported
        return "engine"
    if name in UTILITIES:
        return "utilities"
    if name in ENTRY_POINTS:
        return "entry points"
    if name in OLD_ANCHOR_MODULES:
        return "anchors"
    parts = name.split(".")
    if parts[0] == "server":
        return "app" if parts[-1] in OLD_SERVER_SHELL else "wyoming_protocol"
    if parts[0] == "engine":
        if (len(parts) > 2 and parts[1] in ENGINE_FOLDERS) or name == "engine.constants":
            return f"engine.{parts[1]}"
        return "engine"
    return parts[0]


def _private_definitions(tree: ast.AST) -> set[str]:
    """The private names a module defines: functions, classes, module and class variables,
    attributes set on ``self``/``cls``, parameters and locals (not a Protocol's members)."""
    names: set[str] = set()
    # A Protocol that asks for another class's private members defines none of its own.
    protocols = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                 and any(ast.unparse(base).endswith("Protocol") for base in node.bases)]
    borrowed = {id(member) for proto in protocols for member in proto.body}
    for node in ast.walk(tree):
        if id(node) in borrowed:
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def private_accesses(modules: dict[str, Path]) -> dict[str, list[str]]:
    """Per module, the private names of another module of the package that it uses: an
    attribute ``x._name`` (``x`` not ``self`` or ``cls``) or an import of ``_name``, where
    ``_name`` is defined by another module of the package and not by this one."""
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    defined = {name: _private_definitions(tree) for name, tree in trees.items()}
    anywhere = set().union(*defined.values())
    found: dict[str, list[str]] = {}
    for name, tree in trees.items():
        mine = defined[name]
        uses: list[str] = []
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr in anywhere - mine
                    and not (isinstance(node.value, ast.Name)
                             and node.value.id in {"self", "cls"})):
                uses.append(node.attr)
            elif isinstance(node, ast.ImportFrom):
                uses += [a.name for a in node.names if a.name in anywhere - mine]
        if uses:
            found[name] = uses
    return found


def report(root: Path) -> list[str]:
    walk = load_walk(root)
    modules: dict[str, Path] = walk.modules()
    found = [item for item in walk.imports() if item.imported in modules
             and item.imported != item.importer]
    lines_of = {name: len(path.read_text(encoding="utf-8").splitlines())
                for name, path in modules.items()}
    out = [f"== import graph of {root}",
           f"modules: {len(modules)}, lines: {sum(lines_of.values())}, "
           f"imports (module -> module, every one counted): {len(found)}", "",
           "rooms (top first): modules, lines"]
    count = Counter(room_of(name) for name in modules)
    size = Counter[str]()
    for name, lines in lines_of.items():
        size[room_of(name)] += lines
    for room, layer in ROOMS:
        if count[room]:
            out.append(f"  [{layer:>4}] {room:<17} {count[room]:>4} {size[room]:>7}")
    arrows = Counter((room_of(i.importer), room_of(i.imported)) for i in found
                     if room_of(i.importer) != room_of(i.imported))
    targets: dict[tuple[str, str], set[str]] = {}
    for i in found:
        targets.setdefault((room_of(i.importer), room_of(i.imported)), set()).add(i.imported)
    out += ["", "arrows between rooms (names imported; distinct modules imported):"]
    for (source, target), number in sorted(arrows.items(), key=lambda a: (
            -LAYER[a[0][0]], a[0][0], -LAYER[a[0][1]], a[0][1])):
        mark = "   <-- runs back up" if LAYER[source] < LAYER[target] else ""
        reached = len(targets[(source, target)])
        out.append(f"  {source} -> {target}: {number}; {reached}{mark}")
    up = sorted({(i.importer, i.imported) for i in found
                 if LAYER[room_of(i.importer)] < LAYER[room_of(i.imported)]})
    out += ["", f"imports that run back up (into a higher room): {len(up)}"]
    out += [f"  {a} -> {b}" for a, b in up]
    out += ["", f"module cycles: {len(walk.cycles())}"]
    out += ["  " + " <-> ".join(group) for group in walk.cycles()]
    graph: dict[str, set[str]] = {room: set() for room, _ in ROOMS}
    for source, target in arrows:
        graph[source].add(target)
    room_cycles = walk.strongly_connected(graph)
    out += [f"room cycles: {len(room_cycles)}"]
    out += ["  " + " <-> ".join(group) for group in room_cycles]
    private = private_accesses(modules)
    out += ["", f"private members used across modules: {sum(len(v) for v in private.values())} "
            f"accesses of {len({a for v in private.values() for a in v})} names, "
            f"in {len(private)} modules"]
    out += [f"  {name}: {len(found_here)} ({', '.join(sorted(set(found_here)))})"
            for name, found_here in sorted(private.items())]
    big = sorted((lines, name) for name, lines in lines_of.items() if lines > 400)
    out += ["", f"modules over 400 lines: {len(big)}"]
    out += [f"  {name} {lines}" for lines, name in big]
    layout = "server" if f"{P}.server" in modules else \
        "job_queue" if f"{P}.speech.job_queue" in modules else "wyoming_protocol"
    for trip, steps in TRIPS[layout].items():
        out += ["", f"trip of a {trip} (rooms in order; module: what happens there):"]
        for number, (module, what) in enumerate(steps, 1):
            mark = "" if f"{P}.{module}" in modules else "   MISSING in this tree"
            out.append(f"  {number:>2}. [{room_of(P + '.' + module)}] {module}: {what}{mark}")
        rooms = [room_of(f"{P}.{module}") for module, _ in steps]
        changes = [room for index, room in enumerate(rooms)
                   if index == 0 or room != rooms[index - 1]]
        out.append(f"  rooms entered in order ({len(changes)}): {' > '.join(changes)}")
        above = [room.split(".")[0] for room in rooms]  # the engine's rooms as one
        top = [room for index, room in enumerate(above)
               if index == 0 or room != above[index - 1]]
        out.append(f"  the same, the engine's rooms as one ({len(top)}): {' > '.join(top)}")
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[1]).resolve() if len(argv) > 1 else HERE
    if not (root / P).is_dir():
        print(f"error: {root} holds no {P}/ folder", file=sys.stderr)
        return 2
    print("\n".join(report(root)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
