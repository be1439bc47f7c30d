// The richdoc console's pages: live updates from each page's JSON twin, the drop zone,
// the document view's selection. Served by the console itself (no CDN, no framework), and
// loaded as a file: the Content-Security-Policy allows no inline script. Text from the
// server is only ever set as textContent, never parsed as HTML.
"use strict";

(function () {
  const csrfToken = document.querySelector('meta[name="csrf-token"]').content;
  const page = document.body.dataset.page;

  function el(tag, attributes, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value !== null && value !== undefined) element.setAttribute(name, String(value));
    }
    for (const child of children) {
      element.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return element;
  }

  function dash(value) {
    return value === null || value === undefined || value === "" ? "-" : String(value);
  }

  function statusBadge(status) {
    return el("span", { class: "status status-" + String(status).toLowerCase() }, status);
  }

  // Polls the page's JSON twin while `apply` says the page is live: every second while
  // something changes, backing off to 15 s while nothing does; stops at terminal states.
  function poller(apply) {
    const twin = document.body.dataset.twin;
    const state = document.getElementById("live-state");
    let interval = 1000;
    let last = null;
    let timer = null;
    let running = false;

    function show(text) {
      if (state) state.textContent = text;
    }

    async function tick() {
      timer = null;
      let text;
      try {
        const response = await fetch(twin, {
          headers: { Accept: "application/json" },
          credentials: "same-origin",
          cache: "no-store",
        });
        if (!response.ok) throw new Error("HTTP " + response.status);
        text = await response.text();
      } catch (error) {
        show("updates paused: " + error.message);
        interval = Math.min(interval * 2, 30000);
        timer = setTimeout(tick, interval);
        return;
      }
      const changed = text !== last;
      last = text;
      const live = apply(JSON.parse(text), changed);
      if (!live) {
        running = false;
        show("up to date; nothing is running");
        return;
      }
      interval = changed ? 1000 : Math.min(interval * 1.5, 15000);
      show("live");
      timer = setTimeout(tick, interval);
    }

    return {
      start() {
        interval = 1000;
        if (timer !== null) clearTimeout(timer);
        running = true;
        show("live");
        timer = setTimeout(tick, 0);
      },
      get running() {
        return running;
      },
    };
  }

  // ---- jobs -----------------------------------------------------------------------------

  // A job as the twins carry it: its record as `richdoc jobs show --json` prints it, with
  // terminal, progress_text and url.
  function jobRow(job) {
    const failure = job.failure
      ? job.failure.kind + (job.failure.feature ? " [" + job.failure.feature + "]" : "")
      : "-";
    const phase = el("td", { class: "phase" }, job.progress_text + " ");
    const progress = job.progress;
    if (progress.phase === "parsing_shards" && progress.shards) {
      phase.append(
        el(
          "progress",
          {
            max: progress.shards,
            value: progress.shards_done,
            title: progress.pages_done + " pages done",
          },
          progress.shards_done + "/" + progress.shards,
        ),
      );
    }
    return el(
      "tr",
      { "data-job-id": job.job_id, "data-status": job.status },
      el("td", { class: "key" }, el("a", { href: job.url }, job.source.key)),
      el("td", { class: "id" }, el("code", {}, job.job_id.slice(0, 12))),
      el("td", {}, statusBadge(job.status)),
      phase,
      el("td", {}, failure),
      el("td", {}, job.run),
      el("td", {}, dash(job.tier)),
      el("td", { class: "time" }, dash(job.updated_at)),
    );
  }

  function setCount(id, count, text) {
    const badge = document.getElementById(id);
    if (!badge) return;
    badge.dataset.count = String(count);
    badge.textContent = text;
  }

  // 95 -> "1m35s", as the server writes durations.
  function duration(seconds) {
    if (seconds === null || seconds === undefined) return "-";
    const whole = Math.floor(seconds);
    const pad = (n) => String(n).padStart(2, "0");
    if (whole < 60) return whole + "s";
    if (whole < 3600) return Math.floor(whole / 60) + "m" + pad(whole % 60) + "s";
    if (whole < 86400) return Math.floor(whole / 3600) + "h" + pad(Math.floor((whole % 3600) / 60)) + "m";
    return Math.floor(whole / 86400) + "d" + pad(Math.floor((whole % 86400) / 3600)) + "h";
  }

  function backlogSummary(b) {
    if (b.capacity === null) return "This stack predates admission: every upload runs at once.";
    let text = b.slots_held + " of " + b.capacity + " slots held";
    if (b.per_tenant !== b.capacity) text += " (" + b.per_tenant + " a tenant)";
    text += "; " + b.waiting + " job" + (b.waiting === 1 ? "" : "s") + " waiting. ";
    const d = b.drain;
    if (d.median_cycle_s === null) {
      text += "No slot cycle in the last " + duration(d.window_s) + " to measure the throughput on yet.";
    } else {
      text +=
        "Throughput " + d.throughput_per_hour + " documents an hour (" + d.slots +
        " slots, each turned over every " + d.median_cycle_s + " s: the median of " + d.cycles +
        " slot cycles in the last " + duration(d.window_s) + ").";
    }
    if (d.drain_s === 0) return text + " Nothing waits.";
    if (d.drain_s === null) return text + " When the backlog drains is not known yet.";
    return text + " The backlog drains in about " + duration(d.drain_s) + ".";
  }

  function applyBacklog(b) {
    const summary = document.getElementById("backlog-summary");
    const body = document.getElementById("backlog-body");
    if (!summary || !body) return;
    summary.textContent = backlogSummary(b);
    const rows = b.tenants.map(function (t) {
      return el(
        "tr",
        {},
        el("td", { class: "key" }, t.tenant),
        el("td", {}, t.queue),
        el("td", {}, t.waiting),
        el("td", {}, duration(t.oldest_waiting_s)),
        el("td", {}, t.slots),
      );
    });
    if (!rows.length) rows.push(el("tr", { class: "empty" }, el("td", { colspan: 5 }, "Nothing waits.")));
    body.replaceChildren(...rows);
  }

  function initJobs() {
    const body = document.getElementById("jobs-body");
    // Uploads whose job the starter has not recorded yet: the list is live until they show.
    const pending = new Set();
    const live = poller(function (data, changed) {
      setCount("active-count", data.active, data.active + " active");
      setCount(
        "failures-count",
        data.failures_since_last_look,
        data.failures_since_last_look + " failed since your last look",
      );
      if (changed && data.jobs.length) body.replaceChildren(...data.jobs.map(jobRow));
      if (changed) applyBacklog(data.backlog);
      for (const job of data.jobs) pending.delete(job.job_id);
      return data.live || pending.size > 0;
    });
    if (document.body.dataset.live === "yes") live.start();
    initDropZone(function (uploads) {
      for (const upload of uploads) pending.add(upload.job_id);
      live.start();
    });
  }

  function initDropZone(uploaded) {
    const zone = document.getElementById("drop-zone");
    const input = document.getElementById("file-input");
    const clarify = document.getElementById("clarify");
    const list = document.getElementById("uploads");

    async function upload(files) {
      if (!files.length) return;
      const form = new FormData();
      for (const file of files) form.append("files", file, file.name);
      if (clarify.checked) form.append("clarify", "on");
      const pending = el("li", {}, "uploading " + files.length + " file(s) …");
      list.append(pending);
      try {
        const response = await fetch(zone.action, {
          method: "POST",
          body: form,
          headers: { Accept: "application/json", "X-CSRF-Token": csrfToken },
          credentials: "same-origin",
        });
        const data = await response.json();
        if (!response.ok) throw new Error(data.message || "HTTP " + response.status);
        pending.replaceWith(
          ...data.uploads.map((u) =>
            el(
              "li",
              { "data-job-id": u.job_id },
              "uploaded ",
              el("a", { href: u.url }, u.key),
              " (job " + u.job_id.slice(0, 12) + ")",
            ),
          ),
        );
        uploaded(data.uploads);
      } catch (error) {
        pending.textContent = "upload failed: " + error.message;
      }
    }

    zone.addEventListener("submit", function (event) {
      event.preventDefault();
      upload(Array.from(input.files));
      input.value = "";
    });
    input.addEventListener("change", function () {
      upload(Array.from(input.files));
      input.value = "";
    });
    zone.addEventListener("dragover", function (event) {
      event.preventDefault();
      zone.classList.add("dragging");
    });
    zone.addEventListener("dragleave", function () {
      zone.classList.remove("dragging");
    });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      zone.classList.remove("dragging");
      upload(Array.from(event.dataTransfer.files));
    });
  }

  // ---- one job --------------------------------------------------------------------------

  function attemptRow(a) {
    return el(
      "tr",
      { "data-outcome": a.outcome },
      ...[a.run, a.seq, a.stage, a.attempt, dash(a.pages), dash(a.tier), dash(a.memory_mb),
        dash(a.duration_ms)].map((v) => el("td", {}, v)),
      el("td", { class: "outcome" }, a.outcome),
      el("td", {}, dash(a.kind)),
      el("td", { class: "reason" }, dash(a.reason)),
      el("td", { class: "time" }, a.started_at),
    );
  }

  function shardRow(s) {
    return el(
      "tr",
      { "data-status": s.status },
      el("td", {}, s.run),
      el("td", {}, s.pages),
      el("td", { class: "shard-" + s.status }, s.status),
      el("td", {}, s.attempts),
      el("td", {}, dash(s.tier)),
      el("td", {}, s.outcome),
      el("td", {}, dash(s.cached)),
    );
  }

  function applyStates(states, taken) {
    for (const group of document.querySelectorAll("#statechart [data-state]")) {
      const run = states[group.dataset.state];
      if (!run) continue;
      group.dataset.status = run.status;
    }
    for (const badge of document.querySelectorAll("#statechart [data-retries-of]")) {
      const run = states[badge.dataset.retriesOf];
      badge.textContent = run && run.retries ? "↻" + run.retries : "";
    }
    const takenKeys = new Set(taken.map((pair) => pair[0] + "→" + pair[1]));
    for (const edge of document.querySelectorAll("#statechart .edge")) {
      const key = edge.dataset.source + "→" + edge.dataset.target;
      edge.classList.toggle("taken", takenKeys.has(key));
    }
    for (const detail of document.querySelectorAll(".state-detail")) {
      const run = states[detail.dataset.state];
      if (!run) continue;
      const status = detail.querySelector(".state-status");
      status.dataset.status = run.status;
      status.textContent = run.status;
      detail.querySelector(".entered").textContent = run.entered;
      detail.querySelector(".retries-count").textContent = run.retries;
      const error = detail.querySelector(".state-error");
      error.hidden = !run.error;
      error.querySelector(".error").textContent = run.error || "";
      error.querySelector(".cause").textContent = run.cause || "";
      detail.querySelector(".state-input").textContent = run.input || "-";
      detail.querySelector(".state-output").textContent = run.output || "-";
    }
  }

  // Cancel and Redrive are offered as the job's status allows, as it changes.
  function applyActions(actions) {
    for (const action of actions) {
      for (const control of document.querySelectorAll(
        'form[data-action="' + action.name + '"] button, form[data-action="' + action.name + '"] input[name="reason"]',
      )) {
        control.disabled = !action.available;
        if (control.tagName === "BUTTON") control.title = action.why || "";
      }
    }
  }

  function initJob() {
    const live = poller(function (data, changed) {
      if (changed) {
        document.getElementById("job-status").replaceChildren(statusBadge(data.job.status));
        document.getElementById("phase").textContent = data.job.progress_text;
        applyActions(data.actions);
        applyStates(data.states, data.transitions_taken);
        document.getElementById("attempts-body").replaceChildren(...data.attempts.map(attemptRow));
        document.getElementById("shards-body").replaceChildren(...data.shards.map(shardRow));
        document.getElementById("shards").hidden = data.shards.length === 0;
        document.getElementById("downloads").replaceChildren(
          ...data.downloads.map((d) => el("li", {}, el("a", { href: d.url, download: "" }, d.name))),
        );
        if (data.document_url && !document.getElementById("document-link")) {
          document.querySelector(".actions").append(
            el("a", { class: "button", href: data.document_url, id: "document-link" },
              "Document and graph"),
          );
        }
      }
      const execution = data.execution;
      const executionOpen = execution && (execution.status === null || execution.status === "RUNNING");
      // After a redrive the page stays live until the next run has started and ended.
      const awaited = Number(document.body.dataset.awaitRun || 0);
      return !data.job.terminal || executionOpen || data.job.run < awaited;
    });
    if (document.body.dataset.live === "yes") live.start();
  }

  // ---- choosing a state or a node --------------------------------------------------------

  // A state of the graph, or a node of the document, is chosen by a link to its details
  // (#state-NAME, #node-ID): without scripts, CSS :target shows them; with scripts, the
  // choice is marked here and the window does not jump to the details.
  function chooser(prefix, choose) {
    document.documentElement.classList.add("scripted");
    document.addEventListener("click", function (event) {
      const link = event.target.closest("a[href^='#" + prefix + "']");
      if (!link) return;
      event.preventDefault();
      const hash = link.getAttribute("href");
      history.replaceState(null, "", hash);
      choose(decodeURIComponent(hash.slice(prefix.length + 1)));
    });
    const hash = window.location.hash;
    if (hash.startsWith("#" + prefix)) choose(decodeURIComponent(hash.slice(prefix.length + 1)));
  }

  function unchoose() {
    for (const chosen of document.querySelectorAll(".chosen")) chosen.classList.remove("chosen");
  }

  function initStates() {
    chooser("state-", function (name) {
      unchoose();
      for (const item of document.querySelectorAll(".state-detail, #statechart [data-state]")) {
        if (item.dataset.state === name) item.classList.add("chosen");
      }
    });
  }

  // ---- the document ---------------------------------------------------------------------

  function initDocument() {
    const canonical = document.getElementById("canonical");
    chooser("node-", function (id) {
      unchoose();
      for (const item of document.querySelectorAll('[data-node-id="' + id + '"]')) {
        item.classList.add("chosen");
      }
      const segment = canonical.querySelector('[data-node-id="' + id + '"]');
      // Scroll the text to the span, not the window to the text.
      if (segment) canonical.scrollTop = segment.offsetTop - 24;
    });
    canonical.addEventListener("click", function (event) {
      const segment = event.target.closest("[data-node-id]");
      if (segment) {
        const link = document.querySelector('a[href="#node-' + segment.dataset.nodeId + '"]');
        if (link) link.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
      }
    });
  }

  if (page === "jobs") initJobs();
  if (page === "job") {
    initJob();
    initStates();
  }
  if (page === "document") initDocument();
})();
