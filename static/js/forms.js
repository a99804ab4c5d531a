// Small form behaviours the pages' Content-Security-Policy allows (no inline event handlers):
// - a form with data-confirm asks before it submits;
// - a range input with data-show-value writes its value, to two decimals, into the <output> after it.
document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
    event.stopImmediatePropagation();
  }
}, true);

document.addEventListener("input", (event) => {
  const input = event.target;
  if (input.matches && input.matches("input[type=range][data-show-value]")) {
    const output = input.nextElementSibling;
    if (output && output.tagName === "OUTPUT") output.value = Number(input.value).toFixed(2);
  }
});
