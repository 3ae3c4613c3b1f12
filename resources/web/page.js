// The page at GET /: tries the speech API through its public routes only (no inline code: the
// page's Content-Security-Policy forbids it). Plain JavaScript, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
const OPENAI_VOICES = ["alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova",
  "sage", "shimmer", "verse", "marin", "cedar"];
const SAMPLE_RATE = 24000; // ChatTTS's audio, as the API's pcm sends it
const POLL_MS = 2000;
const KEY_STORE = "chattts-studio-api-key";
const TUNABLE = ["speed", "temperature", "top_p", "top_k", "seed", "oral", "laugh", "break"];

let waiting = null; // the AbortController of the request in flight
let urls = []; // blob URLs of the last audio, revoked when the next one comes
let pollTimer = 0;

function keyHeaders() {
  const key = $("key").value.trim();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

// One sentence for any answer that is not a success: the API's own (OpenAI's error shape).
async function errorSentence(response) {
  if (response.status === 401) {
    return $("key").value.trim()
      ? "The server refused this API key: type the key it was started with."
      : "This server needs its API key: type it in the API key field.";
  }
  try {
    const body = await response.json();
    if (body && body.error && typeof body.error.message === "string") {
      return body.error.message;
    }
  } catch (ignored) {
    // not JSON: said below
  }
  return `The server answered ${response.status} ${response.statusText}.`.replace(" .", ".");
}

function showStatus(text) {
  $("status").textContent = text;
}

function showError(text) {
  const error = $("error");
  error.textContent = text;
  error.hidden = !text;
}

function fillVoices(names) {
  for (const id of ["voice", "voice2"]) {
    const select = $(id);
    const kept = select.value;
    select.replaceChildren(...names.map((voice) => {
      const option = document.createElement("option");
      option.value = voice.name;
      option.textContent = voice.note ? `${voice.name} (${voice.note})` : voice.name;
      return option;
    }));
    if (names.some((voice) => voice.name === kept)) {
      select.value = kept;
    }
  }
  if ($("voice2").selectedIndex === 0 && names.length > 1) {
    $("voice2").selectedIndex = 1; // a blend of two different voices by default
  }
}

async function loadVoices() {
  let names = OPENAI_VOICES.map((name) => ({ name, note: "OpenAI name" }));
  try {
    const response = await fetch("/v1/audio/voices", { headers: keyHeaders() });
    if (response.ok) {
      const listed = (await response.json()).voices || [];
      const known = new Set(listed.map((voice) => voice.name));
      names = [...listed, ...names.filter((voice) => !known.has(voice.name))];
    } else {
      showError(await errorSentence(response));
    }
  } catch (ignored) {
    showError("The server cannot be reached: is it still running?");
  }
  fillVoices(names);
  document.body.dataset.voices = "loaded";
}

function weightShown() {
  const first = Math.round(Number($("weight").value) * 100);
  $("weight-shown").textContent = `${first}% / ${100 - first}%`;
}

function shownControls() {
  $("blend-controls").hidden = !$("blend").checked;
  $("levels").disabled = !$("refine_text").checked; // the levels are read by refine only
}

function voiceSpec() {
  const first = $("voice").value;
  if (!$("blend").checked) {
    return first;
  }
  const weight = Number($("weight").value);
  const share = (w) => String(Math.round(w * 100) / 100);
  return `${first}*${share(weight)}+${$("voice2").value}*${share(1 - weight)}`;
}

// The request's body: sampling fields only when the user changed them from the page's default,
// so the server's own settings apply otherwise.
function speechBody() {
  const body = {
    model: "chattts",
    input: $("text").value,
    voice: voiceSpec(),
    response_format: $("format").value,
  };
  for (const id of TUNABLE) {
    const field = $(id);
    if (!field.matches(":disabled") && field.value !== field.defaultValue && field.value.trim() !== "") {
      body[id] = Number(field.value);
    }
  }
  if ($("refine_text").checked) {
    body.refine_text = true;
  }
  return body;
}

// Raw 16-bit PCM has no header a browser can play: wrapped as WAV for the player only.
function wavOf(pcm) {
  const header = new DataView(new ArrayBuffer(44));
  const text = (at, s) => [...s].forEach((c, i) => header.setUint8(at + i, c.charCodeAt(0)));
  text(0, "RIFF");
  header.setUint32(4, 36 + pcm.size, true);
  text(8, "WAVE");
  text(12, "fmt ");
  header.setUint32(16, 16, true);
  header.setUint16(20, 1, true); // integer PCM
  header.setUint16(22, 1, true); // mono
  header.setUint32(24, SAMPLE_RATE, true);
  header.setUint32(28, SAMPLE_RATE * 2, true);
  header.setUint16(32, 2, true);
  header.setUint16(34, 16, true);
  text(36, "data");
  header.setUint32(40, pcm.size, true);
  return new Blob([header, pcm], { type: "audio/wav" });
}

function setWaiting(controller) {
  waiting = controller;
  $("synthesize").disabled = Boolean(controller);
  $("cancel").disabled = !controller;
  $("speak").setAttribute("aria-busy", controller ? "true" : "false");
}

function showAudio(blob, format) {
  const file = URL.createObjectURL(blob);
  const playableUrl = format === "pcm" ? URL.createObjectURL(wavOf(blob)) : file;
  const player = $("player");
  player.dataset.state = "loaded";
  player.src = playableUrl;
  urls.forEach((url) => URL.revokeObjectURL(url)); // the last audio's, once nothing shows it
  urls = playableUrl === file ? [file] : [file, playableUrl];
  const link = $("download");
  link.href = file;
  link.download = `speech.${format}`;
  link.textContent = `Download speech.${format} (${Math.ceil(blob.size / 1024)} KiB)`;
  link.hidden = false;
  player.play().catch(() => showStatus("Ready: press play to listen."));
}

async function synthesize(event) {
  event.preventDefault();
  if (waiting) {
    return;
  }
  const controller = new AbortController();
  const body = speechBody();
  setWaiting(controller);
  showError("");
  showStatus("Synthesizing…");
  try {
    const response = await fetch("/v1/audio/speech", {
      method: "POST",
      headers: { "Content-Type": "application/json", ...keyHeaders() },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok) {
      showStatus("");
      showError(await errorSentence(response));
      return;
    }
    const blob = await response.blob();
    showStatus(`Ready: ${Math.ceil(blob.size / 1024)} KiB of ${body.response_format}.`);
    showAudio(blob, body.response_format);
  } catch (error) {
    if (error.name === "AbortError") {
      showStatus("Cancelled.");
    } else {
      showStatus("");
      showError("The server cannot be reached: is it still running?");
    }
  } finally {
    setWaiting(null);
  }
}

// Prometheus's text format: { name: value } for the samples without labels.
function metricValues(text) {
  const values = {};
  for (const line of text.split("\n")) {
    const match = /^(chattts_\w+)\s+(\S+)$/.exec(line);
    if (match) {
      values[match[1]] = Number(match[2]);
    }
  }
  return values;
}

function showHealth(health) {
  $("model-name").textContent = health.device ? `${health.model} on ${health.device}` : health.model;
  const warning = $("model-warning");
  // Random-init weights (the demo model) make noise, never speech: said where it is heard.
  warning.hidden = health.random_weights !== true;
  warning.textContent = warning.hidden ? "" : "Random weights: noise, not speech.";
  $("fig-queue").textContent = String(health.queue);
  $("fig-active").textContent = String(health.active);
}

async function poll() {
  pollTimer = 0;
  try {
    const health = await fetch("/health");
    if (health.ok) {
      showHealth(await health.json());
    }
    const metrics = await fetch("/metrics", { headers: keyHeaders() });
    if (metrics.ok) {
      const v = metricValues(await metrics.text());
      $("fig-rows").textContent = `${v.chattts_rows_busy} of ${v.chattts_rows}`;
      $("fig-steps").textContent = String(v.chattts_decode_steps_total);
      $("fig-audio").textContent = `${(v.chattts_audio_seconds_total || 0).toFixed(1)} s`;
      $("figures-note").textContent = "";
    } else {
      $("figures-note").textContent = "The decoder's figures need the API key.";
    }
  } catch (ignored) {
    $("figures-note").textContent = "The server cannot be reached.";
  }
  if (!document.hidden) {
    pollTimer = window.setTimeout(poll, POLL_MS);
  }
}

// Polling stops while the tab is hidden and starts again, at once, when it is shown.
function visibilityChanged() {
  if (document.hidden) {
    window.clearTimeout(pollTimer);
    pollTimer = 0;
  } else if (!pollTimer) {
    poll();
  }
}

function keyChanged() {
  const key = $("key").value.trim();
  if (key) {
    sessionStorage.setItem(KEY_STORE, key);
  } else {
    sessionStorage.removeItem(KEY_STORE);
  }
}

function start() {
  $("key").value = sessionStorage.getItem(KEY_STORE) || "";
  $("key").addEventListener("input", keyChanged);
  $("key").addEventListener("change", () => {
    showError("");
    loadVoices();
  });
  $("text").addEventListener("input", () => {
    const count = $("text").value.length;
    $("count").textContent = `${count} character${count === 1 ? "" : "s"}`;
  });
  $("blend").addEventListener("change", shownControls);
  $("refine_text").addEventListener("change", shownControls);
  $("weight").addEventListener("input", weightShown);
  $("speak").addEventListener("submit", synthesize);
  $("cancel").addEventListener("click", () => waiting && waiting.abort());
  const player = $("player");
  player.addEventListener("playing", () => { player.dataset.state = "playing"; });
  player.addEventListener("ended", () => {
    player.dataset.state = "ended";
    showStatus("Played to the end.");
  });
  player.addEventListener("error", () => {
    player.dataset.state = "error";
    showError("The browser cannot play this audio; try another format or download it.");
  });
  document.addEventListener("visibilitychange", visibilityChanged);
  shownControls(); // a reload may have kept the boxes ticked
  weightShown();
  loadVoices();
  poll();
}

start();
