// Explorers that a keyboard and a screen reader can drive (shown once per explorer by attention_course.widgets; it
// runs once per page). For every element of class ac-explorer, now and later:
// - data-lm-suppress-shortcuts: JupyterLab (Lumino) leaves the keys pressed inside it alone, and the keys that move a
//   control go no further than the explorer, so plain arrow keys move a slider's handle and a drop-down's choice
//   instead of moving to the next cell;
// - every control is named after what it sets: a slider's handle by its label ("d_k"), announcing the value its
//   label shows (the readout, rounded as shown, or a choice slider's option, not its position); the editable readout
//   beside it is a text box "d_k, type a value"; the typing box of a choice is "d_k, or type a value";
// - a focus outline that shows on white (#1A1A1A: 17:1) on every control.
(() => {
  if (window.acExplorerA11y) return;
  window.acExplorerA11y = true;
  const STYLE = `
    .ac-explorer :is(input, select, textarea, button, .widget-readout, .noUi-handle):focus-visible,
    .ac-explorer :is(input, select, .widget-readout):focus {
      outline: 3px solid #1A1A1A !important; outline-offset: 1px !important;
    }`;
  const style = document.createElement('style');
  style.id = 'ac-explorer-a11y';
  style.textContent = STYLE;
  document.head.appendChild(style);

  const set = (element, name, value) => {
    if (element && value !== undefined && value !== null && element.getAttribute(name) !== String(value)) {
      element.setAttribute(name, value);
    }
  };
  const text = element => ((element || {}).textContent || '').trim();

  const fixSlider = slider => {
    const name = text(slider.querySelector('.widget-label')) || 'value';
    const handle = slider.querySelector('.noUi-handle');
    const readout = slider.querySelector('.widget-readout');
    const holder = slider.closest('.ac-typeable');
    const list = holder && holder.querySelector('.ac-labels');
    let shown;
    if (list && handle) {  // a choice slider: the option's label, not its position
      shown = JSON.parse(list.dataset.labels)[Math.round(Number(handle.getAttribute('aria-valuenow')))];
    } else if (readout && readout.offsetParent !== null) {
      shown = text(readout);  // what the readout shows, rounded as it shows it
    }
    if (handle) {
      set(handle, 'aria-label', name);
      if (shown !== undefined && shown !== '') set(handle, 'aria-valuetext', shown);
    }
    if (readout && readout.getAttribute('contenteditable') === 'true') {
      set(readout, 'role', 'textbox');
      set(readout, 'aria-label', `${name}, type a value`);
      set(readout, 'aria-multiline', 'false');
    }
  };

  const fixExplorer = explorer => {
    set(explorer, 'data-lm-suppress-shortcuts', 'true');
    explorer.querySelectorAll('.widget-slider').forEach(fixSlider);
    for (const holder of explorer.querySelectorAll('.ac-typeable')) {
      const name = text(holder.querySelector('.widget-label')) || 'value';
      set(holder.querySelector('.ac-type-entry input'), 'aria-label', `${name}, or type a value`);
    }
  };

  const MOVING_KEYS = new Set(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp',
                               'PageDown', ' ', 'Enter']);
  const watched = new WeakSet();
  const watch = explorer => {
    fixExplorer(explorer);
    if (watched.has(explorer)) return;
    watched.add(explorer);
    // the notebook's own key handler (bubbling, after the control's) would move focus away, e.g. ArrowDown on a
    // drop-down in the last cell to the "add a cell" footer, before the drop-down changes: keys that move a control
    // stop at the explorer
    explorer.addEventListener('keydown', event => {
      if (MOVING_KEYS.has(event.key)) event.stopPropagation();
    });
    new MutationObserver(() => fixExplorer(explorer)).observe(explorer, {
      subtree: true, childList: true, characterData: true, attributes: true,
      attributeFilter: ['aria-valuenow'],
    });
  };
  const scan = () => document.querySelectorAll('.ac-explorer').forEach(watch);
  new MutationObserver(scan).observe(document.body, {subtree: true, childList: true});
  scan();
})();
