// The voice studio page. Plain JavaScript, no build step, no third-party code.
// Every URL is relative, so the page works at / and under Home Assistant's ingress path.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { languages: [], vocabulary: null, takes: [], picked: null, designKey: null,
                sampleEdited: false, recording: null, info: null };

class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

async function api(path, { method = "GET", json, body, raw = false } = {}) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  } else if (body !== undefined) {
    init.body = body;
  }
  const response = await fetch(path, init);
  if (!response.ok) {
    let code = "http_error", message = `HTTP ${response.status}`;
    try {
      const data = await response.json();
      code = data.error.code; message = data.error.message;
    } catch (_) { /* not JSON */ }
    if (response.status === 401) showLogin();
    throw new ApiError(response.status, code, message);
  }
  return raw ? response : response.json();
}

function say(id, text, kind = "") {
  const element = $(id);
  element.textContent = text;
  element.className = "status" + (kind ? " " + kind : "");
}

function fail(id, err) { say(id, err.message || String(err), "error"); }

function option(value, label) {
  const element = document.createElement("option");
  element.value = value; element.textContent = label;
  return element;
}

// ---- start ---------------------------------------------------------------------------

function showLogin() { $("login").hidden = false; $("token").focus(); }

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

// What the server is doing (GET health: 503 while starting, 200 once ready; JSON both);
// null while it cannot be reached (the start-up page hands its address to the studio).
async function health() {
  try {
    const response = await fetch("health", { credentials: "same-origin" });
    return await response.json();
  } catch (_) {
    return null;
  }
}

function showWork(list, work) {
  list.replaceChildren();
  for (const item of work) {
    const row = document.createElement("li");
    const label = document.createElement("div");
    label.textContent = item.text;
    const bar = document.createElement("progress");
    bar.max = 100;
    if (item.percent !== null) bar.value = item.percent;  // else: indeterminate
    bar.setAttribute("aria-label", item.label);
    row.append(label, bar);
    list.append(row);
  }
}

// The first start: the page shows what the server does until it is ready.
async function waitUntilReady() {
  document.body.classList.add("starting");
  $("starting").hidden = false;
  for (;;) {
    const data = await health();
    if (data) {
      $("starting-message").textContent = data.doing || data.message;
      showWork($("starting-work"), data.work || []);
      if (data.ready) break;
    }
    await sleep(1000);
  }
  $("starting").hidden = true;
  document.body.classList.remove("starting");
}

// Work the server still does after ready (the other voices' anchors), under the title.
async function watchBackground() {
  for (;;) {
    const data = await health();
    const line = $("background-work");
    const work = data && data.ready ? data.work || [] : [];
    line.hidden = work.length === 0;
    line.textContent = work.length ? "In the background: " + work.map((w) => w.text).join("; ") : "";
    if (data && !work.length) return;
    await sleep(5000);
  }
}

async function start() {
  try {
    state.info = await api("api/info");
    const [vocabulary, languages] = await Promise.all([api("api/vocabulary"),
                                                       api("api/languages")]);
    state.vocabulary = vocabulary;
    state.languages = languages.languages;
  } catch (err) {
    if (err.code === "starting" || err instanceof TypeError) {  // TypeError: no answer yet
      await waitUntilReady();
      return start();
    }
    if (err.status !== 401) fail("design-status", err);
    return;
  }
  watchBackground();
  $("login").hidden = true;
  fillLanguages();
  buildControls();
  languageChanged();
  micNote();
  await refreshVoices();
}

function fillLanguages() {
  for (const id of ["language", "clone-language", "voice-languages"]) {
    const select = $(id);
    select.replaceChildren(...state.languages.map((l) => option(l.id, `${l.name} (${l.id})`)));
  }
}

function buildControls() {
  const box = $("controls");
  box.replaceChildren();
  for (const category of state.vocabulary.categories) {
    const field = document.createElement("div");
    field.className = "field";
    field.dataset.language = category.language || "";
    const label = document.createElement("label");
    label.htmlFor = "design-" + category.name;
    label.textContent = category.label;
    const select = document.createElement("select");
    select.id = "design-" + category.name;
    select.dataset.category = category.name;
    select.append(option("", "(any)"), ...category.options.map((o) => option(o.value, o.label)));
    select.addEventListener("change", designChanged);
    field.append(label, select);
    box.append(field);
  }
}

function languageChanged() {
  const language = $("language").value;
  for (const field of $("controls").children) {
    const only = field.dataset.language;
    const usable = !only || only === language;
    field.hidden = !usable;
    if (!usable) field.querySelector("select").value = "";
  }
  if (!state.sampleEdited) {
    const row = state.languages.find((l) => l.id === language);
    $("sample").value = row ? row.sample : "";
  }
  designChanged();
}

