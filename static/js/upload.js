// Drag-and-drop uploads: one request per file, so each file has its own progress bar and result line.
(function () {
  "use strict";
  const form = document.getElementById("upload-form");
  if (!form) return;
  const zone = document.getElementById("dropzone");
  const input = form.querySelector("input[type=file]");
  const tags = form.querySelector("input[name=tags]");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const list = document.getElementById("upload-list");
  const PARALLEL = 3;
  let queue = [];
  let active = 0;

  function formatSize(bytes) {
    if (bytes < 1024) return bytes + " B";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KB";
    return (bytes / (1024 * 1024)).toFixed(1) + " MB";
  }

  function addRow(file) {
    const row = document.createElement("li");
    row.className = "upload-row status-uploading";
    row.dataset.status = "uploading";
    const name = document.createElement("span");
    name.className = "upload-name";
    name.textContent = file.name;
    const size = document.createElement("span");
    size.className = "small subtle";
    size.textContent = formatSize(file.size);
    const bar = document.createElement("progress");
    bar.max = 100;
    bar.value = 0;
    row.append(name, size, bar);
    list.prepend(row);
    return { row, bar };
  }

  function fail(row, message) {
    row.className = "upload-row status-rejected";
    row.dataset.status = "rejected";
    row.querySelector("progress")?.remove();
    const status = document.createElement("span");
    status.className = "upload-status bad";
    status.textContent = "failed";
    const error = document.createElement("span");
    error.className = "upload-error";
    error.textContent = message;
    row.append(status, error);
  }

  function send(file) {
    const { row, bar } = addRow(file);
    const data = new FormData();
    data.append("files", file, file.name);
    data.append("tags", tags ? tags.value : "");
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("X-CSRFToken", csrf);
    xhr.setRequestHeader("HX-Request", "true");
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) bar.value = Math.round((event.loaded / event.total) * 100);
    });
    xhr.addEventListener("load", () => {
      const holder = document.createElement("div");
      holder.innerHTML = xhr.responseText;
      const result = holder.querySelector(".upload-row");
      const alert = holder.querySelector(".alert");
      if (result) {
        row.replaceWith(result);
        if (window.htmx) window.htmx.process(result);
      } else {
        fail(row, alert ? alert.textContent.trim() : "The server answered " + xhr.status + ".");
      }
      done();
    });
    xhr.addEventListener("error", () => { fail(row, "The upload was interrupted."); done(); });
    xhr.send(data);
  }

  function done() {
    active -= 1;
    pump();
  }

  function pump() {
    while (active < PARALLEL && queue.length) {
      active += 1;
      send(queue.shift());
    }
  }

  function enqueue(files) {
    queue = queue.concat(Array.from(files));
    pump();
  }

  ["dragenter", "dragover"].forEach((type) => zone.addEventListener(type, (event) => {
    event.preventDefault();
    zone.classList.add("dragging");
  }));
  ["dragleave", "drop"].forEach((type) => zone.addEventListener(type, (event) => {
    event.preventDefault();
    zone.classList.remove("dragging");
  }));
  zone.addEventListener("drop", (event) => {
    if (event.dataTransfer && event.dataTransfer.files.length) enqueue(event.dataTransfer.files);
  });
  input.addEventListener("change", () => {
    if (input.files.length) enqueue(input.files);
    input.value = "";
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.files.length) enqueue(input.files);
  });
  form.classList.add("js-enabled");
})();
