(explorer, focusable) => {
  const text = e => ((e || {}).textContent || '').trim();
  return Array.from(explorer.querySelectorAll(focusable)).filter(c => c.offsetParent !== null).map(c => {
    const slider = c.closest('.widget-slider'), holder = c.closest('.ac-typeable');
    const widget = holder || slider || c.closest('.widget-inline-hbox') || c.parentElement;
    const kind = c.classList.contains('noUi-handle') ? 'handle' : c.classList.contains('widget-readout') ? 'readout'
      : c.tagName === 'SELECT' ? 'select' : holder ? 'entry' : 'text';
    const labelFor = c.id ? document.querySelector(`label[for="${c.id}"]`) : null;
    const readout = slider && slider.querySelector('.widget-readout');
    const entry = holder && holder.querySelector('.ac-type-entry input');
    const labels = holder && holder.querySelector('.ac-labels');
    return {
      kind, label: text(widget.querySelector('.widget-label')),
      role: c.getAttribute('role') || {SELECT: 'combobox', INPUT: 'textbox', TEXTAREA: 'textbox'}[c.tagName] || '',
      name: c.getAttribute('aria-label') || text(labelFor), says: c.getAttribute('aria-valuetext'),
      shows: kind !== 'handle' ? null : entry ? entry.value : readout && readout.offsetParent ? text(readout) : null,
      value: c.tagName === 'SELECT' ? text(c.options[c.selectedIndex]) : c.value !== undefined ? c.value : text(c),
      at_end: kind === 'handle' ? c.getAttribute('aria-valuenow') === c.getAttribute('aria-valuemax')
        : kind === 'select' ? c.selectedIndex === c.options.length - 1 : false,
      options: labels ? JSON.parse(labels.dataset.labels)
        : c.tagName === 'SELECT' ? Array.from(c.options).map(text) : null,
      track: slider ? slider.querySelector('.noUi-base').getBoundingClientRect().width : null,
    };
  });
}
