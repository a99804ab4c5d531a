/* Behaviour shared by every page (no inline scripts, so a strict Content-Security-Policy can apply):
   the collapsible nav and drop-downs (Esc closes them), confirmations, forms sent once, keeping
   keyboard focus where it was across HTMX swaps, the first invalid field of a form sent back, live
   values next to range inputs, Enter-to-send in the chat, and copy buttons. */
(function () {
  "use strict";
  document.documentElement.classList.replace("no-js", "js");

  function announce(text) {
    const live = document.getElementById("live-status");
    if (!live || !text) return;
    live.textContent = "";
    window.setTimeout(() => { live.textContent = text; }, 30);
  }

  // --- Collapsible navigation (narrow screens) -------------------------------------------------
  document.addEventListener("click", (event) => {
    const toggle = event.target.closest(".nav-toggle");
    if (!toggle) return;
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    document.getElementById(toggle.getAttribute("aria-controls")).classList.toggle("open", open);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    // An open <details> drop-down (the graph's Types) closes first, and its summary keeps focus.
    const open = event.target.closest && event.target.closest("details[open]");
    if (open) {
      open.open = false;
      open.querySelector("summary").focus();
      return;
    }
    const toggle = document.querySelector(".nav-toggle[aria-expanded=true]");
    if (!toggle) return;
    toggle.setAttribute("aria-expanded", "false");
    document.getElementById(toggle.getAttribute("aria-controls")).classList.remove("open");
    toggle.focus();
  });

  // --- Confirmations: <form data-confirm="…"> (plain forms; HTMX forms use hx-confirm) -----------
  document.addEventListener("submit", (event) => {
    const form = event.target;
    const submitter = event.submitter;
    const message = (submitter && submitter.dataset.confirm) || form.dataset.confirm;
    if (message && !form.hasAttribute("hx-post") && !window.confirm(message)) event.preventDefault();
  }, true);

  // --- <button data-copy="#id" hidden>: copies that element's text (shown only where this script runs) ---
  // Where the clipboard is not offered (a plain-HTTP address other than localhost), the text is
  // selected instead, for Ctrl+C.
  document.querySelectorAll("button[data-copy][hidden]").forEach((button) => { button.hidden = false; });
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-copy]");
    const source = button && document.querySelector(button.dataset.copy);
    if (!source) return;
    const text = source.textContent.trim();
    const selectIt = () => {
      const range = document.createRange();
      range.selectNodeContents(source);
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
      button.textContent = "Selected: press Ctrl+C";
      announce("The token is selected: press Ctrl+C to copy it");
    };
    if (!navigator.clipboard || !window.isSecureContext) return selectIt();
    navigator.clipboard.writeText(text).then(() => {
      button.textContent = "Copied";
      announce("Copied");
    }, selectIt);
  });

  // --- <form data-send-once>: sent once; its submit buttons are disabled and say so ------------
  // (A long note takes a while to embed, and each press of Save would send it again.) The buttons are
  // disabled after this event, so the pressed one's name and value still go with the form; coming
  // back to the page from the history gives them back.
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (event.defaultPrevented || !form.hasAttribute("data-send-once")) return;
    if (form.dataset.sending) {
      event.preventDefault();
      return;
    }
    form.dataset.sending = "1";
    form.setAttribute("aria-busy", "true");
    window.setTimeout(() => {
      form.querySelectorAll("button[type=submit], button:not([type])").forEach((button) => {
        button.disabled = true;
        if (button.dataset.busyLabel) {
          button.dataset.idleLabel = button.textContent;
          button.textContent = button.dataset.busyLabel;
        }
      });
    }, 0);
  });
  window.addEventListener("pageshow", () => {
    document.querySelectorAll("form[data-sending]").forEach((form) => {
      delete form.dataset.sending;
      form.removeAttribute("aria-busy");
      form.querySelectorAll("button[disabled]").forEach((button) => {
        button.disabled = false;
        if (button.dataset.idleLabel) button.textContent = button.dataset.idleLabel;
      });
    });
  });

  // --- Range inputs show their value in the <output> named by data-output ----------------------
  document.addEventListener("input", (event) => {
    const input = event.target;
    if (!input.dataset || !input.dataset.output) return;
    const output = document.getElementById(input.dataset.output);
    if (output) output.value = Number(input.value).toFixed(2);
  });

  // --- Chat: Enter sends, Shift+Enter starts a new line ----------------------------------------
  document.addEventListener("keydown", (event) => {
    const box = event.target;
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || !box.matches("textarea[data-enter-sends]")) return;
    event.preventDefault();
    if (box.value.trim()) box.form.requestSubmit();
  });

  // --- Focus stays where the person was after an HTMX swap ------------------------------------
  // Before each request we note the focused element's id (and which [data-focus-group] it was in, with
  // its position there), keyed by that request. When its swap settles and focus was lost (it sat on an
  // element the swap replaced or removed), we focus the element with the same id; if it is gone (a
  // removed tag chip), its neighbour in the same group; else the swap target's [data-focus-fallback];
  // else the swapped element itself. If the person's focus is still on a live element (they moved on
  // while a background refresh was in flight), it is left alone. A status message ([data-announce] in
  // the new content) is read out.
  const remembered = new WeakMap();
  document.addEventListener("htmx:beforeRequest", (event) => {
    const xhr = event.detail && event.detail.xhr;
    const el = document.activeElement;
    if (!xhr || !el || el === document.body) return;
    const group = el.closest("[data-focus-group]");
    let index = -1;
    if (group) index = Array.from(group.querySelectorAll("[data-focus-item]")).indexOf(el);
    remembered.set(xhr, { id: el.id, group: group ? group.dataset.focusGroup : null, index });
  });
  document.addEventListener("htmx:afterSettle", (event) => {
    // After an outerHTML swap, detail.target is the element that was replaced (no longer in the page);
    // the event itself fires on the new content, which is where the status message and focus belong.
    const old = event.detail.target;
    const target = old && old.isConnected ? old : event.target instanceof Element && event.target.isConnected ? event.target : null;
    const message = target ? (target.matches("[data-announce]") ? target : target.querySelector("[data-announce]")) : null;
    if (message) announce(message.dataset.announce || message.textContent);
    const xhr = event.detail.xhr;
    const memory = xhr ? remembered.get(xhr) : null;
    if (!memory) return;
    remembered.delete(xhr);
    const active = document.activeElement;
    if (active && active !== document.body && active.isConnected) return;
    let next = memory.id ? document.getElementById(memory.id) : null;
    if (!next && memory.group) {
      const group = document.querySelector(`[data-focus-group="${CSS.escape(memory.group)}"]`);
      if (group) {
        const items = group.querySelectorAll("[data-focus-item]");
        next = items[Math.min(Math.max(memory.index, 0), items.length - 1)] || null;
      }
    }
    if (!next && target) {
      next = target.querySelector("[data-focus-fallback]");
      if (!next) { next = target; if (!next.hasAttribute("tabindex")) next.setAttribute("tabindex", "-1"); }
    }
    if (next) next.focus({ preventScroll: false });
  });

  // --- A chunk named in the address (#chunk-N) is highlighted and scrolled to ------------------
  function highlightChunk() {
    const match = /^#chunk-(\d+)$/.exec(window.location.hash);
    document.querySelectorAll(".chunk.highlight").forEach((el) => el.classList.remove("highlight"));
    if (!match) return;
    const chunk = document.getElementById(`chunk-${match[1]}`);
    if (!chunk) return;
    chunk.classList.add("highlight");
    if (!chunk.hasAttribute("tabindex")) chunk.setAttribute("tabindex", "-1");
    chunk.focus({ preventScroll: true });
    chunk.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", highlightChunk);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", highlightChunk);
  else highlightChunk();

  // --- A form sent back with errors (a full page, without HTMX): focus its first invalid field --
  function focusFirstInvalid() {
    const field = document.querySelector("main [aria-invalid=true]");
    if (field && (!document.activeElement || document.activeElement === document.body)) field.focus();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", focusFirstInvalid);
  else focusFirstInvalid();
})();

/* "All on this page" ticks every checkbox that belongs to the named form. */
document.addEventListener("change", (event) => {
  const all = event.target.closest("[data-select-all]");
  if (!all) return;
  document.querySelectorAll(`input[type=checkbox][form="${all.dataset.selectAll}"]`).forEach((box) => { box.checked = all.checked; });
});
