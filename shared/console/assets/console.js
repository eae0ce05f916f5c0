// The console's own script (served under the CSP as a hashed asset): small enhancements only, every
// page works without it.
// "Copy" buttons: <button type="button" data-copy="#element-id">Copy</button> copies that element's text.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.querySelector(button.getAttribute('data-copy'));
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(() => {
    button.textContent = 'Copied';
  });
});

// ---- Workflow editor (p2-editor) ----
// The live check (htmx swaps #draft-check as you type) also tells the Definition field whether it is
// valid now: its aria-invalid follows the listed errors.
document.addEventListener('htmx:afterSwap', (event) => {
  const target = event.target;
  if (!(target instanceof Element) || target.id !== 'draft-check') return;
  const field = document.getElementById('wf-definition');
  if (!field) return;
  if (target.querySelector('ul.draft-errors')) field.setAttribute('aria-invalid', 'true');
  else field.removeAttribute('aria-invalid');
});
// ---- end of workflow editor ----
// --- API keys, members, account (a secret shown once) ---
// <button type="button" data-copy-value="#input-id">Copy</button> copies that input's value (a token
// or an initial password shown once, in a readonly input that can also be selected without script).
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy-value]') : null;
  if (!button) return;
  const source = document.querySelector(button.getAttribute('data-copy-value'));
  if (!(source instanceof HTMLInputElement)) return;
  source.select();
  const done = () => {
    button.textContent = 'Copied';
  };
  if (navigator.clipboard) navigator.clipboard.writeText(source.value).then(done, () => undefined);
});
// Webhooks: "Add row" (<button data-add-row="#tbody-id" hidden>) shows itself and appends a copy of the
// table's last row, emptied, with its ids and labels numbered on. Without script the form has empty rows.
for (const button of document.querySelectorAll('button[data-add-row]')) {
  const body = document.querySelector(button.getAttribute('data-add-row'));
  if (!body) continue;
  button.hidden = false;
  button.addEventListener('click', () => {
    const last = body.querySelector('tr:last-child');
    if (!last) return;
    const row = last.cloneNode(true);
    const n = body.querySelectorAll('tr').length;
    for (const small of row.querySelectorAll('small')) small.remove();
    for (const input of row.querySelectorAll('input')) {
      input.value = '';
      input.removeAttribute('aria-invalid');
      input.removeAttribute('aria-describedby');
      input.removeAttribute('autofocus');
      input.id = input.id.replace(/\d+$/, String(n));
    }
    for (const label of row.querySelectorAll('label')) {
      label.htmlFor = label.htmlFor.replace(/\d+$/, String(n));
      label.textContent = label.textContent.replace(/\d+$/, String(n + 1));
    }
    body.append(row);
    row.querySelector('input')?.focus();
  });
}
// End of webhooks.
// --- Schedules (p2-sched): the live preview of fire times answers 400 with the reasons when there
// are none; htmx swaps no 4xx by default, so the preview section takes that answer too.
document.addEventListener('htmx:beforeSwap', (event) => {
  const detail = event.detail;
  if (detail.xhr.status === 400 && detail.target instanceof Element && detail.target.id === 'schedule-preview') {
    detail.shouldSwap = true;
    detail.isError = false;
  }
});
// Forms that show the URL's state (the runs list's filters: data-url-state): a page brought back from
// the back-forward cache keeps what was chosen and not sent; put back what the server rendered (the URL's).
window.addEventListener('pageshow', (event) => {
  if (!event.persisted) return;
  for (const form of document.querySelectorAll('form[data-url-state]')) form.reset();
});
