// Numbers, dates and charts for the dashboard. Every chart is a Chart.js canvas labelled for screen readers
// (role="img" and a summary in aria-label) with its data as a table beside it; without Chart.js (Debian's
// libjs-chart.js not installed) the tables alone are shown, open.
'use strict';

(function (HK) {
  /** Builds an element: `el('td', {class: 'x', dataset: {value: 1}}, 'text', child…)`. */
  function el(name, attributes, ...children) {
    const node = name === 'svg' || name === 'path' || name === 'circle' || name === 'title'
      ? document.createElementNS('http://www.w3.org/2000/svg', name)
      : document.createElement(name);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'dataset') Object.assign(node.dataset, value);
      else if (key === 'onclick') node.addEventListener('click', value);
      else if (key === 'onchange') node.addEventListener('change', value);
      else if (key === 'onsubmit') node.addEventListener('submit', value);
      else node.setAttribute(key, value === true ? '' : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  HK.el = el;

  const numberFormats = new Map();
  /** `value` in the browser's locale with at most `digits` decimals. */
  function number(value, digits = 0) {
    if (value === null || value === undefined || Number.isNaN(value)) return '–';
    if (!numberFormats.has(digits)) {
      numberFormats.set(digits, new Intl.NumberFormat(undefined, { maximumFractionDigits: digits }));
    }
    return numberFormats.get(digits).format(value);
  }

  /** Seconds as hours and minutes: `7 h 05 min`. */
  function duration(seconds) {
    if (seconds === null || seconds === undefined) return '–';
    const minutes = Math.round(seconds / 60);
    const hours = Math.floor(minutes / 60);
    const rest = String(minutes % 60).padStart(2, '0');
    return hours ? `${number(hours)} h ${rest} min` : `${minutes} min`;
  }

  const dateFormats = new Map();
  /** An instant (RFC 3339) as the session's time zone shows it, with Intl options `style`. */
  function instant(text, style) {
    const key = HK.session.tz + JSON.stringify(style);
    if (!dateFormats.has(key)) {
      dateFormats.set(key, new Intl.DateTimeFormat(undefined, { timeZone: HK.session.tz, ...style }));
    }
    return dateFormats.get(key).format(new Date(text));
  }

  /** A calendar date (`2026-11-29`) as the browser's locale writes it. */
  function calendarDate(text, style = { weekday: 'short', day: 'numeric', month: 'short' }) {
    const [year, month, day] = text.split('-').map(Number);
    return new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', ...style }).format(Date.UTC(year, month - 1, day));
  }

  HK.format = {
    number, duration, instant, calendarDate,
    day: (text) => instant(text, { weekday: 'short', day: 'numeric', month: 'short' }),
    hour: (text) => instant(text, { hour: 'numeric', minute: '2-digit' }),
    dateTime: (text) => instant(text, { day: 'numeric', month: 'short', hour: 'numeric', minute: '2-digit' }),
  };

  /** The chart colours of the current scheme (dashboard.css), in order. */
  function palette() {
    const style = getComputedStyle(document.documentElement);
    const colour = (name) => style.getPropertyValue(name).trim();
    return {
      series: ['--c1', '--c2', '--c3', '--c4', '--c5', '--c6'].map(colour),
      text: colour('--muted'),
      grid: colour('--grid'),
    };
  }

  HK.hasCharts = () => typeof window.Chart === 'function';

  /**
   * A chart with its table: `spec` has `title`, `summary` (what a screen reader hears), `kind` ('bar' or
   * 'line'), `labels` (one per row), `keys` (the rows' raw keys, e.g. bucket starts, kept as data-key),
   * `series` [{label, values, unit, digits, stack, colour}], and `stacked`, `tall`, `yTitle`, `name` (for the
   * table's data-series). Returns the figure element.
   */
  HK.chart = function (spec) {
    const figure = el('figure', { class: 'chart', dataset: { series: spec.name || '' } });
    const captionID = `cap-${Math.random().toString(36).slice(2)}`;
    figure.append(el('figcaption', { id: captionID }, spec.title));
    const table = dataTable(spec);
    if (HK.hasCharts()) {
      const canvas = el('canvas', { role: 'img', 'aria-label': `${spec.title}. ${spec.summary || ''}` });
      figure.append(el('div', { class: spec.tall ? 'plot tall' : 'plot' }, canvas));
      figure.append(el('details', {}, el('summary', {}, 'Table'), el('div', { class: 'table-wrap' }, table)));
      // Drawn once the figure is in the document (Chart.js measures its box).
      requestAnimationFrame(() => draw(canvas, spec));
    } else {
      figure.append(el('div', { class: 'table-wrap' }, table));
    }
    return figure;
  };

  function draw(canvas, spec) {
    if (!canvas.isConnected) return;
    const colours = palette();
    const stacked = Boolean(spec.stacked);
    const datasets = spec.series.map((series, index) => {
      const colour = series.colour || colours.series[index % colours.series.length];
      return {
        label: series.label,
        data: series.values,
        backgroundColor: spec.kind === 'line' ? colour : colour + 'cc',
        borderColor: colour,
        borderWidth: spec.kind === 'line' ? 2 : 0,
        pointRadius: spec.kind === 'line' && series.values.length > 60 ? 0 : 2,
        spanGaps: true,
        stack: stacked ? 'all' : series.stack,
        type: series.kind,
      };
    });
    const units = new Map(spec.series.map((series) => [series.label, series]));
    new window.Chart(canvas, {
      type: spec.kind || 'bar',
      data: { labels: spec.labels, datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { stacked, ticks: { color: colours.text, maxRotation: 0, autoSkip: true }, grid: { display: false } },
          y: {
            stacked,
            beginAtZero: spec.beginAtZero !== false,
            ticks: { color: colours.text, callback: (value) => number(value, 1) },
            grid: { color: colours.grid },
            title: spec.yTitle ? { display: true, text: spec.yTitle, color: colours.text } : undefined,
          },
        },
        plugins: {
          legend: { display: datasets.length > 1, labels: { color: colours.text, boxWidth: 12 } },
          tooltip: {
            callbacks: {
              label: (item) => {
                const series = units.get(item.dataset.label) || {};
                return `${item.dataset.label}: ${number(item.parsed.y, series.digits ?? 1)} ${series.unit || ''}`;
              },
            },
          },
        },
      },
    });
  }

  /** The chart's data as a table: a row per label, a column per series, raw values in data-value. */
  function dataTable(spec) {
    const head = el('tr', {}, el('th', { scope: 'col' }, spec.keyTitle || ''),
      spec.series.map((series) => el('th', { scope: 'col' }, series.unit ? `${series.label} (${series.unit})` : series.label)));
    const rows = spec.labels.map((label, row) => el('tr', { dataset: { key: spec.keys ? spec.keys[row] : label } },
      el('th', { scope: 'row' }, label),
      spec.series.map((series) => {
        const value = series.values[row];
        const shown = series.format ? series.format(value) : number(value, series.digits ?? 1);
        return el('td', { dataset: { value: value === null || value === undefined ? '' : value, label: series.label } }, shown);
      })));
    return el('table', {}, el('caption', { class: 'skip' }, spec.title), el('thead', {}, head), el('tbody', {}, rows));
  }

  /** An empty state: what is missing and how to bring it in. */
  HK.empty = function (what, hint) {
    return el('div', { class: 'empty' }, el('p', {}, what),
      el('p', {}, hint || 'Import an Apple Health export: ', hint ? null : el('code', {}, 'hkq import export.zip'),
        hint ? null : ' (the Health app: your picture › Export All Health Data), or add samples with ',
        hint ? null : el('code', {}, 'hkq insert FILE.csv'), hint ? null : '.'));
  };
})(window.HK);
