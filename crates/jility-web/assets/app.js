// jility's page script: live updates, forms without a page reload, drag-and-drop and
// keyboard moves on the board, tickable checklists. Every page works without it: it only
// sends the same forms the page already has, with the page's CSRF token.
"use strict";

(function () {
  const meta = (name) => {
    const el = document.querySelector(`meta[name="${name}"]`);
    return el ? el.getAttribute("content") : null;
  };
  const csrf = meta("csrf-token");
  const liveUrl = meta("live");
  const ORDER = ["backlog", "todo", "in_progress", "review", "done", "blocked"];

  // ---- Notices --------------------------------------------------------------------------
  function notice(kind, text, hint) {
    const box = document.getElementById("notice");
    if (!box) return;
    box.textContent = "";
    const div = document.createElement("div");
    div.className = `notice ${kind}`;
    div.setAttribute("role", kind === "error" ? "alert" : "status");
    const p = document.createElement("p");
    p.textContent = text;
    div.appendChild(p);
    if (hint) {
      const h = document.createElement("p");
      h.className = "hint";
      h.textContent = hint;
      div.appendChild(h);
    }
    box.appendChild(div);
  }

  // ---- Posting a form's fields ----------------------------------------------------------
  async function post(url, fields) {
    const body = new URLSearchParams();
    for (const [k, v] of fields) body.append(k, v);
    if (csrf && !body.has("_csrf")) body.append("_csrf", csrf);
    let response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: {
          Accept: "application/json",
          "Content-Type": "application/x-www-form-urlencoded",
          "X-CSRF-Token": csrf || "",
        },
        body,
        credentials: "same-origin",
      });
    } catch (e) {
      notice("error", "The server cannot be reached.", "Check your connection; nothing was changed.");
      return null;
    }
    let answer = null;
    try {
      answer = await response.json();
    } catch (e) {
      answer = null;
    }
    if (!response.ok || !answer || answer.error) {
      const err = (answer && answer.error) || {};
      notice("error", err.message || `The server answered ${response.status}.`, err.hint);
      return null;
    }
    return answer;
  }

  // ---- Reloading what the page shows ----------------------------------------------------
  let refreshing = false;
  let pending = false;
  function typing() {
    const el = document.activeElement;
    if (!el || !document.getElementById("main") || !document.getElementById("main").contains(el)) return false;
    const tag = el.tagName;
    return (tag === "TEXTAREA" || (tag === "INPUT" && el.type !== "checkbox")) && el.value !== "";
  }

  async function refresh(keepNotice) {
    if (refreshing) {
      pending = true;
      return;
    }
    if (typing()) {
      pending = true;
      return;
    }
    refreshing = true;
    try {
      const response = await fetch(location.href, {
        headers: { "X-Fragment": "main", Accept: "text/html" },
        credentials: "same-origin",
      });
      if (response.ok) {
        const html = await response.text();
        const main = document.getElementById("main");
        if (main) {
          const focused = document.activeElement;
          const focusKey = focused && focused.dataset ? focused.dataset.ticket : null;
          const noticeBox = document.getElementById("notice");
          const kept = keepNotice && noticeBox ? noticeBox.innerHTML : null;
          const template = document.createElement("template");
          template.innerHTML = html.trim();
          const fresh = template.content.firstElementChild;
          if (fresh) {
            main.replaceWith(fresh);
            if (kept !== null) {
              const box = document.getElementById("notice");
              if (box) box.innerHTML = kept;
            }
            if (focusKey) {
              const again = document.querySelector(`.card[data-ticket="${CSS.escape(focusKey)}"]`);
              if (again) again.focus();
            }
            document.body.dataset.refreshed = String(Date.now());
          }
        }
      }
    } catch (e) {
      /* the live indicator says when the server is gone */
    } finally {
      refreshing = false;
      if (pending) {
        pending = false;
        setTimeout(() => refresh(true), 50);
      }
    }
  }

  document.addEventListener("focusout", () => {
    if (pending && !refreshing) setTimeout(() => refresh(true), 50);
  });

  // ---- The header's inbox count ----------------------------------------------------------
  async function recount() {
    const link = document.getElementById("inbox-link");
    const count = document.getElementById("inbox-count");
    if (!link || !count) return;
    try {
      const response = await fetch(`${link.getAttribute("href")}/count`, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (!response.ok) return;
      const answer = await response.json();
      const unread = Number(answer.unread) || 0;
      const number = document.getElementById("inbox-number");
      if (number) number.textContent = String(unread);
      count.dataset.unread = String(unread);
      count.hidden = unread === 0;
    } catch (e) {
      /* the count stays as it was */
    }
  }

  // ---- Live updates ---------------------------------------------------------------------
  function live() {
    if (!liveUrl || !window.EventSource) return;
    const indicator = document.getElementById("live");
    const set = (state, text) => {
      if (!indicator) return;
      indicator.dataset.state = state;
      indicator.textContent = text;
    };
    let timer = null;
    const soon = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        refresh(true);
        recount();
      }, 60);
    };
    let first = true;
    const source = new EventSource(liveUrl);
    source.addEventListener("ready", () => {
      set("on", "Live");
      if (!first) soon(); // changes may have been missed while away
      first = false;
    });
    source.addEventListener("change", soon);
    source.addEventListener("reset", soon);
    source.onerror = () => set("off", "Reconnecting…");
  }

  // ---- Forms ----------------------------------------------------------------------------
  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    if ((form.getAttribute("method") || "get").toLowerCase() !== "post") return;
    if (form.hasAttribute("data-native")) return;
    event.preventDefault();
    const fields = Array.from(new FormData(form).entries()).map(([k, v]) => [k, String(v)]);
    const button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    const answer = await post(form.action, fields);
    if (button) button.disabled = false;
    if (!answer) return;
    if (answer.location) {
      const target = new URL(answer.location, location.href);
      // Another page, or (a form marked `data-go`, such as saving a view) another address.
      const go = form.hasAttribute("data-go") && target.href !== location.href;
      if (target.pathname !== location.pathname || go) {
        location.assign(target.href);
        return;
      }
    }
    form.reset();
    refresh(false);
    recount();
  });

  // ---- Board: drag-and-drop and keyboard moves ------------------------------------------
  const base = meta("base") || "";
  function ticketHref(number) {
    return `${base}/tickets/${encodeURIComponent(number)}`;
  }

  async function move(card, status) {
    if (!card || !status || card.dataset.status === status) return;
    const answer = await post(`${ticketHref(card.dataset.ticket)}/status`, [["status", status]]);
    if (answer) {
      notice("ok", `${card.dataset.ticket} moved to ${status.replace("_", " ")}.`);
      refresh(true);
    }
  }

  document.addEventListener("dragstart", (event) => {
    const card = event.target.closest && event.target.closest(".card[draggable=true]");
    if (!card) return;
    event.dataTransfer.setData("text/plain", card.dataset.ticket);
    event.dataTransfer.effectAllowed = "move";
    card.classList.add("dragging");
  });
  document.addEventListener("dragend", (event) => {
    const card = event.target.closest && event.target.closest(".card");
    if (card) card.classList.remove("dragging");
    document.querySelectorAll(".column.over").forEach((c) => c.classList.remove("over"));
  });
  document.addEventListener("dragover", (event) => {
    const column = event.target.closest && event.target.closest(".column");
    if (!column) return;
    event.preventDefault();
    column.classList.add("over");
  });
  document.addEventListener("dragleave", (event) => {
    const column = event.target.closest && event.target.closest(".column");
    if (column && !column.contains(event.relatedTarget)) column.classList.remove("over");
  });
  document.addEventListener("drop", (event) => {
    const column = event.target.closest && event.target.closest(".column");
    if (!column) return;
    event.preventDefault();
    column.classList.remove("over");
    const number = event.dataTransfer.getData("text/plain");
    const card = document.querySelector(`.card[data-ticket="${CSS.escape(number)}"]`);
    move(card, column.dataset.status);
  });

  document.addEventListener("keydown", (event) => {
    const card = event.target.closest && event.target.closest(".card");
    if (!card || event.target !== card) return;
    if (event.key === "Enter") {
      const link = card.querySelector("a.key");
      if (link) link.click();
      return;
    }
    if (event.key !== "[" && event.key !== "]") return;
    if (card.getAttribute("draggable") !== "true") return;
    event.preventDefault();
    const at = ORDER.indexOf(card.dataset.status);
    const to = ORDER[at + (event.key === "]" ? 1 : -1)];
    if (to) move(card, to);
  });

  // ---- Planning: drag a backlog ticket onto the sprint ----------------------------------
  document.addEventListener("dragstart", (event) => {
    const card = event.target.closest && event.target.closest(".plan-card[draggable=true]");
    if (!card) return;
    event.dataTransfer.setData("text/plain", card.dataset.ticket);
    event.dataTransfer.effectAllowed = "move";
  });
  document.addEventListener("dragover", (event) => {
    const zone = event.target.closest && event.target.closest(".plan-drop");
    if (!zone) return;
    event.preventDefault();
    zone.classList.add("over");
  });
  document.addEventListener("dragleave", (event) => {
    const zone = event.target.closest && event.target.closest(".plan-drop");
    if (zone && !zone.contains(event.relatedTarget)) zone.classList.remove("over");
  });
  document.addEventListener("drop", async (event) => {
    const zone = event.target.closest && event.target.closest(".plan-drop");
    if (!zone) return;
    event.preventDefault();
    zone.classList.remove("over");
    const number = event.dataTransfer.getData("text/plain");
    if (!number) return;
    const answer = await post(zone.dataset.addUrl, [["ticket", number]]);
    if (answer) {
      notice("ok", `${number} added${answer.over_capacity ? ": the sprint is over capacity" : "."}`);
      refresh(true);
    }
  });

  // ---- Checklists -----------------------------------------------------------------------
  document.addEventListener("change", async (event) => {
    const box = event.target;
    if (!(box instanceof HTMLInputElement) || !box.classList.contains("task") || box.dataset.task === undefined) return;
    const page = document.querySelector("[data-page=ticket]");
    if (!page) return;
    box.disabled = true;
    const answer = await post(`${ticketHref(page.dataset.ticket)}/tasks`, [
      ["task", box.dataset.task],
      ["done", box.checked ? "true" : "false"],
    ]);
    box.disabled = false;
    if (!answer) box.checked = !box.checked;
    else refresh(true);
  });

  // ---- Likely duplicates, as a new ticket's title is typed --------------------------------
  let duplicateTimer = null;
  let duplicateAsked = 0;
  async function showDuplicates(input) {
    const box = document.getElementById("n-duplicates");
    if (!box) return;
    // A word still being typed is left out (a tail such as "fa" matches nothing yet), unless
    // it is the only one.
    let title = input.value.trim();
    if (!/\s$/.test(input.value) && /\s/.test(title)) title = title.replace(/\s+\S*$/, '');
    const asked = ++duplicateAsked;
    if (title.length < 4) {
      box.textContent = "";
      return;
    }
    const url = new URL(input.dataset.related, location.href);
    url.searchParams.set("title", title);
    const description = document.getElementById("n-description");
    if (description && description.value.trim()) {
      url.searchParams.set("description", description.value.slice(0, 2000));
    }
    let answer = null;
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (response.ok) answer = await response.json();
    } catch (e) {
      answer = null;
    }
    // A later keystroke asked again: this answer is stale.
    if (asked !== duplicateAsked) return;
    box.textContent = "";
    const likely = ((answer && answer.related) || []).filter((t) => t.duplicate);
    if (likely.length === 0) return;
    const p = document.createElement("p");
    p.className = "hint";
    p.textContent = likely.length === 1 ? "This may duplicate a ticket:" : `This may duplicate ${likely.length} tickets:`;
    box.appendChild(p);
    const list = document.createElement("ul");
    for (const t of likely) {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = ticketHref(t.number);
      link.textContent = `${t.number} ${t.title}`;
      item.appendChild(link);
      const facts = document.createElement("span");
      facts.className = "facts";
      facts.textContent = ` ${t.status.replace("_", " ")} · score ${t.score.toFixed(2)}`;
      item.appendChild(facts);
      list.appendChild(item);
    }
    box.appendChild(list);
  }

  document.addEventListener("input", (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement) || input.id !== "n-title" || !input.dataset.related) return;
    clearTimeout(duplicateTimer);
    duplicateTimer = setTimeout(() => showDuplicates(input), 300);
  });

  live();
})();
