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

// --- Schedules (p2-sched): the live preview of fire times answers 400 with the reasons when there
// are none; htmx swaps no 4xx by default, so the preview section takes that answer too.
document.addEventListener('htmx:beforeSwap', (event) => {
  const detail = event.detail;
  if (detail.xhr.status === 400 && detail.target instanceof Element && detail.target.id === 'schedule-preview') {
    detail.shouldSwap = true;
    detail.isError = false;
  }
});