function currentDesign() {
  const design = {};
  for (const select of $("controls").querySelectorAll("select")) {
    if (select.value) design[select.dataset.category] = select.value;
  }
  return { design, language: $("language").value, speed: Number($("speed").value) };
}

function designChanged() {
  const key = JSON.stringify(currentDesign());
  $("another").disabled = !state.takes.some((t) => t.designKey === key);
}

// ---- takes ---------------------------------------------------------------------------

async function preview(take) {
  const response = await api("api/preview", { method: "POST", raw: true, json: {
    take: take.id, text: $("sample").value, name: $("voice-name").value || undefined } });
  const blob = await response.blob();
  if (take.url) URL.revokeObjectURL(take.url);
  take.url = URL.createObjectURL(blob);
  take.audio.src = take.url;
  return take.audio;
}

function addTakeCard(take, label) {
  const card = document.createElement("div");
  card.className = "take";
  card.dataset.take = take.id;
  const title = document.createElement("h3");
  title.textContent = label;
  const audio = document.createElement("audio");
  audio.controls = true;
  audio.preload = "auto";
  audio.setAttribute("aria-label", label);
  const pick = document.createElement("label");
  pick.className = "inline";
  const radio = document.createElement("input");
  radio.type = "radio"; radio.name = "pick"; radio.value = take.id;
  radio.addEventListener("change", () => pickTake(take));
  pick.append(radio, " Pick this take");
  const again = document.createElement("button");
  again.type = "button"; again.className = "secondary"; again.textContent = "Hear the sentence again";
  again.addEventListener("click", () => run("design-status", async () => {
    (await preview(take)).play().catch(() => {});
  }));
  card.append(title, audio, pick, again);
  $("takes").append(card);
  take.audio = audio; take.card = card; take.radio = radio;
  state.takes.push(take);
  radio.checked = true;
  pickTake(take);
}

function pickTake(take) {
  state.picked = take;
  for (const t of state.takes) t.card.classList.toggle("picked", t === take);
  take.radio.checked = true;
  $("save").disabled = false;
  const languages = $("voice-languages");
  for (const o of languages.options) o.selected = o.value === take.language;
}

async function run(statusId, work) {
  const buttons = document.querySelectorAll("button");
  buttons.forEach((b) => { b.dataset.wasDisabled = b.disabled; b.disabled = true; });
  try {
    await work();
  } catch (err) {
    fail(statusId, err);
  } finally {
    buttons.forEach((b) => { b.disabled = b.dataset.wasDisabled === "true"; });
    designChanged();
    $("save").disabled = !state.picked;
  }
}

async function designTake(another) {
  const wish = currentDesign();
  const key = JSON.stringify(wish);
  say("design-status", another ? "Making another take..." : "Making the voice...");
  const data = await api("api/takes", { method: "POST", json: { ...wish, another } });
  const take = { ...data.take, designKey: key };
  const count = state.takes.filter((t) => t.designKey === key).length + 1;
  addTakeCard(take, `Take ${count}` + (take.instruct ? `: ${take.instruct}` : "") +
              ` (seed ${take.seed})`);
  await preview(take);
  say("design-status", "Take ready: press play, or make another take.", "ok");
  take.audio.play().catch(() => {});
}

// ---- cloning -------------------------------------------------------------------------

function micNote() {
  const usable = window.isSecureContext && navigator.mediaDevices &&
                 navigator.mediaDevices.getUserMedia;
  if (!usable) {
    $("record").disabled = true;
    $("mic-note").textContent = "The microphone works only over HTTPS or on localhost " +
      "(open the studio through Home Assistant over HTTPS). Upload a recording instead.";
  }
}

function encodeWav(chunks, sampleRate) {
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const buffer = new ArrayBuffer(44 + length * 2);
  const view = new DataView(buffer);
  const text = (offset, s) => { for (let i = 0; i < s.length; i++) view.setUint8(offset + i, s.charCodeAt(i)); };
  text(0, "RIFF"); view.setUint32(4, 36 + length * 2, true); text(8, "WAVE");
  text(12, "fmt "); view.setUint32(16, 16, true); view.setUint16(20, 1, true);
  view.setUint16(22, 1, true); view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); view.setUint16(32, 2, true);
  view.setUint16(34, 16, true); text(36, "data"); view.setUint32(40, length * 2, true);
  let offset = 44;
  for (const chunk of chunks) {
    for (let i = 0; i < chunk.length; i++, offset += 2) {
      const s = Math.max(-1, Math.min(1, chunk[i]));
      view.setInt16(offset, s < 0 ? s * 0x8000 : s * 0x7fff, true);
    }
  }
  return new Blob([buffer], { type: "audio/wav" });
}

let recorder = null;

async function toggleRecording() {
  if (recorder) {
    const { stream, context, node, chunks } = recorder;
    recorder = null;
    node.disconnect();
    stream.getTracks().forEach((t) => t.stop());
    await context.close();
    state.recording = encodeWav(chunks, context.sampleRate);
    $("record").textContent = "Start recording";
    say("clone-status", `Recorded ${(chunks.reduce((n, c) => n + c.length, 0) /
      context.sampleRate).toFixed(1)} s. Type its words, then use it.`, "ok");
    return;
  }
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const context = new AudioContext();
  const source = context.createMediaStreamSource(stream);
  const node = context.createScriptProcessor(4096, 1, 1);
  const chunks = [];
  node.onaudioprocess = (event) => chunks.push(new Float32Array(event.inputBuffer.getChannelData(0)));
  source.connect(node);
  node.connect(context.destination);
  recorder = { stream, context, node, chunks };
  $("record").textContent = "Stop recording";
  say("clone-status", "Recording... speak for 3-10 seconds, then stop.");
}

async function cloneTake() {
  const file = $("clone-file").files[0];
  const recording = file || state.recording;
  if (!recording) throw new Error("Choose a recording, or record one, first.");
  if (!$("transcript").value.trim()) {
    $("transcript").focus();
    throw new Error("Type the transcript: the exact words spoken in the recording. " +
                    "The server ships no speech recognizer to guess them.");
  }
  const form = new FormData();
  form.append("audio", recording, file ? file.name : "recording.wav");
  form.append("transcript", $("transcript").value);
  form.append("language", $("clone-language").value);
  say("clone-status", "Encoding the recording...");
  const data = await api("api/clone", { method: "POST", body: form });
  const take = { ...data.take, designKey: "clone:" + data.take.id };
  addTakeCard(take, `Clone (${take.seconds} s reference)`);
  await preview(take);
  say("clone-status", "Clone ready: press play to hear it.", "ok");
}

// ---- keeping and the library ---------------------------------------------------------

async function saveVoice(event) {
  event.preventDefault();
  if (!state.picked) throw new Error("Pick a take first.");
  const languages = [...$("voice-languages").selectedOptions].map((o) => o.value);
  const data = await api("api/voices", { method: "POST", json: {
    take: state.picked.id, name: $("voice-name").value,
    description: $("voice-description").value, languages } });
  say("save-status", `Voice ${data.voice.name} saved. ${data.note}`, "ok");
  await refreshVoices();
}

async function refreshVoices() {
  const data = await api("api/voices");
  const all = $("show-all").checked;
  const list = $("voices");
  list.replaceChildren();
  const shown = data.voices.filter((v) => all || v.editable);
  if (!shown.length) {
    const empty = document.createElement("li");
    empty.textContent = "No saved voices yet.";
    list.append(empty);
  }
  for (const voice of shown) list.append(voiceRow(voice));
}

function button(label, handler, cls = "secondary") {
  const b = document.createElement("button");
  b.type = "button"; b.textContent = label; b.className = cls;
  b.addEventListener("click", () => run("library-status", handler));
  return b;
}

function voiceRow(voice) {
  const row = document.createElement("li");
  row.dataset.voice = voice.name;
  const title = document.createElement("strong");
  title.textContent = voice.name;
  const meta = document.createElement("div");
  meta.className = "meta";
  meta.textContent = `${voice.kind}, ${voice.languages.join(", ")}: ${voice.description}`;
  const buttons = document.createElement("div");
  buttons.className = "buttons";
  buttons.append(button("Listen", () => listenVoice(voice)),
                 button("Export", () => exportVoice(voice)));
  // The household's voice per language: a request naming no voice in it speaks with this
  // one, and Home Assistant lists it first for that language.
  for (const language of voice.languages) {
    const name = languageName(language);
    if (voice.household_for.includes(language)) {
      const undo = button(`Stop using for ${name}`, () => unchooseVoice(language));
      undo.dataset.household = language;
      buttons.append(undo);
    } else {
      const use = button(`Use for ${name}`, () => chooseVoice(voice, language));
      use.dataset.use = language;
      buttons.append(use);
    }
  }
  if (voice.household_for.length) {
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.textContent = "Household voice for " + voice.household_for.map(languageName).join(", ");
    meta.append(" ", badge);
  }
  if (voice.editable) {
    buttons.append(button("Edit", () => editVoice(voice, row)),
                   button("Delete", () => deleteVoice(voice), "danger"));
  }
  row.append(title, meta, buttons);
  return row;
}

function languageName(tag) {
  const row = state.languages.find((l) => l.id === tag);
  return row ? row.name : tag;
}

async function chooseVoice(voice, language) {
  const data = await api(`api/languages/${encodeURIComponent(language)}/voice`,
                         { method: "PUT", json: { voice: voice.name } });
  await refreshVoices();
  say("library-status", `${voice.name} is now the household's voice for ` +
      `${languageName(data.language)}. ${data.note}`, "ok");
}

async function unchooseVoice(language) {
  const data = await api(`api/languages/${encodeURIComponent(language)}/voice`,
                         { method: "DELETE" });
  await refreshVoices();
  say("library-status", `No household voice for ${languageName(language)} any more. ` +
      data.note, "ok");
}

async function listenVoice(voice) {
  const row = state.languages.find((l) => l.id === voice.languages[0]);
  const response = await api("api/preview", { method: "POST", raw: true, json: {
    voice: voice.name, text: row ? row.sample : $("sample").value } });
  const player = $("player");
  if (player.src) URL.revokeObjectURL(player.src);
  player.src = URL.createObjectURL(await response.blob());
  player.dataset.voice = voice.name;
  player.play().catch(() => {});
  say("library-status", `Playing ${voice.name}.`, "ok");
}

async function exportVoice(voice) {
  const response = await api(`api/voices/${encodeURIComponent(voice.name)}/export`, { raw: true });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(await response.blob());
  link.download = `${voice.name}.omnivoice.json`;
  document.body.append(link);
  link.click();
  link.remove();
  say("library-status", `Exported ${voice.name}.`, "ok");
}

function editVoice(voice, row) {
  const form = $("edit-template").content.firstElementChild.cloneNode(true);
  form.elements.description.value = voice.description;
  form.elements.languages.value = voice.languages.join(", ");
  form.querySelector(".cancel").addEventListener("click", () => form.remove());
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run("library-status", async () => {
      const languages = form.elements.languages.value.split(/[,\s]+/).filter(Boolean);
      await api(`api/voices/${encodeURIComponent(voice.name)}`, { method: "PATCH", json: {
        description: form.elements.description.value, languages } });
      say("library-status", `Voice ${voice.name} updated.`, "ok");
      await refreshVoices();
    });
  });
  row.append(form);
  form.elements.description.focus();
}

async function deleteVoice(voice) {
  if (!window.confirm(`Delete the voice ${voice.name}? This cannot be undone ` +
                      "(export it first to keep a copy).")) return;
  await api(`api/voices/${encodeURIComponent(voice.name)}`, { method: "DELETE" });
  say("library-status", `Voice ${voice.name} deleted.`, "ok");
  await refreshVoices();
}

async function importVoice(event) {
  event.preventDefault();
  const file = $("import-file").files[0];
  if (!file) throw new Error("Choose a voice file first.");
  let document_;
  try { document_ = JSON.parse(await file.text()); } catch (_) {
    throw new Error("That file is not a voice file (not JSON).");
  }
  const rename = $("import-name").value.trim();
  const data = await api("api/voices/import" + (rename ? `?name=${encodeURIComponent(rename)}` : ""),
                         { method: "POST", json: document_ });
  say("import-status", `Voice ${data.voice.name} imported. ${data.note}`, "ok");
  await refreshVoices();
}

// ---- wiring --------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  $("language").addEventListener("change", languageChanged);
  $("sample").addEventListener("input", () => { state.sampleEdited = true; });
  $("speed").addEventListener("input", () => {
    $("speed-value").textContent = Number($("speed").value).toFixed(2);
    designChanged();
  });
  $("listen").addEventListener("click", () => run("design-status", async () => {
    const key = JSON.stringify(currentDesign());
    const last = [...state.takes].reverse().find((t) => t.designKey === key);
    if (last) {
      pickTake(last);
      (await preview(last)).play().catch(() => {});
      say("design-status", "Playing the picked take.", "ok");
    } else {
      await designTake(false);
    }
  }));
  $("another").addEventListener("click", () => run("design-status", () => designTake(true)));
  $("record").addEventListener("click", () => run("clone-status", toggleRecording));
  $("clone-file").addEventListener("change", () => { state.recording = null; });
  $("clone-listen").addEventListener("click", () => run("clone-status", cloneTake));
  $("save-form").addEventListener("submit", (event) => run("save-status", () => saveVoice(event)));
  $("import-form").addEventListener("submit", (event) => run("import-status", () => importVoice(event)));
  $("show-all").addEventListener("change", () => run("library-status", refreshVoices));
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    run("login-status", async () => {
      await api("api/login", { method: "POST", json: { token: $("token").value } });
      await start();
    });
  });
  start();
});
